"""Calls the whole contract's new Vehicle lookups with Python zeep (strict, the default), built
from our ?WSDL: a reg.asmx country over SOAP 1.1 and the bespoke variants over SOAP 1.2.

Usage: zeep_vehicle_operations.py BASE_URL USERNAME SCENARIO_JSON
Prints one JSON document with what the client read, so the Node test can assert on it.
"""
import json
import sys

from zeep import Client
from zeep.exceptions import Fault


def vehicle(result):
    return {"vehicleJson": json.loads(result.vehicleJson), "carMake": result.vehicleData.CarMake.CurrentTextValue}


def main() -> None:
    base, username, scenario = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    out = {}
    reg = Client(f"{base}/api/reg.asmx?WSDL")
    bespoke12 = Client(f"{base}/api/bespokeapi.asmx?wsdl").bind("BespokeAPI", "BespokeAPISoap12")

    out["switzerland"] = vehicle(reg.service.CheckSwitzerland(RegistrationNumber=scenario["swissPlate"], username=username))
    out["edBolian"] = vehicle(bespoke12.CheckUSAEdBolian(RegistrationNumber=scenario["usaPlate"], State=scenario["usaState"], username=username))
    out["ukMinimal"] = vehicle(bespoke12.CheckUKMinimal(regNumber=scenario["ukPlate"], username=username))
    out["bespokeFrance"] = vehicle(bespoke12.CheckFrance(RegistrationNumber=scenario["francePlate"], username=username))
    try:
        reg.service.CheckSwitzerland(RegistrationNumber="XX 1", username=username)
        out["refused"] = None
    except Fault as fault:
        out["refused"] = {"message": fault.message, "code": fault.code}
    print(json.dumps(out))


main()

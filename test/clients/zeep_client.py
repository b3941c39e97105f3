"""Calls the running service with Python zeep (Debian's python3-zeep), built from our ?WSDL.

Usage: zeep_client.py BASE_URL USERNAME SCENARIO_JSON
Prints one JSON document with what the client read, so the Node test can assert on it.
"""
import json
import sys

from zeep import Client
from zeep.exceptions import Fault
from zeep.helpers import serialize_object


def main() -> None:
    base, username, scenario = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    out = {}
    reg = Client(f"{base}/api/reg.asmx?WSDL")
    bespoke = Client(f"{base}/api/bespokeapi.asmx?wsdl")

    usa = reg.service.CheckUSA(RegistrationNumber=scenario["usaPlate"], State=scenario["usaState"], username=username)
    out["usa"] = {
        "vehicleJson": json.loads(usa.vehicleJson),
        "carMake": usa.vehicleData.CarMake.CurrentTextValue,
        "registrationYear": usa.vehicleData.RegistrationYear._value_1 if usa.vehicleData.RegistrationYear is not None else None,
        # A present wrapper with a nil CurrentValue, and a wrapper the record has nothing for (left out).
        "makeValue": usa.vehicleData.CarMake.CurrentValue,
        "doors": serialize_object(usa.vehicleData.NumberOfDoors),
    }

    # The SOAP 1.2 port of the same service.
    reg12 = reg.bind("CarReg", "CarRegSoap12")
    france = reg12.CheckFrance(RegistrationNumber=scenario["francePlate"], username=username)
    out["france12"] = {"carMake": france.vehicleData.CarMake.CurrentTextValue, "description": json.loads(france.vehicleJson).get("Description")}

    austria = reg.service.CheckAustria(NatCode=int(scenario["natCode"]), username=username)
    out["austria"] = {"carMake": austria.vehicleData.CarMake.CurrentTextValue}

    mot = reg.service.UKMOT(RegistrationNumber=scenario["ukPlate"], Model="", username=username)
    tests = mot.Tests.UKTest
    out["mot"] = {
        "count": len(tests),
        "first": serialize_object(tests[0]),
        "taxDate": mot.taxDate,
        "extended": [list(pair.string) for pair in mot.ExtendedInformation.ArrayOfString],
        "json": json.loads(mot.Json),
    }

    # zeep unwraps ArrayOfPreAssessmentSearchResult (one repeated child) into a plain list.
    ncap = bespoke.service.CheckEuroNCap(Make=scenario["ncapMake"], Model="", username=username)
    out["ncap"] = [{"Make": r.Make, "Model": r.Model, "AdultOccupantStars": r.AdultOccupantStars, "IsPublished": r.IsPublished, "CreateDate": r.CreateDate.isoformat()} for r in (ncap or [])]

    minimal = bespoke.bind("BespokeAPI", "BespokeAPISoap12").CheckUSAMinimal(regNumber=scenario["minimalPlate"], state=scenario["minimalState"], username=username)
    out["minimal"] = {"carMake": minimal.vehicleData.CarMake.CurrentTextValue, "keys": sorted(json.loads(minimal.vehicleJson).keys())}

    try:
        reg.service.CheckFrance(RegistrationNumber="ZZ999ZZ", username=username)
        out["notFound"] = None
    except Fault as fault:
        out["notFound"] = {"message": fault.message, "code": fault.code}

    try:
        reg.service.CheckFrance(RegistrationNumber=scenario["francePlate"], username="nobody-here")
        out["badUser"] = None
    except Fault as fault:
        out["badUser"] = {"message": fault.message, "code": fault.code}

    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()

"""Calls the same operations with Python zeep (Debian's python3-zeep) built once from our
bespokeapi ?WSDL and once from the vendor's own bespokeapi WSDL (a local copy whose service
addresses point at the test server), and prints, per document, what each proxy read, as JSON.

Usage: zeep_both_wsdls.py OUR_WSDL_URL VENDOR_WSDL_PATH USERNAME API_KEY SCENARIO_JSON
An operation a proxy could not read is reported as {"error": "..."}.
"""
import json
import sys

from requests import Session
from requests.auth import HTTPBasicAuth
from zeep import Client, Settings
from zeep.helpers import serialize_object
from zeep.transports import Transport


def read_all(client, username, scenario):
    calls = {
        "vehicle": lambda: client.service.CheckFrance(RegistrationNumber=scenario["frenchPlate"], username=username).vehicleData,
        "minimal": lambda: client.service.CheckUSAMinimal(regNumber=scenario["usaPlate"], state=scenario["usaState"], username=username).vehicleData,
        "italy": lambda: client.service.CheckInsuranceStatusItaly(regNumber=scenario["italyPlate"], username=username),
        "versions": lambda: client.service.CheckAlternativeVersionsFrance(RegNumber=scenario["versionsPlate"]).FRVersion,
    }
    out = {}
    for name, call in calls.items():
        try:
            out[name] = serialize_object(call())
        except Exception as error:  # noqa: BLE001 - what the proxy says is the finding
            out[name] = {"error": f"{type(error).__name__}: {error}"}
    return out


def main() -> None:
    ours, vendor, username, api_key, scenario = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
    session = Session()
    session.auth = HTTPBasicAuth(username, api_key)
    result = {}
    for strict in (True, False):
        settings = Settings(strict=strict)
        key = "strict" if strict else "lenient"
        result[key] = {
            "ours": read_all(Client(ours, transport=Transport(session=session), settings=settings), username, scenario),
            "vendor": read_all(Client(vendor, transport=Transport(session=session), settings=settings), username, scenario),
        }
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()

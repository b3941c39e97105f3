"""Calls one operation of every record type of the original with Python zeep (strict, Debian's
python3-zeep), built from our ?WSDL, and prints the typed values it read as JSON.

Usage: zeep_records.py BASE_URL USERNAME API_KEY SCENARIO_JSON
Operations without a username send HTTP Basic (username and API key), as README "Operations
without a username" says.
"""
import json
import sys

from requests import Session
from requests.auth import HTTPBasicAuth
from zeep import Client, Settings
from zeep.transports import Transport


def main() -> None:
    base, username, api_key, scenario = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    session = Session()
    session.auth = HTTPBasicAuth(username, api_key)
    settings = Settings(strict=True)
    reg = Client(f"{base}/api/reg.asmx?WSDL", transport=Transport(session=session), settings=settings)
    bespoke = Client(f"{base}/api/bespokeapi.asmx?wsdl", transport=Transport(session=session), settings=settings)
    bespoke12 = bespoke.bind("BespokeAPI", "BespokeAPISoap12")
    out = {}

    price = bespoke.service.CheckPrice(RegistrationNumber=scenario["pricePlate"], mileage=42000, username=username)
    out["valuation"] = {"Description": price.Description, "Price": price.Price, "priceType": type(price.Price).__name__}

    insured = bespoke12.IsInsured(regNumber=scenario["insuredPlate"], username=username)
    out["insured"] = {"Insured": insured.Insured, "insuredType": type(insured.Insured).__name__, "VehicleDetails": insured.VehicleDetails}

    italy = bespoke.service.CheckInsuranceStatusItaly(regNumber=scenario["italyPlate"], username=username)
    out["italy"] = {"Company": italy.Company, "Expiry": italy.Expiry.isoformat(), "expiryType": type(italy.Expiry).__name__, "IsInsured": italy.IsInsured, "Region": italy.Region}

    portugal = bespoke.service.CheckInsuranceStatusPortugal(regNumber=scenario["portugalPlate"], username=username)
    out["portugal"] = {"Company": portugal.Company, "StartDate": portugal.StartDate.isoformat(), "EndDate": portugal.EndDate.isoformat(), "Policy": portugal.Policy}

    # zeep unwraps ArrayOfNameValue (one repeated child) into a plain list.
    stolen = bespoke.service.CheckStolen(vinNumber=scenario["stolenVin"])
    out["stolen"] = [{"Name": p.Name, "Value": p.Value} for p in (stolen or [])]
    clean = bespoke.service.CheckStolen(vinNumber=scenario["cleanVin"])
    out["clean"] = list(clean or [])

    out["recall"] = bespoke12.CheckRecalledVIN(vin=scenario["recallVin"])

    french = bespoke.service.CheckAlternativeVersionsFrance(RegNumber=scenario["frenchPlate"])
    # zeep unwraps FrenchCar2 (its one child, versions) to the ArrayOfFRVersion.
    out["french"] = [{"marque": v.marque, "libVersion": v.libVersion, "genre": v.genre} for v in french.FRVersion]

    irish = bespoke.service.CheckIrishTaxi(regNumber=scenario["irishPlate"])
    out["irish"] = {"LicenceNumber": irish.LicenceNumber, "Expiry": irish.Expiry, "LicenceHolder": irish.LicenceHolder}

    london = bespoke.service.CheckLondonTaxi(regNumber=scenario["londonPlate"])
    out["london"] = {"Make": london.Make, "Model": london.Model, "License": london.License, "Expiry": london.Expiry}

    grid = reg.service.CarSpecifications(make=scenario["make"], model=scenario["model"], year=int(scenario["year"]))
    out["grid"] = {"json": json.loads(grid.json), "columnNames": list(grid.columnNames.string), "data": [list(row.string) for row in grid.data.ArrayOfString]}

    out["wheels"] = reg.bind("CarReg", "CarRegSoap12").WheelSize(make=scenario["wheelMake"], model=scenario["wheelModel"], year=int(scenario["wheelYear"]))

    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()

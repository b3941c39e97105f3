import type { VehicleDocument } from '../../results/result-documents.js';
import type { MotVehicle } from '../dvsa-mot/mot-history.js';
import type { DvlaVehicle } from './dvla-vehicle.js';
import { titleCase, yearOf } from './uk-text.js';

/** `{"CurrentTextValue": ...}`, the wrapped form the UK vehicleJson uses (compat-notes "Data shapes"). */
export const wrapped = (value: string): { CurrentTextValue: string } => ({ CurrentTextValue: value });

/** UK Description: "2012 Ford Focus, 1596CC Petrol" (compat-notes: "2015 Peugeot 208 Active Hdi 70, 1397CC Diesel, 3DR, Manual"). */
export function ukDescription(year: string | undefined, make: string | undefined, model: string | undefined, cc: string | undefined, fuel: string | undefined): string | undefined {
  const head = [year, make && titleCase(make), model && titleCase(model)].filter((p) => p !== undefined && p !== '').join(' ');
  const engine = [cc !== undefined ? `${cc}CC` : undefined, fuel && titleCase(fuel)].filter((p) => p !== undefined && p !== '').join(' ');
  const text = [head, engine].filter((p) => p !== '').join(', ');
  return text === '' ? undefined : text;
}

function drop(doc: Record<string, unknown>): VehicleDocument {
  return Object.fromEntries(Object.entries(doc).filter(([, v]) => v !== undefined));
}

/**
 * The `Check` (UK) vehicleJson from a DVLA VES answer, with the model (and any field DVLA left
 * out) from the DVSA MOT history when given. Table: docs/providers.md "Check (UK) from DVLA".
 */
export function ukVehicleJson(dvla: DvlaVehicle, mot?: MotVehicle): VehicleDocument {
  const make = dvla.make ?? mot?.make?.toUpperCase();
  const model = mot?.model?.toUpperCase();
  const cc = dvla.engineCapacity !== undefined ? String(dvla.engineCapacity) : mot?.engineSize;
  const fuel = dvla.fuelType ?? mot?.fuelType;
  const colour = dvla.colour ?? mot?.primaryColour;
  const year = yearOf(dvla.monthOfFirstRegistration) ?? (dvla.yearOfManufacture !== undefined ? String(dvla.yearOfManufacture) : undefined) ?? yearOf(mot?.firstUsedDate);
  return drop({
    Description: ukDescription(year, make, model, cc, fuel),
    RegistrationYear: year,
    CarMake: make !== undefined ? wrapped(make) : undefined,
    CarModel: model !== undefined ? wrapped(model) : undefined,
    EngineSize: cc !== undefined ? wrapped(cc) : undefined,
    FuelType: fuel !== undefined ? wrapped(titleCase(fuel)) : undefined,
    MakeDescription: make,
    ModelDescription: model,
    Colour: colour !== undefined ? titleCase(colour) : undefined,
    // DVLA's own fields, under their names in PascalCase; clients of the original ignore them.
    YearOfManufacture: dvla.yearOfManufacture,
    MonthOfFirstRegistration: dvla.monthOfFirstRegistration,
    TaxStatus: dvla.taxStatus,
    TaxDueDate: dvla.taxDueDate,
    MotStatus: dvla.motStatus,
    MotExpiryDate: dvla.motExpiryDate,
    Co2Emissions: dvla.co2Emissions,
    EuroStatus: dvla.euroStatus,
    TypeApproval: dvla.typeApproval,
    Wheelplan: dvla.wheelplan,
    RevenueWeight: dvla.revenueWeight,
    MarkedForExport: dvla.markedForExport,
    DateOfLastV5CIssued: dvla.dateOfLastV5CIssued,
  });
}

/** The `Check` (UK) vehicleJson from the DVSA MOT history alone (when DVLA is not configured). */
export function ukVehicleJsonFromMot(mot: MotVehicle): VehicleDocument {
  const make = mot.make?.toUpperCase();
  const model = mot.model?.toUpperCase();
  const year = yearOf(mot.firstUsedDate) ?? yearOf(mot.registrationDate) ?? (mot.manufactureYear !== undefined ? String(mot.manufactureYear) : undefined);
  return drop({
    Description: ukDescription(year, make, model, mot.engineSize, mot.fuelType),
    RegistrationYear: year,
    CarMake: make !== undefined ? wrapped(make) : undefined,
    CarModel: model !== undefined ? wrapped(model) : undefined,
    EngineSize: mot.engineSize !== undefined ? wrapped(mot.engineSize) : undefined,
    FuelType: mot.fuelType !== undefined ? wrapped(titleCase(mot.fuelType)) : undefined,
    MakeDescription: make,
    ModelDescription: model,
    Colour: mot.primaryColour !== undefined ? titleCase(mot.primaryColour) : undefined,
  });
}

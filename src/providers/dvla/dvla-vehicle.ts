import { asObject, booleanField, numberField, stringField, textField, withoutUndefined } from '../upstream/json-reader.js';

/**
 * A DVLA VES `Vehicle` (upstream-sources.md §1, v1.2.0). Only `registrationNumber` is required
 * upstream; every other field may be missing, and here is missing when its type is wrong.
 */
export interface DvlaVehicle {
  readonly registrationNumber?: string;
  /** `Taxed`, `Untaxed`, `SORN`, `Not Taxed for on Road Use`. */
  readonly taxStatus?: string;
  /** YYYY-MM-DD; absent when SORN. */
  readonly taxDueDate?: string;
  readonly artEndDate?: string;
  /** `Valid`, `Not valid`, `No details held by DVLA`, `No results returned`. */
  readonly motStatus?: string;
  readonly motExpiryDate?: string;
  /** Upper case, e.g. `ROVER`. */
  readonly make?: string;
  /** YYYY-MM. */
  readonly monthOfFirstRegistration?: string;
  readonly monthOfFirstDvlaRegistration?: string;
  readonly yearOfManufacture?: number;
  /** cc; absent for electric vehicles. */
  readonly engineCapacity?: number;
  /** g/km. */
  readonly co2Emissions?: number;
  /** `PETROL`, `DIESEL`, `ELECTRICITY`... */
  readonly fuelType?: string;
  readonly markedForExport?: boolean;
  readonly colour?: string;
  readonly typeApproval?: string;
  readonly wheelplan?: string;
  /** kg. */
  readonly revenueWeight?: number;
  readonly realDrivingEmissions?: string;
  readonly dateOfLastV5CIssued?: string;
  readonly euroStatus?: string;
  readonly automatedVehicle?: boolean;
}

/** Reads a VES answer (or a cached one) field by field. */
export function readDvlaVehicle(payload: unknown): DvlaVehicle {
  const o = asObject(payload) ?? {};
  return withoutUndefined<DvlaVehicle>({
    registrationNumber: stringField(o, 'registrationNumber'),
    taxStatus: stringField(o, 'taxStatus'),
    taxDueDate: stringField(o, 'taxDueDate'),
    artEndDate: stringField(o, 'artEndDate'),
    motStatus: stringField(o, 'motStatus'),
    motExpiryDate: stringField(o, 'motExpiryDate'),
    make: stringField(o, 'make'),
    monthOfFirstRegistration: stringField(o, 'monthOfFirstRegistration'),
    monthOfFirstDvlaRegistration: stringField(o, 'monthOfFirstDvlaRegistration'),
    yearOfManufacture: numberField(o, 'yearOfManufacture'),
    engineCapacity: numberField(o, 'engineCapacity'),
    co2Emissions: numberField(o, 'co2Emissions'),
    fuelType: stringField(o, 'fuelType'),
    markedForExport: booleanField(o, 'markedForExport'),
    colour: stringField(o, 'colour'),
    typeApproval: stringField(o, 'typeApproval'),
    wheelplan: stringField(o, 'wheelplan'),
    revenueWeight: numberField(o, 'revenueWeight'),
    realDrivingEmissions: textField(o, 'realDrivingEmissions'),
    dateOfLastV5CIssued: stringField(o, 'dateOfLastV5CIssued'),
    euroStatus: stringField(o, 'euroStatus'),
    automatedVehicle: booleanField(o, 'automatedVehicle'),
  });
}

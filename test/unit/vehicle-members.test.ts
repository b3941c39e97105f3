import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DATASET_PATH } from '../../src/bootstrap/seed.js';
import { vehicleCodec, VEHICLE_DATA_FIELDS } from '../../src/results/vehicle.codec.js';
import { VEHICLE_MEMBERS } from '../../src/results/vehicle-members.js';

/** The vehicle documents of the sample dataset a fresh store is seeded with. */
function sampleVehicles(): Array<{ operation: string; vehicle: Record<string, unknown> }> {
  return readFileSync(SAMPLE_DATASET_PATH, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { operation: string; vehicle?: unknown })
    .filter((line): line is { operation: string; vehicle: Record<string, unknown> } => typeof line.vehicle === 'object' && line.vehicle !== null);
}

/**
 * The JSON interface's Vehicle schema types every member the service knows (vehicle-members.ts):
 * no member of a sample record is left untyped, and each has the type the schema gives it, so a
 * generated client reads CarMake.CurrentTextValue or Colour without narrowing.
 */
describe('the Vehicle schema of the JSON interface', () => {
  const schema = vehicleCodec.jsonSchema() as { properties: Record<string, unknown>; additionalProperties: unknown };

  it('names every member of every sample record, with the type the record has', () => {
    const vehicles = sampleVehicles();
    expect(vehicles.length).toBeGreaterThan(100);
    // Closed for the test: a member the schema does not name fails.
    const validate = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true }).compile({ ...schema, additionalProperties: false });
    for (const { operation, vehicle } of vehicles) {
      expect(validate(vehicle) ? [] : validate.errors, `${operation}: ${JSON.stringify(vehicle).slice(0, 200)}`).toEqual([]);
    }
  });

  it('types CarMake as {CurrentTextValue: string}, and every member vehicleData is derived from', () => {
    expect(schema.properties.CarMake).toMatchObject({ type: 'object', required: ['CurrentTextValue'], properties: { CurrentTextValue: { type: 'string' } } });
    expect(schema.properties.VechileIdentificationNumber).toMatchObject({ type: 'string' });
    expect(schema.properties.Colour).toMatchObject({ type: 'string' });
    expect(VEHICLE_DATA_FIELDS.map((field) => field.name).filter((name) => !(name in VEHICLE_MEMBERS))).toEqual([]);
    // Members a country adds beyond the known ones are still allowed.
    expect(schema.additionalProperties).toBe(true);
  });
});

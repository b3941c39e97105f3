import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { OPERATIONS } from '../../src/catalogue/operations.js';
import { PAID_UPSTREAM_NAMES } from '../../src/datasets/kept-per-operation.js';
import { PAID_ANSWER_READERS } from '../../src/providers/paid-answers.js';
import { AnswerRecorder } from '../../src/providers/upstream/answer-recorder.js';
import { AnswerRecording, recordedFetch } from '../../src/providers/upstream/answer-recording.js';
import { tempDir } from '../helpers/test-app.js';
import { ManualClock } from './harness.js';

/**
 * Each paid upstream's reader of its cached payloads (src/providers/paid-answers.ts), which its
 * record file and `export --source` share, and the one recording piece every paid client uses.
 */

const { regcheck, ukvd, vincario, carsxe } = PAID_ANSWER_READERS;
const ops = (answers: ReadonlyArray<{ operation: string }>): string[] => answers.map((a) => a.operation);

const KIA = { endpoint: 'plate', body: { success: true, make: 'KIA', model: 'FORTE', description: 'KIA FORTE', vin: '3KPFK4A78HE000001' } };
const UK_VEHICLE = { package: 'VehicleDetails', results: { VehicleDetails: { StatusCode: 0, VehicleIdentification: { DvlaMake: 'AUDI', DvlaModel: 'A7' } } } };

describe('the paid upstreams’ readers of cached payloads', () => {
  it('has one reader for every paid upstream name', () => {
    expect(Object.keys(PAID_ANSWER_READERS).sort()).toEqual([...PAID_UPSTREAM_NAMES].sort());
  });

  it('reads a UKVD vehicle package answer as the three UK vehicle operations, or the one asked, and MotHistoryDetails as UKMOT', () => {
    expect(ops(ukvd('VehicleDetails|AB15AUD', UK_VEHICLE))).toEqual(['Check', 'CheckMotorBikeUK', 'CheckUKMinimal']);
    const [minimal] = ukvd('VehicleDetails|AB15AUD', UK_VEHICLE, 'CheckUKMinimal');
    expect(minimal).toMatchObject({ operation: 'CheckUKMinimal', key: { regNumber: 'AB15AUD' } });
    expect(ukvd('VehicleDetails|AB15AUD', UK_VEHICLE, 'UKMOT')).toEqual([]);
    const mot = ukvd('MotHistoryDetails|AB15AUD', { package: 'MotHistoryDetails', results: { MotHistoryDetails: { StatusCode: 0, MotTestDetailsList: [] } } });
    expect(mot).toMatchObject([{ operation: 'UKMOT', key: { RegistrationNumber: 'AB15AUD' } }]);
    expect(ukvd('VehicleDetails|AB15AUD', { operation: 'Check', key: {}, record: {} })).toEqual([]);
  });

  it('reads Vincario’s decode as VinCheck and its stolen check as CheckStolen, by the VIN of the cache key', () => {
    expect(vincario('decode|WF05XXGC055870807', { service: 'decode', decode: [{ label: 'Make', value: 'Ford' }] })).toMatchObject([{ operation: 'VinCheck', key: { Vin: 'WF05XXGC055870807' } }]);
    expect(vincario('stolen-check|WF05XXGC055870807', { service: 'stolen-check', stolen: [] })).toMatchObject([{ operation: 'CheckStolen', key: { vinNumber: 'WF05XXGC055870807' }, record: [] }]);
    expect(vincario('decode|WF05XXGC055870807', { service: 'decode', decode: 'not a list' })).toEqual([]);
  });

  it('reads a CarsXE plate answer as every plate operation of its country with its state, skips Pakistan, and specs as VinCheck', () => {
    expect(ops(carsxe('plate|US|CA|7XER187', KIA))).toEqual(['CheckUSA', 'CheckUSAMinimal', 'CheckUSADynamic', 'CheckUSAEdBolian']);
    expect(carsxe('plate|US|CA|7XER187', KIA, 'CheckUSA')).toMatchObject([{ operation: 'CheckUSA', key: { RegistrationNumber: '7XER187', State: 'CA' } }]);
    expect(carsxe('plate|CA|ON|CKRT482', KIA, 'CheckCanada')).toMatchObject([{ key: { RegistrationNumber: 'CKRT482', Province: 'ON' } }]);
    expect(carsxe('plate|GB||KX19YRD', KIA)).toMatchObject([{ operation: 'Check', key: { RegistrationNumber: 'KX19YRD' } }, { operation: 'CheckUKMinimal', key: { regNumber: 'KX19YRD' } }]);
    // Keyed by district alone: CheckPakistan's key also holds the province, which the cache does not.
    expect(carsxe('plate|PK|Lahore|LEA1234', KIA)).toEqual([]);
    expect(carsxe('plate|US|CA', KIA)).toEqual([]);
    expect(carsxe('plate|US|CA|%E0%A4%A|x', KIA)).toEqual([]);
    expect(carsxe('specs|WBAFR7C57CC811956', { endpoint: 'specs', body: { success: true, attributes: { make: 'BMW', model: '5 Series' } } })).toMatchObject([{ operation: 'VinCheck', key: { Vin: 'WBAFR7C57CC811956' } }]);
  });

  it('reads the original’s payload as it stands, for its own operation only', () => {
    const payload = { operation: 'Check', key: { RegistrationNumber: 'LV04XYZ' }, record: { vehicleJson: '{}' } };
    expect(regcheck('Check|LV04XYZ', payload)).toEqual([payload]);
    expect(regcheck('Check|LV04XYZ', payload, 'CheckUKMinimal')).toEqual([]);
  });
});

describe('the recording every paid client shares', () => {
  const catalogue = new Catalogue(OPERATIONS);
  const clock = new ManualClock();

  function recording(read = vincario): { rec: AnswerRecording; lines: () => unknown[]; warnings: string[]; done: () => void } {
    const dir = tempDir();
    const path = join(dir.path, 'r.jsonl');
    const warnings: string[] = [];
    const log = { warn: (message: string) => void warnings.push(message) };
    const rec = new AnswerRecording(new AnswerRecorder(path, log), 'vincario', read, catalogue, clock, log);
    return {
      rec,
      warnings,
      lines: () =>
        readFileSync(path, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as unknown),
      done: () => {
        rec.close();
        dir.remove();
      },
    };
  }

  it('appends an answer with data as an import line of the operation asked, with the provider and the time', () => {
    const r = recording();
    const stolen = [{ code: 'SK', status: 'stolen' }];
    r.rec.fetched('stolen-check|WVWZZZ1JZXW000001', { service: 'stolen-check', stolen }, 'CheckStolen');
    const [line] = r.lines();
    expect(line).toMatchObject({ operation: 'CheckStolen', key: { vinNumber: 'WVWZZZ1JZXW000001' }, source: 'vincario', fetchedAt: clock.now().toISOString() });
    r.done();
  });

  it('records nothing for an answer without data (an empty stolen list is served free), and warns instead of throwing on a reader that fails', () => {
    const r = recording();
    r.rec.fetched('stolen-check|WF05XXGC055870807', { service: 'stolen-check', stolen: [] }, 'CheckStolen');
    expect(r.lines()).toEqual([]);
    r.done();
    const failing = recording(() => {
      throw new Error('boom');
    });
    expect(() => {
      failing.rec.fetched('decode|X', {}, 'VinCheck');
    }).not.toThrow();
    expect(failing.warnings).toEqual(['a vincario answer could not be recorded']);
    failing.done();
  });

  it('leaves out, with a warning, a line the import would refuse', () => {
    const r = recording(() => [{ operation: 'VinCheck', key: { Vin: 'WF05XXGC055870807' }, record: 'not a vehicle' }]);
    r.rec.fetched('decode|WF05XXGC055870807', {}, 'VinCheck');
    expect(r.lines()).toEqual([]);
    expect(r.warnings[0]).toMatch(/^a vincario answer to VinCheck was not recorded: the import would refuse it/);
    r.done();
  });

  it('tells the sink of found answers only, with the cache key and the operation', async () => {
    const told: unknown[] = [];
    const sink = { fetched: (...args: unknown[]) => void told.push(args) };
    await recordedFetch(() => Promise.resolve({ status: 'not-found' }), sink, 'k', 'VinCheck')();
    await recordedFetch(() => Promise.resolve({ status: 'found', payload: { a: 1 } }), sink, 'k', 'VinCheck')();
    expect(told).toEqual([['k', { a: 1 }, 'VinCheck']]);
  });
});

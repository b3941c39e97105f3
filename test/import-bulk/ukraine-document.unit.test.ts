import { describe, expect, it } from 'vitest';
import { COLUMNS_FOR_TEST, fieldsOf, vehicleDocument, type UkraineFields } from '../../src/datasets/import/ukraine-register.js';

/** The object-building version vehicleDocument replaced: the judge of the hand-written JSON. */
const NOTHING = new Set(['', 'NULL', 'НЕ ВИЗНАЧЕНО', '.', '-']);
const clean = (value: string | undefined): string => {
  const v = (value ?? '').trim();
  return NOTHING.has(v.toUpperCase()) ? '' : v;
};
function judge(f: UkraineFields, date: string): string {
  const brand = clean(f.BRAND);
  const model = clean(f.MODEL);
  const year = clean(f.MAKE_YEAR);
  const cc = clean(f.CAPACITY);
  const fuel = clean(f.FUEL);
  const colour = clean(f.COLOR);
  const department = clean(f.DEP);
  const vin = clean(f.VIN).toUpperCase();
  const document: Record<string, unknown> = { Description: model === '' ? brand : `${brand} ${model}` };
  if (/^\d{4}$/.test(year)) document.RegistrationYear = year;
  document.CarMake = { CurrentTextValue: brand };
  if (model !== '') document.CarModel = { CurrentTextValue: model };
  document.MakeDescription = brand;
  if (model !== '') document.ModelDescription = model;
  if (/^\d+(\.\d+)?$/.test(cc) && Number(cc) > 0) document.EngineSize = { CurrentTextValue: String(Math.round(Number(cc))) };
  if (fuel !== '') document.FuelType = { CurrentTextValue: fuel };
  if (colour !== '') document.Colour = colour;
  document.RegistrationDate = date;
  if (department !== '') document.Department = department;
  if (/^[A-Z0-9]{5,17}$/.test(vin)) document.VechileIdentificationNumber = vin;
  return JSON.stringify(document);
}

/** Values a register field may hold, the awkward ones included: junk, quotes, backslashes, control characters, lone surrogates. */
const VALUES = ['', ' ', 'NULL', 'null', ' - ', '.', 'не визначено', 'НЕ ВИЗНАЧЕНО', 'SKODA', 'ŠKODA "Octavia"', 'A\\B', 'tab\there', 'line\nbreak', '\u0001', '\ud800', 'ЧОРНИЙ', '2018', '18', '1395.0', '0', '-5', '1e3', 'tmbag7ne4j1234567', 'VIN 1', '1234', 'БЕНЗИН', '  padded  ', 'a'.repeat(40)];

/** A seeded generator (mulberry32): the same rows on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the CheckUkraine document, written by hand', () => {
  it('is byte for byte the JSON.stringify of the object the importer used to build, on 20,000 generated rows', () => {
    const rand = random(35);
    const pick = (): string => VALUES[Math.floor(rand() * VALUES.length)] ?? '';
    for (let n = 0; n < 20_000; n += 1) {
      const fields = COLUMNS_FOR_TEST.map(() => pick());
      const f = fieldsOf(fields);
      const date = rand() < 0.5 ? '2021-04-16' : '2013-01-02';
      expect(vehicleDocument(f, date), JSON.stringify(fields)).toBe(judge(f, date));
    }
  });

  it('names each field by its column, in the order the reader picks them', () => {
    const f = fieldsOf(COLUMNS_FOR_TEST.map((c) => `value of ${c}`));
    for (const c of COLUMNS_FOR_TEST) expect(f[c]).toBe(`value of ${c}`);
  });
});

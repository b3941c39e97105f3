import { Catalogue, joinKey } from '../../catalogue/catalogue.js';
import { textRule } from '../../catalogue/input-rules.js';
import type { DatasetKind } from '../../catalogue/operation.js';
import type { StoredRating, StoredRecord } from '../record.repository.js';

/** A valid import line, ready to store. */
export type ValidatedLine =
  | { readonly kind: 'record'; readonly operation: string; readonly record: Omit<StoredRecord, 'source'> }
  | { readonly kind: 'rating'; readonly operation: string; readonly rating: Omit<StoredRating, 'source'> };

export type LineOutcome = { ok: true; line: ValidatedLine } | { ok: false; reason: string };

const PAYLOAD_FIELD: Record<DatasetKind, string> = { vehicle: 'vehicle', mot: 'mot', ncap: 'ncap' };

const NCAP_INT_FIELDS = [
  'AdultOccupantStars', 'ChildOccupantStars', 'PedestrianStars', 'Id', 'ClassId', 'ProtocolId', 'MakeId',
  'ModelId', 'SortOrder', 'LifecycleStatus', 'Year',
] as const;
const NCAP_BOOL_FIELDS = [
  'AdultOccupantStrikeThrough', 'ChildOccupantStrikeThrough', 'PedestrianStrikeThrough', 'IsPublished', 'IsPreProtocol', 'IsFleet',
] as const;
const NCAP_STRING_FIELDS = [
  'Title', 'Name', 'Make', 'Model', 'Content', 'Url', 'ClassEN', 'ClassDE', 'ClassNL', 'ClassES', 'ClassFR', 'ClassIT',
  'ClassRU', 'ClassSV', 'ClassTR', 'ClassZH', 'MakeImageLarge', 'MakeImageSmall', 'Images', 'YoutubeVideos', 'YoukuVideos',
] as const;
const NCAP_DATE_FIELDS = ['CreateDate', 'ReleaseDate', 'FirstPublished'] as const;
/** Every PreAssessmentSearchResult field of the interface spec, for docs and the XML writer. */
export const NCAP_FIELDS = { ints: NCAP_INT_FIELDS, bools: NCAP_BOOL_FIELDS, strings: NCAP_STRING_FIELDS, dates: NCAP_DATE_FIELDS };

const UKTEST_STRING_FIELDS = ['TestDate', 'ExpiryDate', 'Result', 'Odometer', 'TestNumber'] as const;
const UKTEST_LIST_FIELDS = ['FailureReasons', 'Advisories'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const fail = (reason: string): LineOutcome => ({ ok: false, reason });

/** ISO 8601 date-time as .NET writes xs:dateTime ("2017-05-31T00:00:00", optional fraction and zone). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/;

/** Checks one parsed import line against the catalogue (issue 2 "Import format"). */
export class RecordValidator {
  constructor(private readonly catalogue: Catalogue) {}

  validate(value: unknown): LineOutcome {
    if (!isObject(value)) return fail('a line must be a JSON object');
    const name = value.operation;
    if (typeof name !== 'string') return fail('"operation" must be a string');
    const op = this.catalogue.find(name);
    if (!op) return fail(`unknown operation "${name}"`);
    const kind = op.dataset.kind;
    const payloadField = PAYLOAD_FIELD[kind];
    const allowed = new Set(['operation', payloadField, ...(kind === 'ncap' ? [] : ['key'])]);
    const extra = Object.keys(value).filter((k) => !allowed.has(k));
    if (extra.length > 0) return fail(`unexpected field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `"${k}"`).join(', ')} for ${name} (expected ${[...allowed].map((k) => `"${k}"`).join(', ')})`);
    const payload = value[payloadField];
    if (!isObject(payload)) return fail(`"${payloadField}" must be a JSON object`);

    if (kind === 'ncap') return this.rating(name, payload);

    const key = this.key(op.name, value.key);
    if (typeof key !== 'string') return key;
    const problem = kind === 'mot' ? checkMot(payload) : undefined;
    if (problem !== undefined) return fail(problem);
    return { ok: true, line: { kind: 'record', operation: name, record: { dataset: op.dataset.name, lookupKey: key, document: JSON.stringify(payload) } } };
  }

  private key(operation: string, raw: unknown): string | LineOutcome {
    const op = this.catalogue.find(operation);
    if (!op) return fail(`unknown operation "${operation}"`);
    if (!isObject(raw)) return fail('"key" must be a JSON object');
    const params = Catalogue.keyParameters(op);
    const names = new Set(params.map((p) => p.name));
    const unknown = Object.keys(raw).filter((k) => !names.has(k));
    if (unknown.length > 0) return fail(`key field "${unknown[0] ?? ''}" is not part of the ${operation} key (expected ${params.map((p) => p.name).join(', ')})`);
    const values: string[] = [];
    for (const p of params) {
      const v = raw[p.name];
      const text = typeof v === 'number' ? String(v) : v;
      if (typeof text !== 'string') return fail(`key.${p.name} is required and must be a string`);
      const outcome = p.rule?.normalise(text) ?? { ok: true as const, value: text.trim() };
      if (!outcome.ok) return fail(`key.${p.name} ${outcome.reason}`);
      values.push(outcome.value);
    }
    return joinKey(values);
  }

  private rating(operation: string, ncap: Record<string, unknown>): LineOutcome {
    for (const f of ['Make', 'Model'] as const) {
      if (typeof ncap[f] !== 'string' || ncap[f].trim() === '') return fail(`ncap.${f} is required and must be a non-empty string`);
    }
    for (const f of NCAP_INT_FIELDS) {
      if (f in ncap && !(Number.isInteger(ncap[f]) && Math.abs(ncap[f] as number) <= 2147483647)) return fail(`ncap.${f} must be a whole number`);
    }
    for (const f of NCAP_BOOL_FIELDS) {
      if (f in ncap && typeof ncap[f] !== 'boolean') return fail(`ncap.${f} must be true or false`);
    }
    for (const f of NCAP_STRING_FIELDS) {
      if (f in ncap && ncap[f] !== null && typeof ncap[f] !== 'string') return fail(`ncap.${f} must be a string`);
    }
    for (const f of NCAP_DATE_FIELDS) {
      const v = ncap[f];
      if (f in ncap && !(typeof v === 'string' && DATE_TIME.test(v))) return fail(`ncap.${f} must be an ISO 8601 date-time such as 2017-05-31T00:00:00`);
    }
    const make = textRule.normalise(ncap.Make as string);
    const model = textRule.normalise(ncap.Model as string);
    if (!make.ok) return fail(`ncap.Make ${make.reason}`);
    if (!model.ok) return fail(`ncap.Model ${model.reason}`);
    const ratingKey = Number.isInteger(ncap.Id) ? `id:${String(ncap.Id)}` : `${make.value}|${model.value}|${typeof ncap.Year === 'number' ? ncap.Year : ''}`;
    return {
      ok: true,
      line: { kind: 'rating', operation, rating: { ratingKey, makeNorm: make.value, modelNorm: model.value, document: JSON.stringify(ncap) } },
    };
  }
}

function checkMot(mot: Record<string, unknown>): string | undefined {
  const extra = Object.keys(mot).filter((k) => !['Tests', 'taxDate', 'ExtendedInformation'].includes(k));
  if (extra.length > 0) return `mot has unexpected field "${extra[0] ?? ''}" (expected Tests, taxDate, ExtendedInformation)`;
  if (!Array.isArray(mot.Tests)) return 'mot.Tests must be an array';
  for (const [i, test] of mot.Tests.entries()) {
    if (!isObject(test)) return `mot.Tests[${i}] must be an object`;
    for (const f of UKTEST_STRING_FIELDS) {
      if (f in test && typeof test[f] !== 'string') return `mot.Tests[${i}].${f} must be a string`;
    }
    for (const f of UKTEST_LIST_FIELDS) {
      if (f in test && !isStringArray(test[f])) return `mot.Tests[${i}].${f} must be an array of strings`;
    }
  }
  if ('taxDate' in mot && typeof mot.taxDate !== 'string') return 'mot.taxDate must be a string';
  if ('ExtendedInformation' in mot) {
    const ext = mot.ExtendedInformation;
    if (!isObject(ext) || !Object.values(ext).every((v) => typeof v === 'string')) return 'mot.ExtendedInformation must be an object of string values';
  }
  return undefined;
}

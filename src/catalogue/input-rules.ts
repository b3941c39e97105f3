/**
 * Input rules: how each kind of parameter is validated and normalised before a lookup.
 *
 * A rule turns a raw wire value into the normalised value used as (part of) the lookup key, or
 * reports why the value is unacceptable. Rules know nothing of protocols; the catalogue attaches
 * one to every parameter.
 */

import type { JsonSchema } from '../shared/json-schema.js';
import { checkVin } from '../vin/vin.js';

export type RuleOutcome = { ok: true; value: string } | { ok: false; reason: string };

export interface InputRule {
  /** Stable name, shown in docs and in the catalogue listing. */
  readonly name: string;
  /** Human description for docs and help pages. */
  readonly description: string;
  /**
   * The raw values it accepts as a JSON Schema for a string (the OpenAPI document's parameter
   * schema): never stricter than `normalise`, except where a list's letter case is concerned
   * (the enum names the canonical codes; the description says any case is accepted).
   */
  readonly schema: JsonSchema;
  normalise(raw: string): RuleOutcome;
}

const ok = (value: string): RuleOutcome => ({ ok: true, value });
const fail = (reason: string): RuleOutcome => ({ ok: false, reason });

/** Longest value we accept for any text parameter; keeps keys and ledger rows bounded. */
export const MAX_PARAMETER_LENGTH = 100;

/** A plate the full rule would accept unchanged but for letter case. */
const PLAIN_PLATE = /^[A-Za-z0-9]{1,20}$/;

/**
 * Registration numbers compare case-insensitively, ignoring spaces and hyphens (issue 2,
 * "Lookup keys are normalised"). Letters of any script are allowed because several countries
 * issue non-Latin plates; punctuation other than spaces and hyphens is not.
 */
export const registrationRule: InputRule = {
  name: 'registration',
  description: 'Registration number: letters and digits; case, spaces and hyphens are ignored',
  // The published pattern must read the same in every validator: `\p{L}` needs ECMAScript's `u`
  // flag, which JSON Schema does not carry (Spectral, Python's re and Go reject it). So the
  // document refuses what any engine can say without it (ASCII controls and punctuation but the
  // hyphen) and normalise() below keeps the Unicode check (letters and digits of any script).
  schema: { type: 'string', pattern: '^[^\\x00-\\x08\\x0E-\\x1F!-,./:-@\\[-`{-~\\x7F]+$' },
  normalise(raw) {
    // Nearly every plate is plain ASCII letters and digits already: nothing to fold or strip.
    if (PLAIN_PLATE.test(raw)) return ok(raw.toUpperCase());
    // NFKC folds full-width and compatibility forms (ＡＢ１２ -> AB12) so one plate has one key.
    const value = raw.normalize('NFKC').trim().replace(/[\s-]+/gu, '').toUpperCase();
    if (value.length === 0) return fail('must not be empty');
    if (value.length > 20) return fail('is longer than 20 characters');
    if (!/^[\p{L}\p{N}]+$/u.test(value)) return fail('may contain only letters, digits, spaces and hyphens');
    return ok(value);
  },
};

/**
 * A plate rule built on `registrationRule` whose letters are folded to one script: Russian and
 * Ukrainian plates use only the Cyrillic letters that look like Latin ones (GOST R 50577; DSTU
 * 4278), Greek plates only the Greek ones (upstream-sources.md 10.8: "UA Cyrillic-Latin fold"). A
 * client may type either script, so both must find one record. Other letters are kept as given.
 */
function foldingPlateRule(name: string, what: string, fold: Readonly<Record<string, string>>): InputRule {
  const letters = Object.keys(fold).join(' ');
  const foldable = new RegExp(`[${Object.keys(fold).join('')}]`, 'gu');
  return {
    name,
    description: `${what} registration number: as \`registration\`, and the letters ${letters} are read as the Latin letters they look like`,
    schema: registrationRule.schema,
    normalise(raw) {
      const plain = registrationRule.normalise(raw);
      if (!plain.ok || PLAIN_PLATE.test(plain.value)) return plain;
      return ok(plain.value.replace(foldable, (c) => fold[c] ?? c));
    },
  };
}

/** The twelve Cyrillic letters of Russian plates, and Ukrainian І, as the Latin letters they look like. */
const CYRILLIC_PLATE_LETTERS: Readonly<Record<string, string>> = {
  А: 'A', В: 'B', Е: 'E', І: 'I', К: 'K', М: 'M', Н: 'H', О: 'O', Р: 'P', С: 'C', Т: 'T', У: 'Y', Х: 'X',
};

/** The fourteen Greek letters of Greek plates, as the Latin letters they look like. */
const GREEK_PLATE_LETTERS: Readonly<Record<string, string>> = {
  Α: 'A', Β: 'B', Ε: 'E', Ζ: 'Z', Η: 'H', Ι: 'I', Κ: 'K', Μ: 'M', Ν: 'N', Ο: 'O', Ρ: 'P', Τ: 'T', Υ: 'Y', Χ: 'X',
};

export const cyrillicPlateRule = foldingPlateRule('cyrillic-plate', 'Russian or Ukrainian', CYRILLIC_PLATE_LETTERS);
export const greekPlateRule = foldingPlateRule('greek-plate', 'Greek', GREEK_PLATE_LETTERS);

/** The 26 cantons' plate codes. */
export const SWISS_CANTONS = [
  'AG', 'AI', 'AR', 'BE', 'BL', 'BS', 'FR', 'GE', 'GL', 'GR', 'JU', 'LU', 'NE', 'NW', 'OW', 'SG',
  'SH', 'SO', 'SZ', 'TG', 'TI', 'UR', 'VD', 'VS', 'ZG', 'ZH',
] as const;

const SWISS_PLATE = new RegExp(`^(?:${SWISS_CANTONS.join('|')})\\d{1,6}U?$`);

/**
 * Swiss plates are a canton code and up to six digits ("ZH 123456"); dealers' plates end in U.
 * Federal and military plates (no canton code) are refused: they are not in the cantonal
 * registers a Switzerland lookup reads.
 */
export const swissPlateRule: InputRule = {
  name: 'swiss-plate',
  // Looser than the rule (the canton codes are checked by normalise), never stricter.
  schema: registrationRule.schema,
  description: `Swiss registration number: a canton code (${SWISS_CANTONS.join(', ')}) and 1 to 6 digits (dealer plates: then U), e.g. ZH 123456; case, spaces and hyphens are ignored`,
  normalise(raw) {
    const plain = registrationRule.normalise(raw);
    if (!plain.ok) return plain;
    if (!SWISS_PLATE.test(plain.value)) return fail('must be a canton code and 1 to 6 digits, e.g. ZH 123456');
    return plain;
  },
};

/** A closed list of codes; `aliases` map other spellings to their code so both find one record. */
function codeListRule(name: string, what: string, codes: readonly string[], aliases: Readonly<Record<string, string>> = {}): InputRule {
  const allowed = new Set(codes);
  const shown = [...codes, ...Object.keys(aliases)].join(', ');
  return {
    name,
    description: `${what}: one of ${shown} (any letter case)`,
    schema: { type: 'string', enum: [...codes, ...Object.keys(aliases)] },
    normalise(raw) {
      const given = raw.trim().toUpperCase();
      if (given.length === 0) return fail('must not be empty');
      const value = aliases[given] ?? given;
      if (!allowed.has(value)) return fail(`must be one of ${shown}`);
      return ok(value);
    },
  };
}

export const AUSTRALIAN_STATES = ['NSW', 'VIC', 'QLD', 'SA', 'WA', 'TAS', 'ACT', 'NT'] as const;

/** The 50 states, the District of Columbia and the inhabited territories that issue plates. */
export const US_STATES = [
  'AL', 'AK', 'AZ', 'AR', 'CA', 'CO', 'CT', 'DE', 'FL', 'GA', 'HI', 'ID', 'IL', 'IN', 'IA', 'KS',
  'KY', 'LA', 'ME', 'MD', 'MA', 'MI', 'MN', 'MS', 'MO', 'MT', 'NE', 'NV', 'NH', 'NJ', 'NM', 'NY',
  'NC', 'ND', 'OH', 'OK', 'OR', 'PA', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VT', 'VA', 'WA', 'WV',
  'WI', 'WY', 'DC', 'PR', 'GU', 'VI', 'AS', 'MP',
] as const;

export const CANADIAN_PROVINCES = ['AB', 'BC', 'MB', 'NB', 'NL', 'NS', 'NT', 'NU', 'ON', 'PE', 'QC', 'SK', 'YT'] as const;

/** Pakistan's provinces and federal territories, as codes or names clients commonly send. */
export const PAKISTAN_PROVINCES = ['PUNJAB', 'SINDH', 'KPK', 'BALOCHISTAN', 'ICT', 'GB', 'AJK'] as const;

export const australianStateRule = codeListRule('australian-state', 'Australian state or territory', AUSTRALIAN_STATES);
export const usStateRule = codeListRule('us-state', 'US state code', US_STATES);
export const canadianProvinceRule = codeListRule('canadian-province', 'Canadian province or territory code', CANADIAN_PROVINCES);
export const pakistanProvinceRule = codeListRule('pakistan-province', 'Pakistani province', PAKISTAN_PROVINCES, {
  KP: 'KPK',
  'KHYBER PAKHTUNKHWA': 'KPK',
  ISLAMABAD: 'ICT',
  'GILGIT-BALTISTAN': 'GB',
});

/**
 * VIN: 17 characters of [A-HJ-NPR-Z0-9] (ISO 3779; I, O and Q are never used), with a correct
 * check digit where it is mandatory (North America and China, src/vin/vin.ts; issue 4).
 */
export const vinRule: InputRule = {
  name: 'vin',
  description: 'Vehicle identification number: 17 characters of A-H, J-N, P, R-Z and 0-9; North American and Chinese VINs must have a correct check digit (position 9)',
  schema: { type: 'string', pattern: '^[\\s-]*(?:[A-HJ-NPR-Za-hj-npr-z0-9][\\s-]*){17}$' },
  normalise(raw) {
    const value = raw.trim().replace(/[\s-]+/gu, '').toUpperCase();
    const checked = checkVin(value);
    return checked.ok ? ok(value) : fail(checked.reason);
  },
};

/**
 * German type key (KBA number): HSN (4 digits) and TSN (3 letters or digits), written "0005/ALQ".
 * Accepts the form without the slash and normalises to the slashed form.
 */
export const kbaNumberRule: InputRule = {
  name: 'kba-number',
  description: 'German KBA type key HSN/TSN, e.g. 0005/ALQ',
  schema: { type: 'string', pattern: '^[\\s/-]*\\d{4}[\\s/-]*[A-Za-z0-9]{3}[\\s/-]*$' },
  normalise(raw) {
    const compact = raw.trim().replace(/[\s/-]+/gu, '').toUpperCase();
    if (compact.length === 0) return fail('must not be empty');
    const match = /^(\d{4})([A-Z0-9]{3})$/.exec(compact);
    if (!match) return fail('must be a 4-digit HSN and a 3-character TSN, e.g. 0005/ALQ');
    return ok(`${match[1] ?? ''}/${match[2] ?? ''}`);
  },
};

/** A 32-bit signed integer, as .NET's System.Int32 parses it (CheckAustria's NatCode). */
export const int32Rule: InputRule = {
  name: 'int32',
  description: 'Whole number (32-bit)',
  schema: { type: 'string', pattern: '^\\s*[+-]?\\d{1,10}\\s*$' },
  normalise(raw) {
    const value = raw.trim();
    if (!/^[+-]?\d{1,10}$/.test(value)) return fail('must be a whole number');
    const n = Number(value);
    if (n < -2147483648 || n > 2147483647) return fail('is outside the 32-bit integer range');
    return ok(String(n));
  },
};

/** Free text compared case-insensitively (district names, model names). */
export const textRule: InputRule = {
  name: 'text',
  description: 'Text; compared without regard to letter case or surrounding spaces',
  schema: { type: 'string', pattern: '\\S', description: `At most ${MAX_PARAMETER_LENGTH} characters once runs of spaces are collapsed` },
  normalise(raw) {
    const value = raw.trim().replace(/\s+/gu, ' ').toUpperCase();
    if (value.length === 0) return fail('must not be empty');
    if (value.length > MAX_PARAMETER_LENGTH) return fail(`is longer than ${MAX_PARAMETER_LENGTH} characters`);
    return ok(value);
  },
};

/** Like textRule but an empty value is acceptable (an optional filter). */
export const optionalTextRule: InputRule = {
  name: 'optional-text',
  description: 'Optional text; compared without regard to letter case or surrounding spaces',
  schema: { type: 'string', description: `At most ${MAX_PARAMETER_LENGTH} characters once runs of spaces are collapsed` },
  normalise(raw) {
    const value = raw.trim().replace(/\s+/gu, ' ').toUpperCase();
    if (value.length > MAX_PARAMETER_LENGTH) return fail(`is longer than ${MAX_PARAMETER_LENGTH} characters`);
    return ok(value);
  },
};

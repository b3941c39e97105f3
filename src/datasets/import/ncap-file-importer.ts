import { open, readFile } from 'node:fs/promises';
import type { Storage } from '../../storage/create-database.js';
import type { Clock } from '../../shared/clock.js';
import type { RecordRepository, StoredRating } from '../record.repository.js';
import { CsvReader, isCsvProblem } from './csv-reader.js';
import { NCAP_FIELDS, type RecordValidator } from './record-validator.js';

/** The operation whose ratings the file holds. */
const NCAP_OPERATION = 'CheckEuroNCap';
/** Ratings written per transaction. */
const BATCH_SIZE = 2000;

/** A file the importer cannot read as a whole: not JSON, not an array, a bad CSV header... */
export class NcapFileError extends Error {
  override readonly name = 'NcapFileError';
}

export type NcapFormat = 'json' | 'csv';

export interface NcapImportOptions {
  /** Import the valid ratings even when some are invalid. */
  readonly skipInvalid: boolean;
  /** Recorded with every rating. */
  readonly source: string;
  /**
   * Called for every invalid rating: the line it starts on, its position in a JSON array (1 = the
   * first item; undefined for CSV) and why.
   */
  readonly onInvalid?: (line: number, item: number | undefined, reason: string) => void;
}

export interface NcapImportSummary {
  readonly format: NcapFormat;
  /** Ratings in the file (JSON items or CSV data rows). */
  readonly read: number;
  readonly imported: number;
  readonly invalid: number;
  /** False when invalid ratings stopped the import (nothing was written). */
  readonly committed: boolean;
}

interface Candidate {
  readonly line: number;
  readonly item: number | undefined;
  readonly value: unknown;
}

const INT_FIELDS = new Set<string>(NCAP_FIELDS.ints);
const BOOL_FIELDS = new Set<string>(NCAP_FIELDS.bools);
const DATE_FIELDS = new Set<string>(NCAP_FIELDS.dates);
const ALL_FIELDS: readonly string[] = [...NCAP_FIELDS.ints, ...NCAP_FIELDS.bools, ...NCAP_FIELDS.strings, ...NCAP_FIELDS.dates];
const FIELD_BY_LOWER = new Map(ALL_FIELDS.map((f) => [f.toLowerCase(), f]));

/**
 * Imports Euro NCAP ratings the operator is licensed to use (upstream-sources.md section 6: there
 * is no public API; the data comes from a licensed file) into the same store the JSON Lines `ncap`
 * records fill: either a JSON array of PreAssessmentSearchResult objects or a CSV whose header
 * names those fields. Each rating is checked by the JSON Lines validator, so the rules, messages
 * and identity (Id, else make|model|year) are the same, and lookups search them in the same way.
 *
 * Rating files are small (Euro NCAP has published a few thousand ratings in all), so a JSON file
 * is parsed whole; CSV is streamed.
 */
export class NcapFileImporter {
  constructor(
    private readonly validator: RecordValidator,
    private readonly records: RecordRepository,
    private readonly storage: Pick<Storage, 'transaction'>,
    private readonly clock: Clock,
    /** Called after each committed batch, so caches drop what it replaced. */
    private readonly afterWrite: () => void = () => undefined,
  ) {}

  async importFile(path: string, options: NcapImportOptions): Promise<NcapImportSummary> {
    const format = await sniffFormat(path);
    const valid: StoredRating[] = [];
    let read = 0;
    let invalid = 0;
    for await (const candidate of format === 'json' ? jsonCandidates(path) : csvCandidates(path)) {
      read += 1;
      if (candidate.value instanceof Problem) {
        invalid += 1;
        options.onInvalid?.(candidate.line, candidate.item, candidate.value.reason);
        continue;
      }
      const outcome = this.validator.validate({ operation: NCAP_OPERATION, ncap: candidate.value });
      if (!outcome.ok || outcome.line.kind !== 'rating') {
        invalid += 1;
        options.onInvalid?.(candidate.line, candidate.item, outcome.ok ? 'not a rating' : outcome.reason);
        continue;
      }
      valid.push({ ...outcome.line.rating, source: options.source });
    }
    if (invalid > 0 && !options.skipInvalid) return { format, read, imported: 0, invalid, committed: false };
    const now = this.clock.now().toISOString();
    for (let i = 0; i < valid.length; i += BATCH_SIZE) {
      const batch = valid.slice(i, i + BATCH_SIZE);
      await this.storage.transaction((tx) => this.records.upsertRatings(tx, batch, now));
      this.afterWrite();
    }
    return { format, read, imported: valid.length, invalid, committed: true };
  }
}

/** A CSV cell that cannot be read at all (the validator never sees it). */
class Problem {
  constructor(readonly reason: string) {}
}

/** JSON when the first character that is not white space opens an array or object; else CSV. */
async function sniffFormat(path: string): Promise<NcapFormat> {
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read({ buffer: Buffer.alloc(4096), position: 0 });
    const head = buffer.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '').trimStart();
    return head.startsWith('[') || head.startsWith('{') ? 'json' : 'csv';
  } finally {
    await handle.close();
  }
}

async function* jsonCandidates(path: string): AsyncGenerator<Candidate> {
  const text = (await readFile(path, 'utf8')).replace(/^\uFEFF/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new NcapFileError(`${path} is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (!Array.isArray(parsed)) throw new NcapFileError(`${path} must hold a JSON array of PreAssessmentSearchResult objects`);
  const lines = itemLines(text);
  for (const [i, value] of (parsed as unknown[]).entries()) yield { line: lines[i] ?? 1, item: i + 1, value };
}

/**
 * The line each item of a top-level JSON array starts on, so errors can point into the file.
 * Only called on text JSON.parse accepted, so the scan can be simple.
 */
function itemLines(text: string): number[] {
  const starts: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectItem = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '\n') {
      line += 1;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') continue;
    if (depth === 1 && expectItem && c !== ']') {
      starts.push(line);
      expectItem = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth += 1;
      if (depth === 1) expectItem = true;
    } else if (c === ']' || c === '}') depth -= 1;
    else if (c === ',' && depth === 1) expectItem = true;
  }
  return starts;
}

/**
 * Reads CSV ratings. The header names PreAssessmentSearchResult fields (any letter case); each
 * cell is converted by its field's type: whole numbers, booleans (`true`/`false`, `1`/`0`) and
 * ISO dates (`2017-05-31` is taken as midnight). A cell that does not convert is passed on as
 * text, so the validator reports it in its usual words. An empty cell leaves a number, boolean or
 * date field out and makes a text field the empty string.
 */
async function* csvCandidates(path: string): AsyncGenerator<Candidate> {
  const reader = await CsvReader.open(path);
  let fields: string[];
  try {
    fields = csvHeader(path, reader.header);
  } catch (error) {
    await reader.close();
    throw error;
  }
  for await (const batch of reader.rows()) {
    for (const record of batch) {
      if (isCsvProblem(record)) {
        yield { line: record.line, item: undefined, value: new Problem(record.error) };
        continue;
      }
      if (record.width !== fields.length) {
        yield { line: record.line, item: undefined, value: new Problem(`has ${record.width} fields, the header has ${fields.length}`) };
        continue;
      }
      const rating: Record<string, unknown> = {};
      fields.forEach((field, i) => {
        const value = convert(field, record.fields[i] ?? '');
        if (value !== undefined) rating[field] = value;
      });
      yield { line: record.line, item: undefined, value: rating };
    }
  }
}

function csvHeader(path: string, header: readonly string[]): string[] {
  const seen = new Set<string>();
  const fields = header.map((raw) => {
    const name = raw.trim();
    const field = FIELD_BY_LOWER.get(name.toLowerCase());
    // Unlike a JSON member, a CSV column has no type of its own: an unknown one cannot be typed.
    if (field === undefined) throw new NcapFileError(`${path}: line 1: unknown column "${name}" (columns are PreAssessmentSearchResult field names: ${ALL_FIELDS.join(', ')})`);
    if (seen.has(field)) throw new NcapFileError(`${path}: line 1: the column "${field}" appears twice`);
    seen.add(field);
    return field;
  });
  for (const required of ['Make', 'Model']) {
    if (!seen.has(required)) throw new NcapFileError(`${path}: line 1: the header has no "${required}" column`);
  }
  return fields;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

function convert(field: string, cell: string): unknown {
  const text = cell.trim();
  if (INT_FIELDS.has(field)) {
    if (text === '') return undefined;
    return /^[+-]?\d+$/.test(text) ? Number(text) : text;
  }
  if (BOOL_FIELDS.has(field)) {
    if (text === '') return undefined;
    const lower = text.toLowerCase();
    if (lower === 'true' || lower === '1') return true;
    if (lower === 'false' || lower === '0') return false;
    return text;
  }
  if (DATE_FIELDS.has(field)) {
    if (text === '') return undefined;
    return ISO_DATE.test(text) ? `${text}T00:00:00` : text;
  }
  return cell;
}

import { createReadStream, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { TextDecoder } from 'node:util';

/** One data record of a CSV file. */
export interface CsvRow {
  /** The line it starts on (1 = the header). */
  readonly line: number;
  /** The fields asked for, in the order asked for (every field when no columns were given). */
  readonly fields: readonly string[];
  /** How many fields the record has, to compare with the header. */
  readonly width: number;
}

/** A record that could not be read; the reader carries on with the next line. */
export interface CsvProblem {
  readonly line: number;
  readonly error: string;
}

export type CsvRecord = CsvRow | CsvProblem;

export const isCsvProblem = (record: CsvRecord): record is CsvProblem => 'error' in record;

/** A file that cannot be imported at all: empty, an unreadable header, a missing column. */
export class CsvFileError extends Error {
  override readonly name = 'CsvFileError';
}

/**
 * The longest record (quoted line breaks included) the reader assembles. A stray opening quote
 * would otherwise swallow the rest of the file into one string; past this it is reported as a
 * problem and reading resumes on the next line, so memory stays bounded whatever the input.
 */
export const MAX_RECORD_CHARS = 1 << 20;

/**
 * Bytes read from the file per chunk. Each chunk becomes one string (joined to the tail of the one
 * before), and 64 KiB keeps it below V8's large-object size (about 128 KiB), so it is allocated and
 * collected in the young generation like the lines cut from it. With 1 MiB chunks, decoding and
 * splitting an RDW register cost about three times the CPU (docs/benchmarks.md, issue 35 round 2).
 */
const CHUNK_BYTES = 64 * 1024;

const INCOMPLETE = Symbol('incomplete');

/** A record's text before it is split: a line, or several when a quoted field spans line breaks. */
interface RawRecord {
  readonly line: number;
  readonly text: string;
}

type Raw = RawRecord | CsvProblem;

/**
 * Splits one record into fields (RFC 4180): comma-separated; a field that starts with a double
 * quote runs to the matching quote, with `""` standing for one quote and commas and line breaks
 * kept. A quote inside an unquoted field is kept as a character, as spreadsheet exports write
 * them. Returns INCOMPLETE when a quoted field is still open at the end of `text`, or the reason
 * the record is malformed.
 */
function splitRecord(text: string, delimiter = ','): string[] | typeof INCOMPLETE | string {
  const code = delimiter.charCodeAt(0);
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (text.charCodeAt(i) === 34 /* " */) {
      let value = '';
      let from = i + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote === -1) return INCOMPLETE;
        if (text.charCodeAt(quote + 1) === 34) {
          value += text.slice(from, quote + 1);
          from = quote + 2;
          continue;
        }
        value += text.slice(from, quote);
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i === text.length) return fields;
      if (text.charCodeAt(i) !== code) return `unexpected character after the closing quote of field ${fields.length}`;
      i += 1;
      continue;
    }
    const comma = text.indexOf(delimiter, i);
    if (comma === -1) {
      fields.push(text.slice(i));
      return fields;
    }
    fields.push(text.slice(i, comma));
    i = comma + 1;
  }
}

/**
 * Which fields of a record to keep: `slot[p]` is where field p goes in the output, or -1. Picking
 * a dozen of a register row's ~100 fields, rather than splitting all of them, spares ~90 strings
 * per row (garbage collection had taken a quarter of the import's CPU time, largely for them).
 */
class Projection {
  private readonly slot: Int32Array;

  constructor(
    readonly columns: readonly number[],
    private readonly delimiter: string,
  ) {
    const last = Math.max(-1, ...columns);
    this.slot = new Int32Array(last + 1).fill(-1);
    columns.forEach((p, k) => {
      if (p >= 0) this.slot[p] = k;
    });
  }

  /** The picked fields of a line with no quote in it (the common case: a plain scan). */
  plain(line: number, text: string): CsvRow {
    const fields = new Array<string>(this.columns.length).fill('');
    const { slot } = this;
    let position = 0;
    let from = 0;
    for (;;) {
      const comma = text.indexOf(this.delimiter, from);
      if (position < slot.length) {
        const k = slot[position] ?? -1;
        if (k !== -1) fields[k] = comma === -1 ? text.slice(from) : text.slice(from, comma);
      }
      position += 1;
      if (comma === -1) break;
      from = comma + 1;
    }
    return { line, fields, width: position };
  }

  /** The picked fields of a fully split record. */
  pick(line: number, all: readonly string[]): CsvRow {
    return { line, fields: this.columns.map((p) => (p >= 0 ? (all[p] ?? '') : '')), width: all.length };
  }
}

/** Where a CSV's bytes come from: a file, or any byte stream (a ZIP entry). */
export interface CsvInput {
  /** Name for messages (a path, or `archive.zip:entry.csv`). */
  readonly name: string;
  readonly bytes: AsyncIterable<Buffer>;
  /** Total bytes, for progress (0 when unknown). */
  readonly size: number;
  /** Bytes read so far. */
  bytesRead(): number;
  /** Stops reading (the reader calls it when done or abandoned). */
  close(): void;
}

export interface CsvOptions {
  /** One character; default `,`. */
  readonly delimiter?: string;
  /**
   * `utf-8` (the default), or `detect`: UTF-8 when the first chunk is valid UTF-8, else
   * Windows-1251 (Ukraine's registers come in either, with or without a byte-order mark).
   */
  readonly encoding?: 'utf-8' | 'detect';
}

/** A file as a CsvInput. */
export function fileInput(path: string): CsvInput {
  const stream = createReadStream(path, { highWaterMark: CHUNK_BYTES });
  return {
    name: path,
    bytes: stream as AsyncIterable<Buffer>,
    get size() {
      return statSync(path).size;
    },
    bytesRead: () => stream.bytesRead,
    close: () => stream.destroy(),
  };
}

/** The text of a byte stream, decoded as `encoding` says (CsvOptions). */
async function* decoded(bytes: AsyncIterable<Buffer>, encoding: 'utf-8' | 'detect', name: string): AsyncGenerator<string> {
  if (encoding === 'utf-8') {
    // Node's StringDecoder (what a stream's setEncoding uses), not TextDecoder: on a 150 MB RDW
    // register TextDecoder's chunks left the live heap spiking by up to 10 MiB more between
    // collections (test/import-bulk/rdw-memory.slow.test.ts measures it).
    const utf8 = new StringDecoder('utf8');
    for await (const chunk of bytes) yield utf8.write(chunk);
    const rest = utf8.end();
    if (rest !== '') yield rest;
    return;
  }
  let decoder: TextDecoder | undefined;
  let offset = 0;
  for await (const chunk of bytes) {
    if (decoder === undefined) {
      const utf8 = new TextDecoder('utf-8', { fatal: true });
      try {
        const text = utf8.decode(chunk, { stream: true });
        decoder = utf8;
        offset += chunk.length;
        yield text;
        continue;
      } catch {
        decoder = new TextDecoder('windows-1251');
      }
    }
    try {
      yield decoder.decode(chunk, { stream: true });
    } catch {
      throw new CsvFileError(`${name}: not valid UTF-8 after byte ${offset} (the start of the file was)`);
    }
    offset += chunk.length;
  }
  if (decoder) {
    const rest = decoder.decode();
    if (rest !== '') yield rest;
  }
}

/**
 * Streams a CSV file whose first record is a header, in batches of records (one batch per
 * chunk read, so the consumer pays one await per chunk, not per row). Tolerates a byte-order mark,
 * CRLF line ends and a missing final line break; skips blank lines. Line numbers count physical
 * lines, so a record with a quoted line break reports the line it starts on.
 */
export class CsvReader {
  private readonly source: AsyncGenerator<Raw[]>;
  /** Records of the first batch that came after the header. */
  private pending: Raw[] = [];

  private constructor(
    private readonly input: CsvInput,
    /** The header's fields. */
    readonly header: readonly string[],
    source: AsyncGenerator<Raw[]>,
    pending: Raw[],
    private readonly delimiter: string,
  ) {
    this.source = source;
    this.pending = pending;
  }

  /** Name for messages: the path, or the ZIP entry. */
  get path(): string {
    return this.input.name;
  }

  /** Opens a file (or an input) and reads its header; throws CsvFileError when there is none. */
  static async open(from: string | CsvInput, options: CsvOptions = {}): Promise<CsvReader> {
    const input = typeof from === 'string' ? fileInput(from) : from;
    const delimiter = options.delimiter ?? ',';
    const path = input.name;
    const source = rawRecords(input, decoded(input.bytes, options.encoding ?? 'utf-8', path), delimiter);
    for (;;) {
      let next: IteratorResult<Raw[]>;
      try {
        next = await source.next();
      } catch (error) {
        input.close();
        throw error;
      }
      if (next.done === true) throw new CsvFileError(`${path}: the file is empty: no header line`);
      const [first, ...rest] = next.value;
      if (first === undefined) continue;
      if ('error' in first) {
        await source.return(undefined);
        throw new CsvFileError(`${path}: line ${first.line}: ${first.error}`);
      }
      const header = splitRecord(first.text, delimiter);
      if (typeof header !== 'object') {
        await source.return(undefined);
        throw new CsvFileError(`${path}: line ${first.line}: ${typeof header === 'string' ? header : 'a quoted field is not closed'}`);
      }
      return new CsvReader(input, header, source, rest, delimiter);
    }
  }

  /** File size in bytes, for progress. */
  get size(): number {
    return this.input.size;
  }

  /** Bytes read so far (slightly ahead of the records handed out). */
  get bytesRead(): number {
    return this.input.bytesRead();
  }

  /** Closes the file without reading on (rows() closes it by itself when it ends). */
  async close(): Promise<void> {
    await this.source.return(undefined);
  }

  /**
   * The data records, in batches. `columns` picks header positions (-1 gives ''); without it,
   * every field. Closes the file when done or abandoned.
   */
  async *rows(columns?: readonly number[]): AsyncGenerator<CsvRecord[]> {
    const { delimiter } = this;
    const projection = columns ? new Projection(columns, delimiter) : undefined;
    const split = (raw: Raw): CsvRecord => {
      if ('error' in raw) return raw;
      if (projection && !raw.text.includes('"')) return projection.plain(raw.line, raw.text);
      const all = raw.text.includes('"') ? splitRecord(raw.text, delimiter) : raw.text.split(delimiter);
      // rawRecords only hands out complete records.
      if (typeof all !== 'object') return { line: raw.line, error: typeof all === 'string' ? all : 'a quoted field is not closed' };
      return projection ? projection.pick(raw.line, all) : { line: raw.line, fields: all, width: all.length };
    };
    try {
      if (this.pending.length > 0) {
        const first = this.pending.map(split);
        this.pending = [];
        yield first;
      }
      for await (const batch of this.source) yield batch.map(split);
    } finally {
      await this.source.return(undefined);
    }
  }
}

/** The input's records, unsplit, in batches of one chunk. */
async function* rawRecords(input: CsvInput, chunks: AsyncIterable<string>, delimiter: string): AsyncGenerator<Raw[]> {
  let carry = '';
  let lineNumber = 0;
  /** An open quoted field: the record so far and where it started. */
  let open: { line: number; text: string } | undefined;
  let out: Raw[] = [];

  const take = (raw: string): void => {
    lineNumber += 1;
    let line = raw.charCodeAt(raw.length - 1) === 13 /* \r */ ? raw.slice(0, -1) : raw;
    if (lineNumber === 1 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    if (open) {
      open.text += `\n${line}`;
      const split = splitRecord(open.text, delimiter);
      if (split === INCOMPLETE) {
        if (open.text.length > MAX_RECORD_CHARS) {
          out.push({ line: open.line, error: `a quoted field is not closed within ${MAX_RECORD_CHARS} characters` });
          open = undefined;
        }
        return;
      }
      out.push(typeof split === 'string' ? { line: open.line, error: split } : { line: open.line, text: open.text });
      open = undefined;
      return;
    }
    if (line === '') return;
    // Most rows of a register export have no quote at all and need no closer look.
    if (line.includes('"') && splitRecord(line, delimiter) === INCOMPLETE) open = { line: lineNumber, text: line };
    else out.push({ line: lineNumber, text: line });
  };

  try {
    /** True while skipping the rest of an over-long line. */
    let skipping = false;
    for await (const chunk of chunks) {
      let text = carry + chunk;
      if (skipping) {
        const end = text.indexOf('\n');
        if (end === -1) continue;
        skipping = false;
        text = text.slice(end + 1);
      }
      let from = 0;
      for (;;) {
        const newline = text.indexOf('\n', from);
        if (newline === -1) break;
        take(text.slice(from, newline));
        from = newline + 1;
      }
      carry = text.slice(from);
      if (carry.length > MAX_RECORD_CHARS) {
        // One physical line longer than any record we accept: report it and skip to its end.
        lineNumber += 1;
        out.push({ line: lineNumber, error: `the line is longer than ${MAX_RECORD_CHARS} characters` });
        carry = '';
        skipping = true;
      }
      if (out.length > 0) {
        yield out;
        out = [];
      }
    }
    if (carry !== '') take(carry);
    if (open) out.push({ line: open.line, error: 'a quoted field is not closed before the end of the file' });
    if (out.length > 0) yield out;
  } finally {
    input.close();
  }
}

import { TextDecoder } from 'node:util';
import type { InputRule } from '../../catalogue/input-rules.js';
import { fileInput, type CsvInput } from './csv-reader.js';
import { RegisterFileError, type RegisterReadSummary, type RegisterSink } from './staged-register-importer.js';
import { DmrRecordBuilder } from './dmr-record.js';
import { DmrXmlReader } from './dmr-xml-reader.js';
import { isZipFile, zipEntryInputs } from './zip-input.js';

/** The operation whose dataset the DMR export fills. */
export const DENMARK_OPERATION = 'CheckDenmark';

export { BAD_PLATE, DMR_NAMESPACE, NO_MAKE, NO_PLATE } from './dmr-record.js';

/** The XML of the argument: the `.xml` entry of the ZIP, streamed, or an XML file. */
async function* inputsOf(path: string): AsyncGenerator<CsvInput> {
  if (await isZipFile(path)) yield* zipEntryInputs(path, (name) => /\.xml$/i.test(name));
  else yield fileInput(path);
}

/** TextDecoder's options for a chunk of a longer text. */
const STREAM = { stream: true } as const;

/**
 * One DMR XML document, pushed as chunks of bytes (which may end anywhere, inside a tag or a
 * character): each usable record goes to `record`, the others are counted by reason in `skipped`.
 * `write` and `end` throw an XmlSyntaxError (with its line) or an Error where the document is not
 * a DMR export; `records` then says how many whole records came before.
 */
export class DmrDocumentReader {
  readonly skipped: Record<string, number> = {};
  private readonly builder: DmrRecordBuilder;
  private readonly xml: DmrXmlReader;
  private readonly decoder = new TextDecoder('utf-8');

  constructor(plateRule: InputRule, record: (key: string, rank: string, document: string) => void, onRecord: (records: number) => void = () => undefined) {
    this.builder = new DmrRecordBuilder(plateRule, (taken, sequence) => {
      onRecord(sequence);
      if ('skip' in taken) this.skipped[taken.skip] = (this.skipped[taken.skip] ?? 0) + 1;
      else record(taken.key, taken.rank, taken.document);
    });
    this.xml = new DmrXmlReader(this.builder);
  }

  /** Whole `Statistik` records read so far. */
  get records(): number {
    return this.builder.records;
  }

  write(bytes: Uint8Array): void {
    this.xml.write(this.decoder.decode(bytes, STREAM));
  }

  end(): void {
    const rest = this.decoder.decode();
    if (rest !== '') this.xml.write(rest);
    this.xml.end();
  }
}

/**
 * Reads the DMR export `ESStatistikListeModtag` (upstream-sources.md §10.2) into the sink, one
 * `Statistik` element at a time (DmrDocumentReader). A record without a plate or a make is counted
 * and passed over; XML that is not well formed, or ends before its root closes (a cut-short
 * download), stops the import with the record number and line (nothing is written).
 */
export async function readDmrFile(path: string, plateRule: InputRule, sink: RegisterSink, progressEvery = 10_000): Promise<RegisterReadSummary> {
  let entries = 0;
  let reader: DmrDocumentReader | undefined;
  for await (const input of inputsOf(path)) {
    entries += 1;
    if (entries > 1) {
      input.close();
      throw new RegisterFileError(`${path}: the ZIP file holds more than one XML file`);
    }
    const document = new DmrDocumentReader(plateRule, (key, rank, json) => {
      sink.record(key, rank, json);
    }, (records) => {
      if (records % progressEvery === 0) sink.progress(records, input.bytesRead(), input.size);
    });
    reader = document;
    try {
      for await (const chunk of input.bytes) document.write(chunk);
      document.end();
    } catch (error) {
      input.close();
      if (error instanceof RegisterFileError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new RegisterFileError(`${input.name}: record ${document.records + 1}: ${reason}`);
    }
    sink.progress(document.records, input.size, input.size);
  }
  if (entries === 0 || reader === undefined) throw new RegisterFileError(`${path}: the ZIP file holds no XML file`);
  return { rowsRead: reader.records, skipped: reader.skipped };
}

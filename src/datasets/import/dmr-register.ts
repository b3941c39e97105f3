import { TextDecoder } from 'node:util';
import type { InputRule } from '../../catalogue/input-rules.js';
import { fileInput, type CsvInput } from './csv-reader.js';
import { RegisterFileError, type RegisterReadSummary, type RegisterSink } from './staged-register-importer.js';
import { DmrXmlReader, type XmlHandler } from './dmr-xml-reader.js';
import { isZipFile, zipEntryInputs } from './zip-input.js';

/** The operation whose dataset the DMR export fills. */
export const DENMARK_OPERATION = 'CheckDenmark';

/** The export's namespace (upstream-sources.md §10.2); the original's ExtendedInformation carries it as `@xmlns`. */
export const DMR_NAMESPACE = 'http://skat.dk/dmr/2007/05/31/';

/** "Not stated" and "unknown" sentinels of the register. */
const SENTINELS = new Set(['UOPLYST', 'Ukendt']);

export const NO_PLATE = 'without a plate (RegistreringNummerNummer)';
export const NO_MAKE = 'without a make (KoeretoejMaerkeTypeNavn)';
export const BAD_PLATE = 'with a plate that is not letters and digits';

/** An element's content as the record holds it: text, or its children by local name (repeated ones as an array). */
type XmlValue = string | XmlObject | XmlValue[];
interface XmlObject {
  [name: string]: XmlValue;
}

/** An element being read. */
interface Frame {
  readonly name: string;
  children: XmlObject | undefined;
  text: string;
}

const localName = (qualified: string): string => {
  const colon = qualified.indexOf(':');
  return colon === -1 ? qualified : qualified.slice(colon + 1);
};

/** The first text of `name` anywhere under `value`, depth first. */
function find(value: XmlValue | undefined, name: string): string | undefined {
  if (value === undefined || typeof value === 'string') return undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = find(item, name);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const own = value[name];
  if (typeof own === 'string') return own;
  for (const child of Object.values(value)) {
    const found = find(child, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A value that says something: not empty and not a sentinel. */
const stated = (value: string | undefined): string | undefined => (value === undefined || value === '' || SENTINELS.has(value) ? undefined : value);

/**
 * Which record of a plate to keep (§10.2: "the record with KoeretoejRegistreringStatus =
 * Registreret, else the newest status date"): live first, then the latest status date, then the
 * later record in the file.
 */
function rankOf(record: XmlObject, sequence: number): string {
  const status = record.KoeretoejRegistreringStatus;
  const live = status === 'Registreret' ? '1' : '0';
  const dateText = record.KoeretoejRegistreringStatusDato;
  const time = typeof dateText === 'string' ? Date.parse(dateText) : Number.NaN;
  const date = Number.isNaN(time) ? '0000-00-00T00:00:00.000Z' : new Date(time).toISOString();
  return `${live}|${date}|${String(sequence).padStart(12, '0')}`;
}

/**
 * The CheckDenmark vehicleJson of one `Statistik` record, in the shape of the original's answers
 * (reference recording torqvoice/DK.json): the common members, then the whole record under
 * `ExtendedInformation`. docs/import-format.md has the table.
 */
export function dmrVehicleJson(record: XmlObject): Record<string, unknown> | undefined {
  const make = stated(find(record, 'KoeretoejMaerkeTypeNavn'));
  if (make === undefined) return undefined;
  const model = stated(find(record, 'KoeretoejModelTypeNavn')) ?? '';
  const variant = stated(find(record, 'KoeretoejVariantTypeNavn'));
  const first = find(record, 'KoeretoejOplysningFoersteRegistreringDato');
  const modelYear = find(record, 'KoeretoejOplysningModelAar');
  const year = first !== undefined && /^\d{4}/.test(first) ? first.slice(0, 4) : modelYear !== undefined && /^\d{4}$/.test(modelYear) ? modelYear : '';
  const text = (value: string | undefined): { CurrentTextValue: string } => ({ CurrentTextValue: value ?? '' });
  return {
    ABICode: '',
    Description: [make, model, variant].filter((part) => part !== undefined && part !== '').join(' '),
    RegistrationYear: year,
    CarMake: text(make),
    CarModel: text(model),
    EngineSize: text(find(record, 'KoeretoejMotorSlagVolumen')),
    FuelType: text(find(record, 'DrivkraftTypeNavn')),
    MakeDescription: text(make),
    ModelDescription: text(model),
    Immobiliser: text(''),
    NumberOfSeats: text(''),
    DriverSide: text(''),
    BodyStyle: text(''),
    VechileIdentificationNumber: find(record, 'KoeretoejOplysningStelNummer') ?? '',
    ExtendedInformation: { '@xmlns': DMR_NAMESPACE, ...record },
  };
}

/** The XML of the argument: the `.xml` entry of the ZIP, streamed, or an XML file. */
async function* inputsOf(path: string): AsyncGenerator<CsvInput> {
  if (await isZipFile(path)) yield* zipEntryInputs(path, (name) => /\.xml$/i.test(name));
  else yield fileInput(path);
}

/** Why a record carries nothing to import, or its plate, rank and document. */
type Taken = { readonly skip: string } | { readonly key: string; readonly rank: string; readonly document: string };

/** The plate, rank and CheckDenmark document of one `Statistik` record, or why it has none. */
function takeRecord(record: XmlObject, sequence: number, plateRule: InputRule): Taken {
  const plateText = typeof record.RegistreringNummerNummer === 'string' ? record.RegistreringNummerNummer : '';
  if (plateText === '') return { skip: NO_PLATE };
  const vehicle = dmrVehicleJson(record);
  if (vehicle === undefined) return { skip: NO_MAKE };
  const plate = plateRule.normalise(plateText);
  if (!plate.ok) return { skip: BAD_PLATE };
  return { key: plate.value, rank: rankOf(record, sequence), document: JSON.stringify(vehicle) };
}

/**
 * Builds one `Statistik` record at a time from the reader's events (DmrXmlReader): only the record
 * being read is held, so memory stays flat whatever the file size.
 */
class RecordBuilder implements XmlHandler {
  private readonly stack: Frame[] = [];
  /** Depth of the element stack where the current Statistik sits, or -1 outside one. */
  private recordDepth = -1;
  private depth = 0;
  records = 0;

  constructor(private readonly onRecord: (record: XmlObject, sequence: number) => void) {}

  open(qualified: string): void {
    this.depth += 1;
    const name = localName(qualified);
    if (this.depth === 1 && name !== 'ESStatistikListeModtag_I') throw new Error(`the root element is ${name}, not ESStatistikListeModtag_I`);
    if (this.recordDepth === -1) {
      if (name === 'Statistik') {
        this.recordDepth = this.depth;
        this.stack.push({ name, children: undefined, text: '' });
      }
      return;
    }
    const parent = this.stack[this.stack.length - 1];
    if (parent && parent.children === undefined) parent.children = {};
    this.stack.push({ name, children: undefined, text: '' });
  }

  text(text: string): void {
    const top = this.stack[this.stack.length - 1];
    if (top) top.text += text;
  }

  close(): void {
    this.depth -= 1;
    if (this.recordDepth === -1) return;
    const frame = this.stack.pop();
    if (!frame) return;
    const value: XmlValue = frame.children ?? frame.text.trim();
    const parent = this.stack[this.stack.length - 1];
    if (parent) {
      const siblings = (parent.children ??= {});
      const existing = siblings[frame.name];
      siblings[frame.name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
      return;
    }
    // The Statistik element itself closed: one whole record.
    this.recordDepth = -1;
    this.records += 1;
    this.onRecord(frame.children ?? {}, this.records);
  }
}

/**
 * One DMR XML document, pushed as chunks of bytes (which may end anywhere, inside a tag or a
 * character): each usable record goes to `record`, the others are counted by reason in `skipped`.
 * `write` and `end` throw an XmlSyntaxError (with its line) or an Error where the document is not
 * a DMR export; `records` then says how many whole records came before.
 */
export class DmrDocumentReader {
  readonly skipped: Record<string, number> = {};
  private readonly builder: RecordBuilder;
  private readonly xml: DmrXmlReader;
  private readonly decoder = new TextDecoder('utf-8');

  constructor(plateRule: InputRule, record: (key: string, rank: string, document: string) => void, onRecord: (records: number) => void = () => undefined) {
    this.builder = new RecordBuilder((fields, sequence) => {
      onRecord(sequence);
      const taken = takeRecord(fields, sequence, plateRule);
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
    this.xml.write(this.decoder.decode(bytes, { stream: true }));
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

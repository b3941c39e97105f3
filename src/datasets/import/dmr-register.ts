import { TextDecoder } from 'node:util';
import { SaxesParser } from 'saxes';
import type { InputRule } from '../../catalogue/input-rules.js';
import { fileInput, type CsvInput } from './csv-reader.js';
import { RegisterFileError, type RegisterReadSummary, type RegisterSink } from './staged-register-importer.js';
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

/**
 * Reads the DMR export `ESStatistikListeModtag` (upstream-sources.md §10.2) into the sink, one
 * `Statistik` element at a time: a pull of text chunks into a SAX parser (saxes) that builds only
 * the record being read, so memory stays flat whatever the file size. A record without a plate or
 * a make is counted and passed over; XML that is not well formed, or ends before its root closes
 * (a cut-short download), stops the import with the record number (nothing is written).
 */
export async function readDmrFile(path: string, plateRule: InputRule, sink: RegisterSink, progressEvery = 10_000): Promise<RegisterReadSummary> {
  const skipped: Record<string, number> = {};
  const skip = (reason: string): void => {
    skipped[reason] = (skipped[reason] ?? 0) + 1;
  };
  let records = 0;
  let entries = 0;
  for await (const input of inputsOf(path)) {
    entries += 1;
    if (entries > 1) {
      input.close();
      throw new RegisterFileError(`${path}: the ZIP file holds more than one XML file`);
    }
    const parser = new SaxesParser({ xmlns: false, position: false });
    const stack: Frame[] = [];
    /** Depth of the element stack where the current Statistik sits, or -1 outside one. */
    let recordDepth = -1;
    let depth = 0;
    // An object, not a let: it is set inside a callback the type-checker cannot follow.
    const seen = { root: false };
    parser.on('opentag', (tag) => {
      depth += 1;
      const name = localName(tag.name);
      if (depth === 1) {
        seen.root = true;
        if (name !== 'ESStatistikListeModtag_I') throw new Error(`the root element is ${name}, not ESStatistikListeModtag_I`);
      }
      if (recordDepth === -1) {
        if (name === 'Statistik') {
          recordDepth = depth;
          stack.push({ name, children: undefined, text: '' });
        }
        return;
      }
      const parent = stack[stack.length - 1];
      if (parent && parent.children === undefined) parent.children = {};
      stack.push({ name, children: undefined, text: '' });
    });
    parser.on('text', (text) => {
      const top = stack[stack.length - 1];
      if (top) top.text += text;
    });
    parser.on('closetag', () => {
      depth -= 1;
      if (recordDepth === -1) return;
      const frame = stack.pop();
      if (!frame) return;
      const value: XmlValue = frame.children ?? frame.text.trim();
      const parent = stack[stack.length - 1];
      if (parent) {
        const siblings = (parent.children ??= {});
        const existing = siblings[frame.name];
        siblings[frame.name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
        return;
      }
      // The Statistik element itself closed: one whole record.
      recordDepth = -1;
      records += 1;
      if (records % progressEvery === 0) sink.progress(records, input.bytesRead(), input.size);
      take(frame.children ?? {}, records);
    });
    const take = (record: XmlObject, sequence: number): void => {
      const plateText = typeof record.RegistreringNummerNummer === 'string' ? record.RegistreringNummerNummer : '';
      if (plateText === '') {
        skip(NO_PLATE);
        return;
      }
      const vehicle = dmrVehicleJson(record);
      if (vehicle === undefined) {
        skip(NO_MAKE);
        return;
      }
      const plate = plateRule.normalise(plateText);
      if (!plate.ok) {
        skip(BAD_PLATE);
        return;
      }
      sink.record(plate.value, rankOf(record, sequence), JSON.stringify(vehicle));
    };
    const decoder = new TextDecoder('utf-8');
    const fail = (error: unknown): RegisterFileError => {
      if (error instanceof RegisterFileError) return error;
      const reason = error instanceof Error ? error.message : String(error);
      return new RegisterFileError(`${input.name}: record ${records + 1}: ${reason}`);
    };
    try {
      for await (const chunk of input.bytes) parser.write(decoder.decode(chunk, { stream: true }));
      parser.write(decoder.decode());
      parser.close();
    } catch (error) {
      input.close();
      throw fail(error);
    }
    if (!seen.root) throw new RegisterFileError(`${input.name}: no XML root element: not a DMR export`);
    sink.progress(records, input.size, input.size);
  }
  if (entries === 0) throw new RegisterFileError(`${path}: the ZIP file holds no XML file`);
  return { rowsRead: records, skipped };
}

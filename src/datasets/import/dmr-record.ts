import type { InputRule } from '../../catalogue/input-rules.js';
import type { XmlHandler } from './dmr-xml-reader.js';

/** The export's namespace (upstream-sources.md §10.2); the original's ExtendedInformation carries it as `@xmlns`. */
export const DMR_NAMESPACE = 'http://skat.dk/dmr/2007/05/31/';

export const NO_PLATE = 'without a plate (RegistreringNummerNummer)';
export const NO_MAKE = 'without a make (KoeretoejMaerkeTypeNavn)';
export const BAD_PLATE = 'with a plate that is not letters and digits';

/** "Not stated" and "unknown" sentinels of the register. */
const SENTINELS = new Set(['UOPLYST', 'Ukendt']);

/** An element's content as the record holds it: text, or its children by local name (repeated ones as an array). */
type XmlValue = string | XmlObject | XmlValue[];
export interface XmlObject {
  [name: string]: XmlValue;
}

/** An element being read. */
interface Frame {
  readonly name: string;
  children: XmlObject | undefined;
  text: string;
}

/**
 * The elements the document's common members are read from, each by the first text of its name
 * (`find`). The builder notes each as it closes, so a record that names each at most once, as the
 * export's do, needs no search.
 */
const LEAF_NAMES = new Set([
  'KoeretoejMaerkeTypeNavn',
  'KoeretoejModelTypeNavn',
  'KoeretoejVariantTypeNavn',
  'KoeretoejOplysningFoersteRegistreringDato',
  'KoeretoejOplysningModelAar',
  'KoeretoejMotorSlagVolumen',
  'DrivkraftTypeNavn',
  'KoeretoejOplysningStelNummer',
]);

/** Of each LEAF_NAMES element in a record: its text, or undefined where it came more than once or with children (then `find` decides). */
type Leaves = Map<string, string | undefined>;

const localName = (qualified: string): string => {
  const colon = qualified.indexOf(':');
  return colon === -1 ? qualified : qualified.slice(colon + 1);
};

/** The first text of `name` anywhere under `value`, depth first (a repeated element's texts are not found). */
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

/** What `find(record, name)` gives, from the builder's notes where they decide it. */
function leaf(record: XmlObject, leaves: Leaves, name: string): string | undefined {
  if (!leaves.has(name)) return undefined;
  return leaves.get(name) ?? find(record, name);
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

const json = (text: string | undefined): string => JSON.stringify(text ?? '');
const NAMESPACE_MEMBER = `"@xmlns":${JSON.stringify(DMR_NAMESPACE)}`;

/**
 * The CheckDenmark vehicleJson of one `Statistik` record, in the shape of the original's answers
 * (reference recording torqvoice/DK.json): the common members, then the whole record under
 * `ExtendedInformation`. docs/import-format.md has the table. Written as text rather than built
 * as an object for JSON.stringify (the members are fixed; only the record is stringified), the
 * same bytes: test/import-bulk/dmr-xml-reader.test.ts compares them with JSON.stringify's.
 */
function dmrDocument(record: XmlObject, leaves: Leaves): string | undefined {
  const make = stated(leaf(record, leaves, 'KoeretoejMaerkeTypeNavn'));
  if (make === undefined) return undefined;
  const model = stated(leaf(record, leaves, 'KoeretoejModelTypeNavn')) ?? '';
  const variant = stated(leaf(record, leaves, 'KoeretoejVariantTypeNavn'));
  const first = leaf(record, leaves, 'KoeretoejOplysningFoersteRegistreringDato');
  const modelYear = leaf(record, leaves, 'KoeretoejOplysningModelAar');
  const year = first !== undefined && /^\d{4}/.test(first) ? first.slice(0, 4) : modelYear !== undefined && /^\d{4}$/.test(modelYear) ? modelYear : '';
  const description = variant === undefined ? (model === '' ? make : `${make} ${model}`) : model === '' ? `${make} ${variant}` : `${make} ${model} ${variant}`;
  const makeJson = `{"CurrentTextValue":${json(make)}}`;
  const modelJson = `{"CurrentTextValue":${json(model)}}`;
  const members = JSON.stringify(record);
  const extended = members === '{}' ? `{${NAMESPACE_MEMBER}}` : `{${NAMESPACE_MEMBER},${members.slice(1)}`;
  return (
    `{"ABICode":"","Description":${json(description)},"RegistrationYear":${json(year)},"CarMake":${makeJson},"CarModel":${modelJson},` +
    `"EngineSize":{"CurrentTextValue":${json(leaf(record, leaves, 'KoeretoejMotorSlagVolumen'))}},"FuelType":{"CurrentTextValue":${json(leaf(record, leaves, 'DrivkraftTypeNavn'))}},` +
    `"MakeDescription":${makeJson},"ModelDescription":${modelJson},"Immobiliser":{"CurrentTextValue":""},"NumberOfSeats":{"CurrentTextValue":""},` +
    `"DriverSide":{"CurrentTextValue":""},"BodyStyle":{"CurrentTextValue":""},"VechileIdentificationNumber":${json(leaf(record, leaves, 'KoeretoejOplysningStelNummer'))},` +
    `"ExtendedInformation":${extended}}`
  );
}

/** Why a record carries nothing to import, or its plate, rank and document. */
export type Taken = { readonly skip: string } | { readonly key: string; readonly rank: string; readonly document: string };

/** The plate, rank and CheckDenmark document of one `Statistik` record, or why it has none. */
function takeRecord(record: XmlObject, leaves: Leaves, sequence: number, plateRule: InputRule): Taken {
  const plateText = typeof record.RegistreringNummerNummer === 'string' ? record.RegistreringNummerNummer : '';
  if (plateText === '') return { skip: NO_PLATE };
  const document = dmrDocument(record, leaves);
  if (document === undefined) return { skip: NO_MAKE };
  const plate = plateRule.normalise(plateText);
  if (!plate.ok) return { skip: BAD_PLATE };
  return { key: plate.value, rank: rankOf(record, sequence), document };
}

/**
 * Builds one `Statistik` record at a time from the reader's events (DmrXmlReader) and hands what
 * it carries to `onRecord`: only the record being read is held, so memory stays flat whatever the
 * file size.
 */
export class DmrRecordBuilder implements XmlHandler {
  private readonly stack: Frame[] = [];
  private readonly leaves: Leaves = new Map();
  /** Depth of the element stack where the current Statistik sits, or -1 outside one. */
  private recordDepth = -1;
  private depth = 0;
  /** Whole `Statistik` records read so far. */
  records = 0;

  constructor(
    private readonly plateRule: InputRule,
    private readonly onRecord: (taken: Taken, sequence: number) => void,
  ) {}

  open(qualified: string): void {
    this.depth += 1;
    const name = localName(qualified);
    if (this.depth === 1 && name !== 'ESStatistikListeModtag_I') throw new Error(`the root element is ${name}, not ESStatistikListeModtag_I`);
    if (this.recordDepth === -1) {
      if (name === 'Statistik') {
        this.recordDepth = this.depth;
        this.leaves.clear();
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
      const name = frame.name;
      if (LEAF_NAMES.has(name)) this.leaves.set(name, this.leaves.has(name) || typeof value !== 'string' ? undefined : value);
      const siblings = (parent.children ??= {});
      const existing = siblings[name];
      siblings[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
      return;
    }
    // The Statistik element itself closed: one whole record.
    this.recordDepth = -1;
    this.records += 1;
    this.onRecord(takeRecord(frame.children ?? {}, this.leaves, this.records, this.plateRule), this.records);
  }
}

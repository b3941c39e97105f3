import { TextDecoder } from 'node:util';
import { SaxesParser } from 'saxes';
import type { InputRule } from '../../src/catalogue/input-rules.js';
import { BAD_PLATE, DMR_NAMESPACE, NO_MAKE, NO_PLATE } from '../../src/datasets/import/dmr-register.js';

/**
 * The judge of the DMR import's hand-written XML reader (src/datasets/import/dmr-xml-reader.ts):
 * the import as it read the export with saxes before issue 35, kept verbatim apart from CDATA
 * (saxes reports it as its own event, which the old reader dropped; the import now reads it as
 * text). It builds every record and document the slow, obvious way, so the differential test
 * compares what the import writes, not only the XML events.
 */

type XmlValue = string | XmlObject | XmlValue[];
interface XmlObject {
  [name: string]: XmlValue;
}
interface Frame {
  readonly name: string;
  children: XmlObject | undefined;
  text: string;
}

const SENTINELS = new Set(['UOPLYST', 'Ukendt']);
const localName = (qualified: string): string => {
  const colon = qualified.indexOf(':');
  return colon === -1 ? qualified : qualified.slice(colon + 1);
};

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

const stated = (value: string | undefined): string | undefined => (value === undefined || value === '' || SENTINELS.has(value) ? undefined : value);

function rankOf(record: XmlObject, sequence: number): string {
  const status = record.KoeretoejRegistreringStatus;
  const live = status === 'Registreret' ? '1' : '0';
  const dateText = record.KoeretoejRegistreringStatusDato;
  const time = typeof dateText === 'string' ? Date.parse(dateText) : Number.NaN;
  const date = Number.isNaN(time) ? '0000-00-00T00:00:00.000Z' : new Date(time).toISOString();
  return `${live}|${date}|${String(sequence).padStart(12, '0')}`;
}

function dmrVehicleJson(record: XmlObject): Record<string, unknown> | undefined {
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

/** What one document gave: the records in order, the skipped ones by reason, or the error that stopped it. */
export interface DmrOutcome {
  readonly written: ReadonlyArray<readonly [key: string, rank: string, document: string]>;
  readonly skipped: Readonly<Record<string, number>>;
  readonly records: number;
  readonly error?: string;
}

/** Reads a document given as chunks of bytes with saxes, as the import did. */
export function saxesDmrOutcome(chunks: Iterable<Uint8Array>, plateRule: InputRule): DmrOutcome {
  const written: Array<readonly [string, string, string]> = [];
  const skipped: Record<string, number> = {};
  const skip = (reason: string): void => {
    skipped[reason] = (skipped[reason] ?? 0) + 1;
  };
  let records = 0;
  const parser = new SaxesParser({ xmlns: false, position: false });
  const stack: Frame[] = [];
  let recordDepth = -1;
  let depth = 0;
  const seen = { root: false };
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
    written.push([plate.value, rankOf(record, sequence), JSON.stringify(vehicle)]);
  };
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
  const onText = (text: string): void => {
    const top = stack[stack.length - 1];
    if (top) top.text += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
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
    recordDepth = -1;
    records += 1;
    take(frame.children ?? {}, records);
  });
  const decoder = new TextDecoder('utf-8');
  try {
    for (const chunk of chunks) parser.write(decoder.decode(chunk, { stream: true }));
    parser.write(decoder.decode());
    parser.close();
    if (!seen.root) throw new Error('no root element');
  } catch (error) {
    return { written, skipped, records, error: error instanceof Error ? error.message : String(error) };
  }
  return { written, skipped, records };
}

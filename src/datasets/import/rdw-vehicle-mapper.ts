import type { InputRule } from '../../catalogue/input-rules.js';
import type { CsvRow } from './csv-reader.js';
import { locateColumns, REGISTER } from './rdw-columns.js';

export type RdwRowCheck = { ok: true; key: string } | { ok: false; reason: string };
export type RdwRowOutcome = { ok: true; key: string; document: string; fuelType: string | undefined } | { ok: false; reason: string };

/** RDW writes this where a value was never recorded (upstream-sources.md section 3, "Value formats"). */
const NOT_RECORDED = 'Niet geregistreerd';

/** The register columns read, in the order the reader hands them over. */
const ORDER = [
  'kenteken', 'voertuigsoort', 'merk', 'handelsbenaming', 'vervaldatumApk', 'inrichting', 'aantalZitplaatsen',
  'eersteKleur', 'cilinderinhoud', 'datumEersteToelating', 'catalogusprijs', 'aantalDeuren', 'europeseVoertuigcategorie',
] as const satisfies ReadonlyArray<keyof typeof REGISTER>;
const AT = Object.fromEntries(ORDER.map((name, i) => [name, i])) as Readonly<Record<(typeof ORDER)[number], number>>;

const WHOLE_NUMBER = /^\d+$/;
const PLAIN_DATE = /^(\d{4})(\d{2})(\d{2})$/;

/** A field's value: trimmed, and '' for RDW's "not recorded". */
function clean(value: string | undefined): string {
  const v = value === undefined ? '' : value.trim();
  return v === NOT_RECORDED ? '' : v;
}

/** Why a column's value is not a whole number, or undefined when it is one (or empty). */
function notWholeNumber(name: string, value: string): string | undefined {
  return value === '' || WHOLE_NUMBER.test(value) ? undefined : `${name} "${value}" is not a whole number`;
}

/** Why a column's value is not a YYYYMMDD date (RDW's plain date format in the CSV), or undefined. */
function notPlainDate(name: string, value: string): string | undefined {
  if (value === '') return undefined;
  const m = PLAIN_DATE.exec(value);
  const month = Number(m?.[2]);
  const day = Number(m?.[3]);
  return m && month >= 1 && month <= 12 && day >= 1 && day <= 31 ? undefined : `${name} "${value}" is not a date written YYYYMMDD`;
}

/**
 * The model: the trade name without a leading repetition of the make. RDW's Handelsbenaming often
 * repeats it ("NISSAN NOTE" for make NISSAN, upstream-sources.md section 3), and the
 * Netherlands Description is "{MAKE} {MODEL}".
 */
function modelOf(merk: string, handelsbenaming: string): string {
  const upper = handelsbenaming.toUpperCase();
  const make = merk.toUpperCase();
  if (upper === make) return '';
  if (upper.startsWith(`${make} `)) return handelsbenaming.slice(make.length + 1).trim();
  return handelsbenaming;
}

/** A JSON string literal. */
const text = (value: string): string => JSON.stringify(value);

/**
 * Turns rows of the RDW "Gekentekende voertuigen" CSV export into CheckNetherlands vehicle
 * documents, in the shape of the bundled sample's Netherlands records (docs/import-format.md,
 * "RDW register import", has the mapping table). Only the key, `Merk` and the formats of the
 * columns it maps are checked; every other column is ignored.
 */
export class RdwVehicleMapper {
  /** Header positions of the columns read, to hand to CsvReader.rows. */
  readonly columns: readonly number[];
  /** Fields per row, from the header. */
  readonly width: number;

  constructor(
    header: readonly string[],
    /** The CheckNetherlands key rule, so an imported plate and a looked-up plate normalise alike. */
    private readonly plateRule: InputRule,
  ) {
    const positions = locateColumns(header, REGISTER, ['kenteken', 'merk'], '"Gekentekende voertuigen"');
    this.columns = ORDER.map((name) => positions[name]);
    this.width = header.length;
  }

  /** Validates a row (read with `columns`) without building its document: the checking pass. */
  check(row: CsvRow): RdwRowCheck {
    if (row.width !== this.width) return { ok: false, reason: `has ${row.width} fields, the header has ${this.width}` };
    const plate = this.plateRule.normalise(clean(row.fields[AT.kenteken]));
    if (!plate.ok) return { ok: false, reason: `Kenteken ${plate.reason}` };
    const problem = this.problem(row.fields);
    return problem === undefined ? { ok: true, key: plate.value } : { ok: false, reason: problem };
  }

  /**
   * The stored key and vehicle document of a row (read with `columns`); `fuelOf` looks the plate
   * up in the fuel file. The JSON is written directly rather than through an object and
   * JSON.stringify: the same text, at a fraction of the cost per row.
   */
  map(row: CsvRow, fuelOf: (plate: string) => string | undefined): RdwRowOutcome {
    const checked = this.check(row);
    if (!checked.ok) return checked;
    const f = row.fields;
    const merk = clean(f[AT.merk]);
    const model = modelOf(merk, clean(f[AT.handelsbenaming]));
    const firstAdmission = clean(f[AT.datumEersteToelating]);
    const cc = clean(f[AT.cilinderinhoud]);
    const fuel = fuelOf(checked.key);
    const body = clean(f[AT.inrichting]);
    const doors = clean(f[AT.aantalDeuren]);
    const seats = clean(f[AT.aantalZitplaatsen]);
    const colour = clean(f[AT.eersteKleur]);
    const apk = clean(f[AT.vervaldatumApk]);
    const price = clean(f[AT.catalogusprijs]);
    const category = clean(f[AT.europeseVoertuigcategorie]);
    const kind = clean(f[AT.voertuigsoort]);
    // Members in the order of the sample dataset's CheckNetherlands records; absent values are
    // left out, as the RDW API leaves them out of its objects. Numbers and dates were checked to
    // be digits, so they need no escaping.
    let json = `{"Description":${text(model === '' ? merk : `${merk} ${model}`)}`;
    if (firstAdmission !== '') json += `,"RegistrationYear":"${firstAdmission.slice(0, 4)}"`;
    json += `,"CarMake":{"CurrentTextValue":${text(merk)}}`;
    if (model !== '') json += `,"CarModel":{"CurrentTextValue":${text(model)}}`;
    json += `,"MakeDescription":${text(merk)}`;
    if (model !== '') json += `,"ModelDescription":${text(model)}`;
    if (cc !== '') json += `,"EngineSize":{"CurrentTextValue":"${cc}"}`;
    if (fuel !== undefined) json += `,"FuelType":{"CurrentTextValue":${text(fuel)}}`;
    if (body !== '') json += `,"BodyStyle":{"CurrentTextValue":${text(body)}}`;
    if (doors !== '') json += `,"NumberOfDoors":{"CurrentTextValue":"${doors}"}`;
    if (seats !== '') json += `,"NumberOfSeats":{"CurrentTextValue":${Number(seats)}}`;
    if (colour !== '') json += `,"Colour":${text(colour)}`;
    if (firstAdmission !== '') json += `,"RegistrationDate":"${firstAdmission}"`;
    if (apk !== '') json += `,"APKExpiryDate":"${apk}"`;
    if (price !== '') json += `,"CataloguePrice":"${price}"`;
    if (category !== '') json += `,"EuropeanVehicleCategory":${text(category)}`;
    if (kind !== '') json += `,"VehicleType":${text(kind)}`;
    return { ok: true, key: checked.key, document: `${json}}`, fuelType: fuel };
  }

  /** Why a row cannot be imported (apart from its plate), or undefined. */
  private problem(f: readonly string[]): string | undefined {
    if (clean(f[AT.merk]) === '') return 'Merk is empty';
    return (
      notWholeNumber('Cilinderinhoud', clean(f[AT.cilinderinhoud])) ??
      notWholeNumber('Aantal deuren', clean(f[AT.aantalDeuren])) ??
      notWholeNumber('Aantal zitplaatsen', clean(f[AT.aantalZitplaatsen])) ??
      notWholeNumber('Catalogusprijs', clean(f[AT.catalogusprijs])) ??
      notPlainDate('Datum eerste toelating', clean(f[AT.datumEersteToelating])) ??
      notPlainDate('Vervaldatum APK', clean(f[AT.vervaldatumApk]))
    );
  }
}

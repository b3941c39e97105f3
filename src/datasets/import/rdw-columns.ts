import { CsvFileError } from './csv-reader.js';

/**
 * The columns of the RDW open-data CSV exports the importers read, by the human-readable label of
 * the full download (`/api/views/{id}/rows.csv`) and by the API field name of the paged
 * `/resource/{id}.csv` export (upstream-sources.md section 3: "Keep one label->API-name map in the
 * importer"). Columns are found by name, never by position, so RDW adding or reordering columns
 * changes nothing.
 */
export interface RdwColumn {
  /** Header of the full CSV download, e.g. `Datum eerste toelating`. */
  readonly label: string;
  /** Socrata field name, e.g. `datum_eerste_toelating`. */
  readonly api: string;
}

const column = (label: string, api: string): RdwColumn => ({ label, api });

/** "Gekentekende voertuigen" (m9d7-ebf2): the columns the vehicle document is built from. */
export const REGISTER = {
  kenteken: column('Kenteken', 'kenteken'),
  voertuigsoort: column('Voertuigsoort', 'voertuigsoort'),
  merk: column('Merk', 'merk'),
  handelsbenaming: column('Handelsbenaming', 'handelsbenaming'),
  vervaldatumApk: column('Vervaldatum APK', 'vervaldatum_apk'),
  inrichting: column('Inrichting', 'inrichting'),
  aantalZitplaatsen: column('Aantal zitplaatsen', 'aantal_zitplaatsen'),
  eersteKleur: column('Eerste kleur', 'eerste_kleur'),
  cilinderinhoud: column('Cilinderinhoud', 'cilinderinhoud'),
  datumEersteToelating: column('Datum eerste toelating', 'datum_eerste_toelating'),
  catalogusprijs: column('Catalogusprijs', 'catalogusprijs'),
  aantalDeuren: column('Aantal deuren', 'aantal_deuren'),
  europeseVoertuigcategorie: column('Europese voertuigcategorie', 'europese_voertuigcategorie'),
} as const;

/** "Gekentekende voertuigen brandstof" (8ys7-d773): one row per fuel of a vehicle. */
export const FUEL = {
  kenteken: column('Kenteken', 'kenteken'),
  volgnummer: column('Brandstof volgnummer', 'brandstof_volgnummer'),
  omschrijving: column('Brandstof omschrijving', 'brandstof_omschrijving'),
} as const;

export type ColumnIndex<K extends string> = Readonly<Record<K, number>>;

const fold = (name: string): string => name.trim().toLowerCase();

/**
 * Finds each column's position in a header row (-1 when absent). `required` columns must be
 * present; a column named twice is refused, since which one holds the value would be a guess.
 * Throws CsvFileError (without the file name, which the caller adds).
 */
export function locateColumns<K extends string>(
  header: readonly string[],
  columns: Readonly<Record<K, RdwColumn>>,
  required: ReadonlyArray<NoInfer<K>>,
  what: string,
): ColumnIndex<K> {
  const positions = new Map<string, number>();
  header.forEach((name, i) => {
    const key = fold(name);
    if (positions.has(key)) throw new CsvFileError(`line 1: the header names the column "${name.trim()}" twice`);
    positions.set(key, i);
  });
  const found = {} as Record<K, number>;
  for (const key of Object.keys(columns) as K[]) {
    const c = columns[key];
    found[key] = positions.get(fold(c.label)) ?? positions.get(fold(c.api)) ?? -1;
    if (found[key] === -1 && required.includes(key)) {
      throw new CsvFileError(`line 1: the header has no "${c.label}" column: is this the RDW ${what} CSV export?`);
    }
  }
  return found;
}

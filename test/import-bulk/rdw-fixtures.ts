/**
 * RDW CSV exports as the tests and `npm run bench:rdw-import` need them: the full header of the
 * "Gekentekende voertuigen" (m9d7-ebf2) and "Gekentekende voertuigen brandstof" (8ys7-d773)
 * downloads with their human-readable labels (upstream-sources.md section 3), rows built from a few
 * named values, and large generated files written in chunks.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

/** The register export's columns, in the download's order. */
export const REGISTER_HEADER = [
  'Kenteken', 'Voertuigsoort', 'Merk', 'Handelsbenaming', 'Vervaldatum APK', 'Datum tenaamstelling', 'Bruto BPM',
  'Inrichting', 'Aantal zitplaatsen', 'Eerste kleur', 'Tweede kleur', 'Aantal cilinders', 'Cilinderinhoud',
  'Massa ledig voertuig', 'Toegestane maximum massa voertuig', 'Massa rijklaar', 'Maximum massa trekken ongeremd',
  'Maximum trekken massa geremd', 'Datum eerste toelating', 'Datum eerste tenaamstelling in Nederland', 'Wacht op keuren',
  'Catalogusprijs', 'WAM verzekerd', 'Maximale constructiesnelheid', 'Laadvermogen', 'Oplegger geremd',
  'Aanhangwagen autonoom geremd', 'Aanhangwagen middenas geremd', 'Aantal staanplaatsen', 'Aantal deuren', 'Aantal wielen',
  'Afstand hart koppeling tot achterzijde voertuig', 'Afstand voorzijde voertuig tot hart koppeling',
  'Afwijkende maximum snelheid', 'Lengte', 'Breedte', 'Europese voertuigcategorie', 'Europese voertuigcategorie toevoeging',
  'Europese uitvoeringcategorie toevoeging', 'Plaats chassisnummer', 'Technische max. massa voertuig', 'Type',
  'Type gasinstallatie', 'Typegoedkeuringsnummer', 'Variant', 'Uitvoering', 'Volgnummer wijziging EU typegoedkeuring',
  'Vermogen massarijklaar', 'Wielbasis', 'Export indicator', 'Openstaande terugroepactie indicator', 'Vervaldatum tachograaf',
  'Taxi indicator', 'Maximum massa samenstelling', 'Aantal rolstoelplaatsen', 'Maximum ondersteunende snelheid',
  'Jaar laatste registratie tellerstand', 'Tellerstandoordeel', 'Code toelichting tellerstandoordeel', 'Tenaamstellen mogelijk',
  'Vervaldatum APK DT', 'Datum tenaamstelling DT', 'Datum eerste toelating DT', 'Datum eerste tenaamstelling in Nederland DT',
  'Vervaldatum tachograaf DT', 'Maximum last onder de vooras(sen) (tezamen)/koppeling', 'Type remsysteem voertuig code',
  'Rupsonderstelconfiguratiecode', 'Wielbasis voertuig minimum', 'Wielbasis voertuig maximum', 'Lengte voertuig minimum',
  'Lengte voertuig maximum', 'Breedte voertuig minimum', 'Breedte voertuig maximum', 'Hoogte voertuig', 'Hoogte voertuig minimum',
  'Hoogte voertuig maximum', 'Massa bedrijfsklaar minimaal', 'Massa bedrijfsklaar maximaal', 'Technisch toelaatbaar massa koppelpunt',
  'Maximum massa technisch maximaal', 'Maximum massa technisch minimaal', 'Subcategorie Nederland',
  'Verticale belasting koppelpunt getrokken voertuig', 'Zuinigheidsclassificatie',
  'Registratie datum goedkeuring (afschrijvingsmoment BPM)', 'Registratie datum goedkeuring (afschrijvingsmoment BPM) DT',
  'Gemiddelde Lading Waarde', 'Aerodynamische voorziening of uitrusting', 'Additionele massa alternatieve aandrijving',
  'Verlengde cabine indicator', 'Aantal passagiers zitplaatsen wettelijk', 'Aanwijzingsnummer',
  'API Gekentekende_voertuigen_assen', 'API Gekentekende_voertuigen_brandstof', 'API Gekentekende_voertuigen_carrosserie',
  'API Gekentekende_voertuigen_carrosserie_specifiek', 'API Gekentekende_voertuigen_voertuigklasse',
] as const;

/** The fuel export's columns, in the download's order. */
export const FUEL_HEADER = [
  'Kenteken', 'Brandstof volgnummer', 'Brandstof omschrijving', 'Brandstofverbruik buiten de stad',
  'Brandstofverbruik gecombineerd', 'Brandstofverbruik stad', 'CO2 uitstoot gecombineerd', 'CO2 uitstoot gewogen',
  'Geluidsniveau rijdend', 'Geluidsniveau stationair', 'Emissieklasse', 'Milieuklasse EG Goedkeuring (licht)',
  'Milieuklasse EG Goedkeuring (zwaar)', 'Uitstoot deeltjes (licht)', 'Uitstoot deeltjes (zwaar)', 'Nettomaximumvermogen',
  'Nominaal continu maximumvermogen', 'Roetuitstoot', 'Toerental geluidsniveau', 'Emissie deeltjes type1 wltp',
  'Emissie co2 gecombineerd wltp', 'Emissie co2 gewogen gecombineerd wltp', 'Brandstof verbruik gecombineerd wltp',
  'Brandstof verbruik gewogen gecombineerd wltp', 'Elektrisch verbruik enkel elektrisch wltp', 'Actie radius enkel elektrisch wltp',
  'Actie radius enkel elektrisch stad wltp', 'Elektrisch verbruik extern opladen wltp', 'Actie radius extern opladen wltp',
  'Actie radius extern opladen stad wltp', 'Max vermogen 15 minuten', 'Max vermogen 60 minuten', 'Netto max vermogen elektrisch',
  'Klasse hybride elektrisch voertuig', 'Opgegeven maximum snelheid', 'Uitlaatemissieniveau', 'CO2 emissieklasse',
] as const;

export type RegisterRow = Partial<Record<(typeof REGISTER_HEADER)[number], string>>;
export type FuelRow = Partial<Record<(typeof FUEL_HEADER)[number], string>>;

/** One CSV field: quoted (with doubled quotes) only when it needs to be, as RDW's export writes it. */
export function csvField(value: string): string {
  return value.includes('"') || value.includes(',') || value.includes('\n') || value.includes('\r') ? `"${value.replaceAll('"', '""')}"` : value;
}

export function csvLine(values: readonly string[]): string {
  return values.map(csvField).join(',');
}

const REGISTER_POSITION = new Map<string, number>(REGISTER_HEADER.map((label, i) => [label, i]));
const FUEL_POSITION = new Map<string, number>(FUEL_HEADER.map((label, i) => [label, i]));

/** The row's values in header order, '' for the columns it does not name. */
function inOrder(row: Readonly<Record<string, string | undefined>>, positions: ReadonlyMap<string, number>, width: number): string[] {
  const values = new Array<string>(width).fill('');
  for (const [label, value] of Object.entries(row)) {
    const i = positions.get(label);
    if (i === undefined) throw new Error(`no column "${label}"`);
    values[i] = value ?? '';
  }
  return values;
}

/** A register row with every column, the named ones filled. */
export function registerLine(row: RegisterRow): string {
  return csvLine(inOrder(row, REGISTER_POSITION, REGISTER_HEADER.length));
}

export function fuelLine(row: FuelRow): string {
  return csvLine(inOrder(row, FUEL_POSITION, FUEL_HEADER.length));
}

/** `20180315` as the export's DT columns write it: `03/15/2018 12:00:00 AM`. */
function dtOf(date: string): string {
  return date === '' ? '' : `${date.slice(4, 6)}/${date.slice(6, 8)}/${date.slice(0, 4)} 12:00:00 AM`;
}

const API = (id: string): string => `https://opendata.rdw.nl/resource/${id}.json`;

/**
 * The illustrative m9d7-ebf2 row of upstream-sources.md section 3 (AB123C, a VOLKSWAGEN GOLF), as a
 * CSV row, with the columns that example trims filled in plausibly.
 */
export const GOLF: RegisterRow = {
  Kenteken: 'AB123C',
  Voertuigsoort: 'Personenauto',
  Merk: 'VOLKSWAGEN',
  Handelsbenaming: 'GOLF',
  'Vervaldatum APK': '20260930',
  'Datum tenaamstelling': '20220511',
  Inrichting: 'hatchback',
  'Aantal zitplaatsen': '5',
  'Eerste kleur': 'GRIJS',
  'Tweede kleur': 'Niet geregistreerd',
  'Aantal cilinders': '4',
  Cilinderinhoud: '1395',
  'Massa ledig voertuig': '1165',
  'Datum eerste toelating': '20180315',
  'Datum eerste tenaamstelling in Nederland': '20180315',
  'Wacht op keuren': 'Geen verstrekking in Open Data',
  Catalogusprijs: '28450',
  'WAM verzekerd': 'Ja',
  'Aantal deuren': '5',
  'Aantal wielen': '4',
  'Europese voertuigcategorie': 'M1',
  Typegoedkeuringsnummer: 'e1*2007/46*0627*12',
  'Export indicator': 'Nee',
  'Openstaande terugroepactie indicator': 'Nee',
  'Taxi indicator': 'Nee',
  'Vervaldatum APK DT': dtOf('20260930'),
  'Datum tenaamstelling DT': dtOf('20220511'),
  'Datum eerste toelating DT': dtOf('20180315'),
  'Datum eerste tenaamstelling in Nederland DT': dtOf('20180315'),
  'API Gekentekende_voertuigen_assen': API('3huj-srit'),
  'API Gekentekende_voertuigen_brandstof': API('8ys7-d773'),
  'API Gekentekende_voertuigen_carrosserie': API('vezc-m2t6'),
  'API Gekentekende_voertuigen_carrosserie_specifiek': API('jhie-znh9'),
  'API Gekentekende_voertuigen_voertuigklasse': API('kmfi-hrps'),
};

/** A trade name that repeats the make, as RDW often writes it ("NISSAN NOTE"). */
export const NOTE: RegisterRow = {
  ...GOLF,
  Kenteken: '12XYZ3',
  Merk: 'NISSAN',
  Handelsbenaming: 'NISSAN NOTE',
  'Datum eerste toelating': '20090201',
  'Vervaldatum APK': '20250201',
  Inrichting: 'MPV',
  'Eerste kleur': 'BLAUW',
  Cilinderinhoud: '1386',
  'Aantal deuren': '5',
  'Aantal zitplaatsen': '5',
  Catalogusprijs: '',
};

/** An electric car: no cylinder capacity, a second colour, a quoted trade name with a comma. */
export const TESLA: RegisterRow = {
  ...GOLF,
  Kenteken: 'T001EV',
  Merk: 'TESLA',
  Handelsbenaming: 'MODEL 3, LONG RANGE',
  'Datum eerste toelating': '20210630',
  'Vervaldatum APK': '20250630',
  Inrichting: 'Sedan',
  'Eerste kleur': 'WIT',
  'Tweede kleur': 'ZWART',
  'Aantal cilinders': '',
  Cilinderinhoud: '',
  'Aantal deuren': '4',
  Catalogusprijs: '56990',
};

export const GOLF_FUEL: FuelRow = { Kenteken: 'AB123C', 'Brandstof volgnummer': '1', 'Brandstof omschrijving': 'Benzine', Nettomaximumvermogen: '90', Uitlaatemissieniveau: 'EURO 6 AG' };
export const TESLA_FUEL: FuelRow = { Kenteken: 'T001EV', 'Brandstof volgnummer': '1', 'Brandstof omschrijving': 'Elektriciteit', 'Netto max vermogen elektrisch': '258' };

export function registerCsv(rows: readonly RegisterRow[]): string {
  return [csvLine(REGISTER_HEADER), ...rows.map(registerLine)].join('\n') + '\n';
}

export function fuelCsv(rows: readonly FuelRow[]): string {
  return [csvLine(FUEL_HEADER), ...rows.map(fuelLine)].join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Large generated files.

/** 26^3 letter triples x 1000 numbers: plates `XY123Z`, far more than any generated file needs. */
const PLATE_SPACE = 26 * 26 * 26 * 1000;
/** Coprime with PLATE_SPACE (2^6 5^3 13^3), so i -> i * STRIDE mod PLATE_SPACE never repeats. */
const STRIDE = 7_919_993;
const A = 'A'.charCodeAt(0);

/** The i-th generated plate: distinct for every i < 17,576,000, in no particular order. */
export function generatedPlate(i: number): string {
  let n = (i * STRIDE) % PLATE_SPACE;
  const digits = String(n % 1000).padStart(3, '0');
  n = Math.floor(n / 1000);
  const letters = [n % 26, Math.floor(n / 26) % 26, Math.floor(n / 676) % 26].map((c) => String.fromCharCode(A + c));
  return `${letters[0] ?? ''}${letters[1] ?? ''}${digits}${letters[2] ?? ''}`;
}

const MAKES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['VOLKSWAGEN', ['GOLF', 'POLO', 'PASSAT', 'UP!']],
  ['TOYOTA', ['YARIS', 'AYGO', 'COROLLA', 'TOYOTA RAV4']],
  ['KIA', ['PICANTO', 'NIRO', 'KIA CEED']],
  ['RENAULT', ['CLIO', 'MEGANE', 'TWINGO']],
  ['PEUGEOT', ['208', '308', '2008']],
  ['OPEL', ['CORSA', 'ASTRA']],
  ['BMW', ['3ER REIHE', '1ER REIHE']],
];
const BODIES = ['hatchback', 'stationwagen', 'MPV', 'Sedan', 'Hatchback', 'Cabriolet'];
const COLOURS = ['GRIJS', 'ZWART', 'WIT', 'BLAUW', 'ROOD', 'GROEN'];
const FUELS = ['Benzine', 'Diesel', 'Elektriciteit', 'LPG'];

/** Position of a register column. */
function at(label: (typeof REGISTER_HEADER)[number]): number {
  return REGISTER_POSITION.get(label) ?? -1;
}

/** The generated rows' unchanging columns (the GOLF row's), in header order. */
const TEMPLATE = inOrder(GOLF, REGISTER_POSITION, REGISTER_HEADER.length);
const COL = {
  kenteken: at('Kenteken'), merk: at('Merk'), handelsbenaming: at('Handelsbenaming'), apk: at('Vervaldatum APK'),
  tenaamstelling: at('Datum tenaamstelling'), bpm: at('Bruto BPM'), inrichting: at('Inrichting'), zitplaatsen: at('Aantal zitplaatsen'),
  kleur: at('Eerste kleur'), cilinders: at('Aantal cilinders'), cilinderinhoud: at('Cilinderinhoud'), ledig: at('Massa ledig voertuig'),
  maximum: at('Toegestane maximum massa voertuig'), rijklaar: at('Massa rijklaar'), toelating: at('Datum eerste toelating'),
  toelatingNl: at('Datum eerste tenaamstelling in Nederland'), prijs: at('Catalogusprijs'), deuren: at('Aantal deuren'),
  lengte: at('Lengte'), breedte: at('Breedte'), type: at('Type'), variant: at('Variant'), uitvoering: at('Uitvoering'),
  wielbasis: at('Wielbasis'), tellerjaar: at('Jaar laatste registratie tellerstand'), oordeel: at('Tellerstandoordeel'),
  oordeelCode: at('Code toelichting tellerstandoordeel'), tenaamstellen: at('Tenaamstellen mogelijk'), apkDt: at('Vervaldatum APK DT'),
  tenaamstellingDt: at('Datum tenaamstelling DT'), toelatingDt: at('Datum eerste toelating DT'),
  toelatingNlDt: at('Datum eerste tenaamstelling in Nederland DT'),
} as const;

/**
 * The generated vehicle i as CSV fields: make, model, fuel, numbers and dates vary with i. Built
 * straight into an array: generating a million rows must not take longer than importing them.
 */
export function generatedFields(i: number): string[] {
  const [make, models] = MAKES[i % MAKES.length] ?? ['SKODA', ['OCTAVIA']];
  const year = 1995 + (i % 30);
  const month = String(1 + (i % 12)).padStart(2, '0');
  const day = String(1 + (i % 28)).padStart(2, '0');
  const first = `${year}${month}${day}`;
  const apk = `${2026 + (i % 3)}${month}${day}`;
  const electric = i % FUELS.length === 2;
  const f = TEMPLATE.slice();
  f[COL.kenteken] = generatedPlate(i);
  f[COL.merk] = make;
  f[COL.handelsbenaming] = models[i % models.length] ?? 'OCTAVIA';
  f[COL.apk] = apk;
  f[COL.tenaamstelling] = first;
  f[COL.bpm] = String(1000 + (i % 9000));
  f[COL.inrichting] = BODIES[i % BODIES.length] ?? 'hatchback';
  f[COL.zitplaatsen] = String(2 + (i % 6));
  f[COL.kleur] = COLOURS[i % COLOURS.length] ?? 'GRIJS';
  f[COL.cilinders] = electric ? '' : String(3 + (i % 3));
  f[COL.cilinderinhoud] = electric ? '' : String(900 + (i % 2000));
  f[COL.ledig] = String(800 + (i % 1200));
  f[COL.maximum] = String(1300 + (i % 1200));
  f[COL.rijklaar] = String(900 + (i % 1200));
  f[COL.toelating] = first;
  f[COL.toelatingNl] = first;
  f[COL.prijs] = String(10_000 + (i % 60_000));
  f[COL.deuren] = String(2 + (i % 4));
  f[COL.lengte] = String(350 + (i % 150));
  f[COL.breedte] = String(160 + (i % 40));
  f[COL.type] = `T${i % 97}`;
  f[COL.variant] = `V${i % 13}`;
  f[COL.uitvoering] = `U${i % 31}`;
  f[COL.wielbasis] = String(240 + (i % 60));
  f[COL.tellerjaar] = String(2020 + (i % 5));
  f[COL.oordeel] = 'Logisch';
  f[COL.oordeelCode] = '00';
  f[COL.tenaamstellen] = 'Ja';
  f[COL.apkDt] = dtOf(apk);
  f[COL.tenaamstellingDt] = dtOf(first);
  f[COL.toelatingDt] = dtOf(first);
  f[COL.toelatingNlDt] = dtOf(first);
  return f;
}

/** The fuel rows of generated vehicle i: its fuel, and for every tenth a second (hybrid) one. */
export function generatedFuelRows(i: number): FuelRow[] {
  const fuel = FUELS[i % FUELS.length] ?? 'Benzine';
  const plate = generatedPlate(i);
  const rows: FuelRow[] = [{ Kenteken: plate, 'Brandstof volgnummer': '1', 'Brandstof omschrijving': fuel, 'Brandstofverbruik gecombineerd': '5.10', 'CO2 uitstoot gecombineerd': String(90 + (i % 80)), Emissieklasse: '6', Nettomaximumvermogen: String(50 + (i % 150)), Uitlaatemissieniveau: 'EURO 6 AP' }];
  if (i % 10 === 0 && fuel !== 'Elektriciteit') rows.push({ Kenteken: plate, 'Brandstof volgnummer': '2', 'Brandstof omschrijving': 'Elektriciteit', 'Netto max vermogen elektrisch': '40', 'Klasse hybride elektrisch voertuig': 'OVC-HEV' });
  return rows;
}

/** The primary fuel generatedFuelRows gives vehicle i. */
export function generatedFuel(i: number): string {
  return FUELS[i % FUELS.length] ?? 'Benzine';
}

/** Writes `count` lines to `path` in chunks of a thousand, so generating needs no memory. */
function writeLines(path: string, header: string, count: number, lineOf: (i: number) => string): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, `${header}\n`);
    for (let start = 0; start < count; start += 1000) {
      let chunk = '';
      for (let i = start; i < Math.min(count, start + 1000); i += 1) chunk += `${lineOf(i)}\n`;
      writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
}

/** A register export of `count` generated vehicles (about 600 bytes a row, like the real one). */
export function writeGeneratedRegister(path: string, count: number): void {
  // Generated values hold no comma or quote, so a plain join is a valid CSV line.
  writeLines(path, csvLine(REGISTER_HEADER), count, (i) => generatedFields(i).join(','));
}

/** The fuel export of the same vehicles, in reverse order (the importer must not rely on order). */
export function writeGeneratedFuel(path: string, count: number): void {
  writeLines(path, csvLine(FUEL_HEADER), count, (i) => generatedFuelRows(count - 1 - i).map(fuelLine).join('\n'));
}

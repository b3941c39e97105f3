import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import yazl from 'yazl';

/**
 * Small register files the tests write (never a real register file): Ukraine's MVS
 * registration-operations CSV in its three header layouts (upstream-sources.md §10.3) and
 * Denmark's DMR XML (§10.2), and ZIPs of them.
 */

export const UA_HEADER_2013 = 'person;reg_addr_koatuu;oper_code;oper_name;d_reg;dep_code;dep;brand;model;make_year;color;kind;body;purpose;fuel;capacity;own_weight;total_weight;n_reg_new';
export const UA_HEADER_2021 = '"PERSON";"REG_ADDR_KOATUU";"OPER_CODE";"OPER_NAME";"D_REG";"DEP_CODE";"DEP";"BRAND";"MODEL";"VIN";"MAKE_YEAR";"COLOR";"KIND";"BODY";"PURPOSE";"FUEL";"CAPACITY";"OWN_WEIGHT";"TOTAL_WEIGHT";"N_REG_NEW"';
export const UA_HEADER_2026 = `"PERSON";"CD.OPER_CODE||'-'||CD.OPERAS";"D_REG";"DEP";"BRAND";"MODEL";"VIN";"MAKE_YEAR";"COLOR";"KIND";"PURPOSE";"BODY";"FUEL";"CAPACITY";"POWER_KWT";"OWN_WEIGHT";"TOTAL_WEIGHT"`;

export interface UaOperation {
  readonly date: string;
  readonly brand: string;
  readonly model: string;
  readonly year: string;
  readonly plate: string;
  readonly vin?: string;
  readonly colour?: string;
  readonly fuel?: string;
  readonly cc?: string;
  readonly dep?: string;
}

/** A 2013-2018 row (lower-case header, unquoted, dates YYYY-MM-DD). */
export function ua2013(op: UaOperation): string {
  return ['P', '8036100000', '100', 'ПЕРВИННА РЕЄСТРАЦІЯ', op.date, '12290', op.dep ?? 'ТСЦ 8041', op.brand, op.model, op.year, op.colour ?? 'СІРИЙ', 'ЛЕГКОВИЙ', 'СЕДАН', 'ЗАГАЛЬНИЙ', op.fuel ?? 'БЕНЗИН', op.cc ?? '1598', '1200', '1700', op.plate].join(';');
}

/** A 2021-2025 row (quoted, VIN after MODEL; dates DD.MM.YYYY or DD.MM.YY). */
export function ua2021(op: UaOperation): string {
  return ['P', '8036100000', '315', 'ПЕРЕРЕЄСТРАЦІЯ НА НОВОГО ВЛАСНИКА', op.date, '12290', op.dep ?? 'ТСЦ 8041', op.brand, op.model, op.vin ?? '', op.year, op.colour ?? 'СІРИЙ', 'ЛЕГКОВИЙ', 'УНІВЕРСАЛ', 'ЗАГАЛЬНИЙ', op.fuel ?? 'БЕНЗИН', op.cc ?? '1395', '1250', '1800', op.plate]
    .map((v) => `"${v}"`)
    .join(';');
}

/** A 2026 row: no plate column at all. */
export function ua2026(op: Omit<UaOperation, 'plate'>): string {
  return ['P', '315 - ПЕРЕРЕЄСТРАЦІЯ', op.date, op.dep ?? 'ТСЦ 8041', op.brand, op.model, op.vin ?? '', op.year, 'БІЛИЙ', 'ЛЕГКОВИЙ', 'ЗАГАЛЬНИЙ', 'СЕДАН', 'ЕЛЕКТРО', '', '150', '1800', '2200']
    .map((v) => `"${v}"`)
    .join(';');
}

/** A ZIP of the given entries, written with yazl (deflated, as data.gov.ua's are). */
export async function writeZip(path: string, entries: ReadonlyArray<readonly [name: string, content: string | Buffer]>): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of entries) zip.addBuffer(typeof content === 'string' ? Buffer.from(content) : content, name);
  zip.end();
  const out = createWriteStream(path);
  zip.outputStream.pipe(out);
  await once(out, 'close');
}

export interface DmrVehicle {
  readonly id: string;
  readonly plate?: string | undefined;
  readonly status: 'Registreret' | 'Afmeldt';
  readonly statusDate: string;
  readonly make?: string | undefined;
  readonly model: string;
  readonly variant?: string;
  readonly vin: string;
  readonly firstRegistered: string;
  readonly cc?: string;
  readonly fuel: string;
}

/** One `ns:Statistik` record in the export's layout (§10.2's sample, with the newer fuel nesting). */
export function dmrRecord(v: DmrVehicle): string {
  return `<ns:Statistik>
  <ns:KoeretoejIdent>${v.id}</ns:KoeretoejIdent>
  <ns:KoeretoejArtNummer>1</ns:KoeretoejArtNummer><ns:KoeretoejArtNavn>Personbil</ns:KoeretoejArtNavn>
  ${v.plate === undefined ? '' : `<ns:RegistreringNummerNummer>${v.plate}</ns:RegistreringNummerNummer>`}
  <ns:KoeretoejOplysningGrundStruktur>
    <ns:KoeretoejOplysningStatus>${v.status}</ns:KoeretoejOplysningStatus>
    <ns:KoeretoejOplysningFoersteRegistreringDato>${v.firstRegistered}</ns:KoeretoejOplysningFoersteRegistreringDato>
    <ns:KoeretoejOplysningStelNummer>${v.vin}</ns:KoeretoejOplysningStelNummer>
    <ns:KoeretoejBetegnelseStruktur>
      ${v.make === undefined ? '' : `<ns:KoeretoejMaerkeTypeNummer>10078</ns:KoeretoejMaerkeTypeNummer><ns:KoeretoejMaerkeTypeNavn>${v.make}</ns:KoeretoejMaerkeTypeNavn>`}
      <ns:Model><ns:KoeretoejModelTypeNavn>${v.model}</ns:KoeretoejModelTypeNavn></ns:Model>
      <ns:Variant><ns:KoeretoejVariantTypeNavn>${v.variant ?? 'UOPLYST'}</ns:KoeretoejVariantTypeNavn></ns:Variant>
    </ns:KoeretoejBetegnelseStruktur>
    <ns:KoeretoejFarveStruktur><ns:FarveTypeStruktur><ns:FarveTypeNavn>Ukendt</ns:FarveTypeNavn></ns:FarveTypeStruktur></ns:KoeretoejFarveStruktur>
    <ns:KoeretoejMotorStruktur>
      ${v.cc === undefined ? '' : `<ns:KoeretoejMotorSlagVolumen>${v.cc}</ns:KoeretoejMotorSlagVolumen>`}
      <ns:KoeretoejDrivmiddelSamlingStruktur><ns:KoeretoejDrivmiddelSamling><ns:DrivmiddelStruktur><ns:DrivkraftTypeStruktur><ns:DrivkraftTypeNummer>1</ns:DrivkraftTypeNummer><ns:DrivkraftTypeNavn>${v.fuel}</ns:DrivkraftTypeNavn></ns:DrivkraftTypeStruktur></ns:DrivmiddelStruktur></ns:KoeretoejDrivmiddelSamling></ns:KoeretoejDrivmiddelSamlingStruktur>
    </ns:KoeretoejMotorStruktur>
  </ns:KoeretoejOplysningGrundStruktur>
  <ns:KoeretoejRegistreringStatus>${v.status}</ns:KoeretoejRegistreringStatus>
  <ns:KoeretoejRegistreringStatusDato>${v.statusDate}</ns:KoeretoejRegistreringStatusDato>
</ns:Statistik>`;
}

/** The whole export around some records. */
export function dmrXml(records: readonly string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<ns:ESStatistikListeModtag_I xmlns:ns="http://skat.dk/dmr/2007/05/31/">
<ns:StatistikSamling>
${records.join('\n')}
</ns:StatistikSamling>
</ns:ESStatistikListeModtag_I>
`;
}

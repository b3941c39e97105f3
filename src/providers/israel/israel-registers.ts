/**
 * The Ministry of Transport registers on data.gov.il that CheckIsrael reads (upstream-sources.md
 * §10.1), in the order a plate is looked for: the main register first, then, where it has no
 * match, the related registers by plate. docs/providers.md lists the same order.
 */

/** How a register keys its plate column. */
export type PlateColumn =
  /** A numeric column: the filter sends the plate as a number (leading zeros dropped). */
  | 'numeric'
  /** Every column is text and plates are zero-padded to 8 characters (`"04252235"`); a number is a CKAN validation error. */
  | 'text-padded-8';

/** Where the vehicle stands, from the register it was found in. */
export type RegisterStatus = 'active' | 'inactive' | 'taken-off-the-road';

export interface IsraelRegister {
  /** Our name for it: the cache payload and docs name the register by it. */
  readonly key: string;
  /** CKAN DataStore resource id. */
  readonly resourceId: string;
  /** The exact name of the plate field (the filter needs it as the register spells it). */
  readonly plateField: string;
  readonly plateColumn: PlateColumn;
  readonly status: RegisterStatus;
  /** What docs/providers.md calls it. */
  readonly title: string;
}

/** The lookup chain, in order. Construction equipment is left out: it is keyed by another number space. */
export const ISRAEL_REGISTERS: readonly IsraelRegister[] = [
  { key: 'private-commercial', resourceId: '053cea08-09bc-40ec-8f7a-156f0677aff3', plateField: 'mispar_rechev', plateColumn: 'numeric', status: 'active', title: 'private and light-commercial vehicles' },
  { key: 'motorcycles', resourceId: 'bf9df4e2-d90d-4c0a-a400-19e15af8e95f', plateField: 'mispar_rechev', plateColumn: 'numeric', status: 'active', title: 'motorcycles' },
  { key: 'heavy', resourceId: 'cd3acc5c-03c3-4c89-9c54-d40f93c0d790', plateField: 'mispar_rechev', plateColumn: 'numeric', status: 'active', title: 'heavy vehicles over 3.5 t (and vintage vehicles)' },
  { key: 'public-service', resourceId: 'cf29862d-ca25-4691-84f6-1be60dcb4a1e', plateField: 'mispar_rechev', plateColumn: 'numeric', status: 'active', title: 'public-service vehicles' },
  { key: 'personal-import', resourceId: '03adc637-b6fe-402b-9937-7c3d3afc9140', plateField: 'mispar_rechev', plateColumn: 'numeric', status: 'active', title: 'personal-import vehicles' },
  { key: 'inactive', resourceId: 'f6efe89a-fb3d-43a4-bb61-9bf12a9b9099', plateField: 'mispar_rechev', plateColumn: 'numeric', status: 'inactive', title: 'inactive vehicles, with model code' },
  { key: 'cancelled', resourceId: '851ecab1-0622-4dbe-a6c7-f950cf82abf9', plateField: 'mispar_rechev', plateColumn: 'numeric', status: 'taken-off-the-road', title: 'taken off the road (final cancellation)' },
  { key: 'cancelled-2010-2016', resourceId: '4e6b9724-4c1e-43f0-909a-154d4cc4e046', plateField: 'mispar_rechev', plateColumn: 'text-padded-8', status: 'taken-off-the-road', title: 'final cancellation archive 2010-2016' },
  { key: 'cancelled-2000-2009', resourceId: 'ec8cbc34-72e1-4b69-9c48-22821ba0bd6c', plateField: 'mispar_rechev', plateColumn: 'text-padded-8', status: 'taken-off-the-road', title: 'final cancellation archive 2000-2009' },
  { key: 'inactive-no-model', resourceId: '6f6acd03-f351-4a8f-8ecf-df792f4f573a', plateField: 'mispar_rechev', plateColumn: 'numeric', status: 'inactive', title: 'inactive vehicles, no model code' },
];

/**
 * The per-model catalogue ("WLTP", dataset `degem-rechev-wltp`): engine size, power, doors and
 * seats, joined on make code, model code and year of manufacture (+ model type).
 */
export const ISRAEL_MODEL_CATALOGUE = '142afde2-6228-49f9-8a29-9b6c3a0cbe40';

/** The value a register's plate filter takes for a plate of digits. */
export function plateFilterValue(register: IsraelRegister, plate: string): number | string {
  return register.plateColumn === 'numeric' ? Number(plate) : plate.replace(/^0+/, '').padStart(8, '0');
}

/**
 * A record with its field names folded to one spelling: lower case, spaces and hyphens as
 * underscores. The registers disagree (`mispar_rechev`, `MISPAR_RECHEV`, `"MISPAR RECHEV"`; the
 * catalogue is seen as both `CO2_WLTP` and `co2_wltp`), so the mapper reads one form.
 */
export function foldFieldNames(record: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const folded: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) folded[name.trim().toLowerCase().replace(/[\s-]+/g, '_')] = value;
  return folded;
}

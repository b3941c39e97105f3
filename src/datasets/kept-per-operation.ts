/**
 * The paid upstreams (issue 32), by the provider name each answers under: the one list of them.
 * The configuration reads `<NAME>_*` for each (src/config/provider-config.ts), UPSTREAM_ORDER names
 * them, and their answers, recorded (`<NAME>_RECORD_FILE`) or exported (`vehicle-lookup export
 * --source <name>`), carry it as their `source`. It lives here, below the configuration and the
 * providers, because the import must know it without either (keptPerOperation).
 */
export const PAID_UPSTREAM_NAMES = ['regcheck', 'ukvd', 'vincario', 'carsxe'] as const;

/** A paid upstream's name. */
export type PaidUpstreamName = (typeof PAID_UPSTREAM_NAMES)[number];

/**
 * The `source` of the original service's answers (issue 24): the name of the `regcheck` provider,
 * written in every line REGCHECK_RECORD_FILE and `vehicle-lookup export --source regcheck` write.
 */
export const ORIGINAL_SOURCE: PaidUpstreamName = 'regcheck';

export function isPaidUpstreamName(name: string): name is PaidUpstreamName {
  return (PAID_UPSTREAM_NAMES as readonly string[]).includes(name);
}

/**
 * Whether an imported record of `source` answers only the operation it was imported for.
 *
 * A record the operator imports (a register export, their own data, the sample) is a vehicle of a
 * dataset: every operation of the dataset serves it, each shaped by its own rules (CheckUKMinimal
 * keeps six members of a Check record). An answer of a paid upstream (the original, UK Vehicle
 * Data, Vincario, CarsXE) is what it sent for one operation, served as it was served live; under
 * its dataset, a CheckUKMinimal answer would be served for a Check request of the same plate. So
 * those are kept per operation (operation_records).
 */
export function keptPerOperation(source: string): boolean {
  return isPaidUpstreamName(source);
}

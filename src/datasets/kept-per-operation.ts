/**
 * The `source` of the original service's answers (issue 24): the name of the `regcheck` provider,
 * written in every line REGCHECK_RECORD_FILE and `vehicle-lookup export --source regcheck` write.
 */
export const ORIGINAL_SOURCE = 'regcheck';

/**
 * Whether an imported record of `source` answers only the operation it was imported for.
 *
 * A record the operator imports (a register export, their own data, the sample) is a vehicle of a
 * dataset: every operation of the dataset serves it, each shaped by its own rules (CheckUKMinimal
 * keeps six members of a Check record). An answer of the original is what the original sent for
 * one operation, served byte for byte; under its dataset, a CheckUKMinimal answer would be served
 * for a Check request of the same plate. So those are kept per operation (operation_records).
 */
export function keptPerOperation(source: string): boolean {
  return source === ORIGINAL_SOURCE;
}

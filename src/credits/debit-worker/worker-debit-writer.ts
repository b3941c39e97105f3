import { Worker } from 'node:worker_threads';
import type { DebitRequest, DebitWriter } from '../debit-writer.js';
import type { WorkerReply, WorkerRequest } from './debit-worker.protocol.js';

const BOOT = new URL('../../shared/ts-worker-boot.js', import.meta.url);
const ENTRY = new URL('./debit-worker.entry.ts', import.meta.url).href;

interface Pending {
  resolve(balances: Array<number | undefined>): void;
  reject(error: Error): void;
}

/**
 * Writes debits on a worker thread with its own connection to the SQLite file, so SQLite's work
 * for each ledger row (about half of a lookup's remaining CPU in bench:json) runs on the other
 * core instead of the thread that serves HTTP. Batches are sent in order and answered after
 * their COMMIT. If the worker dies, the batches in flight fail (their callers get an error and no
 * data) and the next batch starts a new worker.
 */
export class WorkerDebitWriter implements DebitWriter {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing: Promise<void> | undefined;
  private ready: Promise<void> | undefined;

  constructor(private readonly file: string) {}

  write(batch: readonly DebitRequest[]): Promise<Array<number | undefined>> {
    if (this.closing) return Promise.reject(new Error('the debit writer is closed'));
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ type: 'write', id, batch } satisfies WorkerRequest);
    });
  }

  /** Starts the worker and waits until its connection is open. */
  start(): Promise<void> {
    this.ensureWorker();
    return this.ready ?? Promise.resolve();
  }

  close(): Promise<void> {
    const worker = this.worker;
    this.closing ??= worker
      ? new Promise<void>((resolve) => {
          // Keep the process alive until the worker has closed its connection and exited.
          worker.ref();
          worker.once('exit', () => {
            resolve();
          });
          worker.postMessage({ type: 'close' } satisfies WorkerRequest);
        })
      : Promise.resolve();
    return this.closing;
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(BOOT, { workerData: { entry: ENTRY, file: this.file } });
    // The worker must not keep a finished process alive; close() ends it explicitly.
    worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      const onReady = (reply: WorkerReply): void => {
        if (reply.type !== 'ready') return;
        worker.off('message', onReady);
        resolve();
      };
      worker.on('message', onReady);
      worker.once('error', reject);
      worker.once('exit', (code) => {
        reject(new Error(`the debit worker exited before it was ready (code ${code})`));
      });
    });
    // Observed through start(); a worker that dies early also fails its pending batches below.
    this.ready.catch(() => undefined);
    worker.on('message', (reply: WorkerReply) => {
      if (reply.type !== 'done' && reply.type !== 'failed') return;
      const pending = this.pending.get(reply.id);
      if (!pending) return;
      this.pending.delete(reply.id);
      if (reply.type === 'done') pending.resolve(reply.balances);
      else pending.reject(new Error(`debit transaction failed: ${reply.message}`));
    });
    const fail = (error: Error): void => {
      if (this.worker === worker) {
        this.worker = undefined;
        this.ready = undefined;
      }
      for (const [id, pending] of this.pending) {
        this.pending.delete(id);
        pending.reject(error);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      fail(new Error(`the debit worker exited (code ${code})`));
    });
    this.worker = worker;
    return worker;
  }
}

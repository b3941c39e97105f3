import type { DebitRequest } from '../debit-writer.js';

/** Messages to the debit worker. */
export type WorkerRequest = { readonly type: 'write'; readonly id: number; readonly batch: readonly DebitRequest[] } | { readonly type: 'close' };

/** Messages from the debit worker. */
export type WorkerReply =
  | { readonly type: 'ready' }
  | { readonly type: 'closed' }
  | { readonly type: 'done'; readonly id: number; readonly balances: Array<number | undefined> }
  | { readonly type: 'failed'; readonly id: number; readonly message: string };

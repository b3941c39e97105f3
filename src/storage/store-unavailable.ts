import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The store could not be reached, or the connection to it was lost before the statement's answer
 * came back (a PostgreSQL restart, failover, a dropped connection, the server refusing new
 * connections while it starts). Not a fault of the request: the lookup pipeline answers it as
 * "temporarily unavailable" on every interface (lookup-pipeline.ts), and it costs nothing.
 */
export class StoreUnavailable extends Error {
  override readonly name: string = 'StoreUnavailable';
}

/**
 * A transaction whose COMMIT was sent but whose answer was lost with the connection, and whose
 * outcome could not be learnt from the server (txid_status) within DB_COMMIT_SETTLE_SECONDS: it
 * may or may not have committed. Never retried (a retry could apply it twice) and never reported
 * as done. `settled` goes on asking the server in the background, for a bounded time, and
 * resolves with what it learns, so the owner can log what happened to that money.
 */
export class CommitOutcomeUnknown extends StoreUnavailable {
  override readonly name = 'CommitOutcomeUnknown';
  constructor(
    readonly transactionId: string,
    readonly settled: Promise<CommitStatus>,
    cause: unknown,
  ) {
    super(`the database connection was lost during COMMIT of transaction ${transactionId}; its outcome is not known yet`, { cause });
  }
}

/**
 * How every request that is not a lookup answers while the store is away (isStoreUnavailable):
 * the admin and account APIs (`unavailable`), the console's error page, getcredits and every other
 * route: 503 with Retry-After and this message, never an internal error, so an operator's script
 * or a customer's page retries instead of reporting a bug. Lookups answer their interface's own
 * "temporarily unavailable" (lookup-pipeline.ts).
 */
export const STORE_AWAY = {
  status: 503,
  retryAfterSeconds: 5,
  message: 'The database cannot be reached just now (a restart or a failover); try again in a few seconds.',
} as const;

/** What the server says of a transaction id: txid_status's answers, plus `unknown` when it could not be asked in time. */
export type CommitStatus = 'committed' | 'aborted' | 'unknown';

/**
 * SQLSTATEs that mean the connection, not the statement, failed: class 08 (connection exception),
 * 57P01 admin shutdown (a fast or smart restart, pg_terminate_backend), 57P02 crash shutdown,
 * 57P03 cannot connect now (the server is starting or stopping), 53300 too many connections.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * Node's socket errors on the way to or from the server (the `code` of a system error).
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * node-postgres reports a lost or refused connection with plain Errors that carry no code, only
 * these messages (pg 8: client.js, pg-pool): the one place they are listed.
 */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Query read timeout',
];

/**
 * Whether `error` (thrown by a query or a transaction) says the store is unreachable or the
 * connection to it was lost, rather than that the statement itself failed. SQLite, a file opened
 * in process, never answers true. The one place this is decided.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailable) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('08') && code.length === 5) return true;
    if (UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (SOCKET_CODES.has(code)) return true;
    // A unix socket that is not there (the server is down): ENOENT from connect only.
    if (code === 'ENOENT' && (error as { syscall?: unknown }).syscall === 'connect') return true;
  }
  // Node 20 tries every address of a host name and reports all failures at once.
  if (error instanceof AggregateError && error.errors.length > 0 && error.errors.every((inner) => isStoreUnavailable(inner))) return true;
  return PG_CONNECTION_MESSAGES.some((message) => error.message.startsWith(message));
}

/** How start-up waits for an unreachable database (DB_START_WAIT_SECONDS). */
export interface ConnectRetry {
  /** The whole wait; 0 tries once. */
  readonly waitMs: number;
  /** The first pause between attempts; it doubles up to maxDelayMs. */
  readonly firstDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Told before each pause, one line for the log. */
  readonly onRetry?: (message: string) => void;
}

const FIRST_CONNECT_DELAY_MS = 250;
const MAX_CONNECT_DELAY_MS = 5000;

/**
 * Runs `attempt` until it succeeds, retrying while it fails with isStoreUnavailable, pausing from
 * firstDelayMs, doubling up to maxDelayMs, for `waitMs` in all; any other failure (a wrong
 * password, a database that does not exist) is thrown at once. The error after the last attempt
 * is one line naming the database, the time waited and the cause, with no stack for the operator.
 */
export async function withConnectRetry<T>(description: string, retry: ConnectRetry, attempt: () => Promise<T>): Promise<T> {
  const started = performance.now();
  let delay = retry.firstDelayMs ?? FIRST_CONNECT_DELAY_MS;
  const maxDelay = retry.maxDelayMs ?? MAX_CONNECT_DELAY_MS;
  // Bounded in count too: the wait divided by the first pause is more than enough attempts.
  const maxAttempts = Math.max(1, Math.ceil(retry.waitMs / Math.max(1, Math.min(delay, maxDelay))) + 2);
  for (let n = 1; ; n += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!isStoreUnavailable(error)) throw error;
      const elapsed = performance.now() - started;
      const reason = describeError(error);
      if (elapsed + delay > retry.waitMs || n >= maxAttempts) {
        throw new StoreUnavailable(`cannot reach the database at ${description} (${n} attempt${n === 1 ? '' : 's'} over ${(elapsed / 1000).toFixed(1)} s; DB_START_WAIT_SECONDS): ${reason}`, { cause: error });
      }
      retry.onRetry?.(`the database at ${description} is not reachable (${reason}); retrying in ${(delay / 1000).toFixed(2)} s`);
      await sleep(delay);
      delay = Math.min(delay * 2, maxDelay);
    }
  }
}

/** An error's message in one line (an AggregateError's first inner message: Node leaves its own empty). */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors[0] instanceof Error) return describeError(error.errors[0]);
  const text = error instanceof Error ? error.message || (error as { code?: string }).code || error.name : String(error);
  return text.replace(/\s+/g, ' ').trim();
}

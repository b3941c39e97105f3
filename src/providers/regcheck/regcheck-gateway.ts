import type { BalanceAlertSink } from '../../alerts/upstream-balance-alerts.js';
import type { Clock } from '../../shared/clock.js';
import type { RecorderLog } from '../upstream/answer-recorder.js';
import { UpstreamHttpClient } from '../upstream/http-client.js';
import type { RegcheckConfig } from '../../config/paid-upstream-config.js';
import { SecretRedactor } from '../upstream/secret-redactor.js';
import type { Repeat } from '../../shared/repeat.js';
import { UpstreamBalanceWatch, type SharedBalance } from '../upstream/upstream-balance.js';
import { UpstreamBalanceRepository } from '../upstream/upstream-balance.repository.js';
import type { Db } from '../../storage/database.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import type { UpstreamMonitor } from '../upstream/upstream-monitor.js';
import type { RegcheckHooks } from './regcheck.client.js';

/** The balance as getcredits answers it: a plain integer (compat-notes "Credit balance"). */
const PLAIN_INTEGER = /^\s*(-?\d{1,12})\s*$/;

/**
 * Reads the operator's balance at the original: `GET {base}/ajax/getcredits.aspx?username=`, a
 * plain integer, `0` for an unknown username too (compat-notes "Credit balance"). Anything else
 * (an HTML page, a 5xx) is a failed read, never a balance.
 */
export function creditsReader(config: RegcheckConfig, http: UpstreamHttpClient, redactor: SecretRedactor): () => Promise<number> {
  return async () => {
    const url = `${config.settings.baseUrl}/ajax/getcredits.aspx?${new URLSearchParams({ username: config.username }).toString()}`;
    const response = await http.request({ method: 'GET', url, endpoint: 'getcredits' });
    if (response.status !== 200) throw new UpstreamError('unexpected-status', `getcredits answered HTTP ${response.status}`, response.status);
    const match = PLAIN_INTEGER.exec(response.text);
    if (!match?.[1]) throw new UpstreamError('bad-response', redactor.redact('getcredits did not answer a whole number'), 200);
    return Math.max(0, Number(match[1]));
  };
}

/** The store's shared balance of one provider, as the balance watch takes it. */
function sharedBalance(repository: UpstreamBalanceRepository, provider: string): SharedBalance {
  return {
    publish: (credits, readAt) => repository.publish(provider, credits, readAt),
    countDown: () => repository.countDown(provider),
    latest: () => repository.latest(provider),
  };
}

export interface RegcheckGatewayDeps {
  readonly monitor: UpstreamMonitor;
  readonly clock: Clock;
  /** Where an alert that could not be queued is reported. */
  readonly log?: RecorderLog;
  /** The timer of the balance reads; tests fire it by hand. */
  readonly repeat?: Repeat;
  /** The store every instance shares: the balance read, spent, shown and gated on is the same for all (upstream_balances). */
  readonly db?: Db;
}

/**
 * The operator's side of the original service as an upstream (issue 24): its balance there, read
 * at start and every minute (UpstreamBalanceWatch), which gates the provider at 0 and alerts the
 * operator below REGCHECK_LOW_CREDITS. Its record file (REGCHECK_RECORD_FILE) is every paid
 * upstream's (AnswerRecordings, answer-recording.ts). `hooks` go into the provider
 * (ServiceOptions.regcheckHooks); the server calls `start` once the webhooks exist and `close`
 * when it stops.
 */
export class RegcheckGateway {
  readonly balance: UpstreamBalanceWatch;
  readonly hooks: RegcheckHooks;

  constructor(config: RegcheckConfig, deps: RegcheckGatewayDeps) {
    const { settings } = config;
    const redactor = new SecretRedactor([config.username, encodeURIComponent(config.username)]);
    const http = new UpstreamHttpClient({ provider: settings.name, timeoutMs: settings.timeoutMs, budgetMs: settings.budgetMs, monitor: deps.monitor, clock: deps.clock });
    this.balance = new UpstreamBalanceWatch({
      provider: settings.name,
      read: creditsReader(config, http, redactor),
      lowCredits: config.lowCredits,
      monitor: deps.monitor,
      ...(deps.repeat ? { repeat: deps.repeat } : {}),
      ...(deps.log ? { log: deps.log } : {}),
      ...(deps.db ? { shared: sharedBalance(new UpstreamBalanceRepository(deps.db), settings.name), now: () => deps.clock.now() } : {}),
    });
    this.hooks = { refuse: () => this.balance.gate() };
  }

  /** Reads the balance now and every minute; alerts go to `alerts`. */
  start(alerts?: BalanceAlertSink): void {
    this.balance.start(alerts);
  }

  async close(): Promise<void> {
    await this.balance.close();
  }
}

import type { AuditLog } from '../audit/audit-log.js';
import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/create-database.js';
import { WebhookDispatcher } from '../webhooks/webhook-dispatcher.js';
import { WebhookRepository } from '../webhooks/webhook.repository.js';
import { WebhookService } from '../webhooks/webhook.service.js';
import { KeyCapAlerts } from './key-cap-alerts.js';
import { CreditAlerts, CreditAlertSweeper } from './credit-alerts.js';

/** Low-credit alerts and webhook delivery (docs/configuration.md, docs/webhooks.md); read by src/config/alert-config.ts. */
export interface AlertConfig {
  /** `CREDIT_ALERT_THRESHOLDS`: thresholds of accounts without their own, highest first. */
  readonly alertThresholds: readonly number[];
  /** `CREDIT_ALERT_SWEEP_MS`: how often the sweep reads the new ledger rows. */
  readonly sweepMs: number;
  /** `WEBHOOK_RETRY_SCHEDULE`: waits before each retry; attempts = length + 1. */
  readonly retryScheduleMs: readonly number[];
  /** `WEBHOOK_TIMEOUT_MS`: longest one delivery attempt may take. */
  readonly timeoutMs: number;
  /** `WEBHOOK_POLL_MS`: how often the outbox is polled for due messages. */
  readonly pollMs: number;
  /** `WEBHOOK_ALLOW_PRIVATE_URLS`: allow endpoints on loopback and private addresses. */
  readonly allowPrivateUrls: boolean;
}

export interface WarnLog {
  warn(message: string, error?: unknown): void;
}

/**
 * Low-credit alerts and their webhooks, wired once by the server's createServices (the CLI's
 * core services have none; a top-up there still re-arms thresholds, in CreditLedgerRepository.topUp).
 * The services (alerts, webhooks) serve the API routes and the lookup path's `onDebited`; the two
 * loops (sender, sweep) run only once `start` is called, by buildApp, and `close` stops them.
 */
export interface Alerting {
  readonly alerts: CreditAlerts;
  /** Alerts at 80% and 100% of an API key's cap (issue 33). */
  readonly keyCaps: KeyCapAlerts;
  readonly webhooks: WebhookService;
  readonly repository: WebhookRepository;
  readonly dispatcher: WebhookDispatcher;
  start(): void;
  close(): Promise<void>;
}

export function createAlerting(storage: Pick<Storage, 'db' | 'transaction' | 'skipLocked' | 'serialize'>, clock: Clock, config: AlertConfig, audit: AuditLog, log?: WarnLog): Alerting {
  const repository = new WebhookRepository(storage);
  const dispatcher = new WebhookDispatcher(repository, storage, clock, {
    retryScheduleMs: config.retryScheduleMs,
    timeoutMs: config.timeoutMs,
    pollMs: config.pollMs,
    allowPrivateUrls: config.allowPrivateUrls,
    ...(log ? { log } : {}),
  });
  const webhooks = new WebhookService(storage, repository, clock, {
    audit,
    allowPrivateUrls: config.allowPrivateUrls,
    onEnqueued: () => {
      dispatcher.wake();
    },
  });
  const alerts = new CreditAlerts(storage, webhooks, clock, { defaults: config.alertThresholds, audit, ...(log ? { log } : {}) });
  const sweeper = new CreditAlertSweeper(alerts, config.sweepMs, log);
  return {
    alerts,
    keyCaps: new KeyCapAlerts(storage, webhooks, log),
    webhooks,
    repository,
    dispatcher,
    start: () => {
      dispatcher.start();
      sweeper.start();
    },
    close: async () => {
      await sweeper.close();
      await dispatcher.close();
    },
  };
}

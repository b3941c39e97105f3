import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/create-database.js';
import { WebhookDispatcher } from '../webhooks/webhook-dispatcher.js';
import { WebhookRepository } from '../webhooks/webhook.repository.js';
import { WebhookService } from '../webhooks/webhook.service.js';
import type { AlertConfig } from './alert-config.js';
import { CreditAlerts, CreditAlertSweeper } from './credit-alerts.js';

export interface WarnLog {
  warn(message: string, error?: unknown): void;
}

/**
 * Low-credit alerts and their webhooks, wired once. The services (alerts, webhooks) serve the
 * API, the CLI and the lookup path's `onDebit`; the two loops (sender, sweep) run only where
 * `start` is called: in the server, never in a CLI command.
 */
export interface Alerting {
  readonly alerts: CreditAlerts;
  readonly webhooks: WebhookService;
  readonly repository: WebhookRepository;
  readonly dispatcher: WebhookDispatcher;
  start(): void;
  close(): Promise<void>;
}

export function createAlerting(storage: Pick<Storage, 'db' | 'transaction' | 'skipLocked'>, clock: Clock, config: AlertConfig, log?: WarnLog): Alerting {
  const repository = new WebhookRepository(storage);
  const dispatcher = new WebhookDispatcher(repository, storage, clock, {
    retryScheduleMs: config.retryScheduleMs,
    timeoutMs: config.timeoutMs,
    pollMs: config.pollMs,
    allowPrivateUrls: config.allowPrivateUrls,
    ...(log ? { log } : {}),
  });
  const webhooks = new WebhookService(storage, repository, clock, {
    allowPrivateUrls: config.allowPrivateUrls,
    onEnqueued: () => {
      dispatcher.wake();
    },
  });
  const alerts = new CreditAlerts(storage, webhooks, clock, { defaults: config.alertThresholds, ...(log ? { log } : {}) });
  const sweeper = new CreditAlertSweeper(alerts, config.sweepMs, log);
  return {
    alerts,
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

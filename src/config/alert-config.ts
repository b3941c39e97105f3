import type { AlertConfig } from '../alerts/alerting.js';
import { EnvReader } from './env-reader.js';
import { MAX_THRESHOLD, MAX_THRESHOLDS } from '../alerts/credit-alerts.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Reads the alert and webhook settings (part of the server's Config: only the server sends). */
export function readAlertConfig(env: EnvReader): AlertConfig {
  const thresholds = env.intList('CREDIT_ALERT_THRESHOLDS', [100, 20, 0], { min: 0, max: MAX_THRESHOLD, maxItems: MAX_THRESHOLDS });
  return Object.freeze({
    alertThresholds: Object.freeze([...new Set(thresholds)].sort((a, b) => b - a)),
    sweepMs: env.int('CREDIT_ALERT_SWEEP_MS', 10_000, { min: 10, max: HOUR_MS }),
    retryScheduleMs: Object.freeze([...env.durationList('WEBHOOK_RETRY_SCHEDULE', [5000, 5 * 60_000, 30 * 60_000, 2 * HOUR_MS, 5 * HOUR_MS, 10 * HOUR_MS], { maxItems: 20, maxMs: 7 * DAY_MS })]),
    timeoutMs: env.int('WEBHOOK_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
    pollMs: env.int('WEBHOOK_POLL_MS', 1000, { min: 10, max: 600_000 }),
    allowPrivateUrls: env.bool('WEBHOOK_ALLOW_PRIVATE_URLS', false),
  });
}

/** The alert settings alone, from an environment (tests; `{}` gives the defaults). */
export function loadAlertConfig(env: Readonly<NodeJS.ProcessEnv>): AlertConfig {
  return readAlertConfig(new EnvReader(env));
}

/** The defaults, for services built without a configuration (tests, benches). */
export const DEFAULT_ALERT_CONFIG: AlertConfig = loadAlertConfig({});

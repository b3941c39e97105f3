import type { UpstreamListener } from './upstream-monitor.js';

/** The logger methods used here; a pino or Fastify logger fits. */
export interface UpstreamLogger {
  debug(object: object, message: string): void;
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/**
 * Logs upstream events: failures and circuit changes at warn, retries and recoveries at info,
 * every request and answer at debug. Events hold no secrets (see UpstreamEvent), so nothing here
 * needs redacting; the upstream tests capture this output and check that.
 */
export function upstreamLogListener(logger: UpstreamLogger): UpstreamListener {
  return (event) => {
    switch (event.type) {
      case 'request':
        logger.debug({ provider: event.provider, endpoint: event.endpoint, outcome: event.outcome, ms: Math.round(event.seconds * 1000), attempt: event.attempt }, 'upstream request');
        return;
      case 'retry':
        logger.info({ provider: event.provider, endpoint: event.endpoint, reason: event.reason, waitMs: event.waitMs }, 'retrying upstream request');
        return;
      case 'answer': {
        const fields = { provider: event.provider, answer: event.answer, via: event.via, ms: Math.round(event.seconds * 1000) };
        // While the circuit is open (or a gate closed) every lookup would say so; the opening itself is the warning.
        if (event.answer === 'unavailable' && event.via === 'upstream') logger.warn({ ...fields, kind: event.failure?.kind, reason: event.failure?.message }, 'upstream unavailable');
        else logger.debug(fields, 'upstream answer');
        return;
      }
      case 'breaker':
        if (event.to === 'open') logger.warn({ provider: event.provider, from: event.from, to: event.to }, 'circuit opened: the upstream is not asked until the wait is over');
        else logger.info({ provider: event.provider, from: event.from, to: event.to }, event.to === 'closed' ? 'circuit closed: the upstream answers again' : 'circuit half-open: trying the upstream once');
        return;
      case 'token':
        if (event.outcome === 'issued') logger.debug({ provider: event.provider, expiresInS: event.expiresInS }, 'access token issued');
        else logger.warn({ provider: event.provider, reason: event.message }, 'access token request failed');
        return;
      case 'cache-error':
        logger.warn({ provider: event.provider, operation: event.operation, reason: event.message }, 'upstream answer cache failed; going on without it');
        return;
      case 'spend':
        logger.debug({ provider: event.provider, amount: event.amount }, 'upstream spend recorded');
        return;
      case 'balance':
        if (event.how === 'error') logger.warn({ provider: event.provider, reason: event.message }, 'upstream balance could not be read; keeping the last one');
        else if (event.how === 'read') logger.debug({ provider: event.provider, credits: event.credits }, 'upstream balance read');
        return;
    }
  };
}

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { BreakerState } from './circuit-breaker.js';
import type { UpstreamMonitor } from './upstream-monitor.js';

const STATE_VALUE: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

/**
 * Prometheus metrics of the upstream providers, labelled by provider, fed by the monitor's events
 * (docs/providers.md "Monitoring"):
 * - `vehicle_lookup_upstream_requests_total{provider,endpoint,outcome}`: HTTP attempts; outcome is
 *   the status code, `timeout` or `network`;
 * - `vehicle_lookup_upstream_request_duration_seconds{provider,endpoint}`: time per attempt;
 * - `vehicle_lookup_upstream_retries_total{provider,reason}`: retries (timeout, network, 5xx, 429);
 * - `vehicle_lookup_upstream_lookups_total{provider,answer,via}`: lookups by answer (found,
 *   not_found, unavailable) and source (upstream, cache, circuit_open, refused: a gate of the provider said no);
 * - `vehicle_lookup_upstream_circuit_state{provider}`: 0 closed, 1 half-open, 2 open;
 * - `vehicle_lookup_upstream_calls_total{provider,operation,outcome}`: lookups that asked the
 *   upstream (its spend), by operation and outcome (found, not_found, failed);
 * - `vehicle_lookup_upstream_cache_answers_total{provider,operation,answer}`: lookups the cache
 *   answered instead of the upstream (found, not_found): the calls, and credits, it saved;
 * - `vehicle_lookup_upstream_balance{provider}`: the operator's balance at an upstream that has
 *   one (upstream-balance.ts), as last read or counted down.
 * `operation` is empty for sources that do not name it (they answer one kind of question).
 */
export function registerUpstreamMetrics(registry: Registry, monitor: UpstreamMonitor): void {
  const requests = new Counter({
    name: 'vehicle_lookup_upstream_requests_total',
    help: 'HTTP attempts to upstream providers by outcome (status code, timeout or network)',
    labelNames: ['provider', 'endpoint', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'vehicle_lookup_upstream_request_duration_seconds',
    help: 'Time of one HTTP attempt to an upstream provider',
    labelNames: ['provider', 'endpoint'],
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'vehicle_lookup_upstream_retries_total',
    help: 'Upstream requests retried, by reason (timeout, network, 5xx, 429)',
    labelNames: ['provider', 'reason'],
    registers: [registry],
  });
  const lookups = new Counter({
    name: 'vehicle_lookup_upstream_lookups_total',
    help: 'Upstream lookups by answer (found, not_found, unavailable) and where it came from (upstream, cache, circuit_open, refused)',
    labelNames: ['provider', 'answer', 'via'],
    registers: [registry],
  });
  const calls = new Counter({
    name: 'vehicle_lookup_upstream_calls_total',
    help: 'Lookups that asked an upstream provider (its spend), by operation and outcome (found, not_found, failed)',
    labelNames: ['provider', 'operation', 'outcome'],
    registers: [registry],
  });
  const cacheAnswers = new Counter({
    name: 'vehicle_lookup_upstream_cache_answers_total',
    help: 'Lookups the upstream answer cache answered instead of the upstream provider (calls saved), by operation and answer',
    labelNames: ['provider', 'operation', 'answer'],
    registers: [registry],
  });
  new Gauge({
    name: 'vehicle_lookup_upstream_balance',
    help: "The operator's balance (credits) at an upstream provider that has one, as last read or counted down",
    labelNames: ['provider'],
    registers: [registry],
    collect() {
      for (const { provider, credits } of monitor.balances()) this.set({ provider }, credits);
    },
  });
  new Gauge({
    name: 'vehicle_lookup_upstream_circuit_state',
    help: 'Circuit breaker state per upstream provider: 0 closed, 1 half-open, 2 open',
    labelNames: ['provider'],
    registers: [registry],
    collect() {
      for (const { provider, state } of monitor.breakerStates()) this.set({ provider }, STATE_VALUE[state]);
    },
  });

  monitor.subscribe((event) => {
    switch (event.type) {
      case 'request':
        requests.inc({ provider: event.provider, endpoint: event.endpoint, outcome: event.outcome });
        duration.observe({ provider: event.provider, endpoint: event.endpoint }, event.seconds);
        return;
      case 'retry':
        retries.inc({ provider: event.provider, reason: event.reason });
        return;
      case 'answer': {
        const answer = event.answer.replace('-', '_');
        lookups.inc({ provider: event.provider, answer, via: event.via.replace('-', '_') });
        const operation = event.operation ?? '';
        if (event.via === 'upstream') calls.inc({ provider: event.provider, operation, outcome: event.answer === 'unavailable' ? 'failed' : answer });
        else if (event.via === 'cache') cacheAnswers.inc({ provider: event.provider, operation, answer });
        return;
      }
      // The breaker's state and the balance are read by the gauges' collect(); tokens and cache errors are logged only;
      // spend is counted by the routing metrics, which know the currency (routing-metrics.ts).
      case 'balance':
      case 'breaker':
      case 'token':
      case 'cache-error':
      case 'spend':
        return;
    }
  });
}

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
 * - `vehicle_lookup_upstream_circuit_state{provider}`: 0 closed, 1 half-open, 2 open.
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
      case 'answer':
        lookups.inc({ provider: event.provider, answer: event.answer.replace('-', '_'), via: event.via.replace('-', '_') });
        return;
      // The breaker's state is read by the gauge's collect(); tokens and cache errors are logged only.
      case 'breaker':
      case 'token':
      case 'cache-error':
        return;
    }
  });
}

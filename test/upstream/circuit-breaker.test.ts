import { describe, expect, it } from 'vitest';
import { CircuitBreaker, type BreakerState } from '../../src/providers/upstream/circuit-breaker.js';
import { ManualClock } from './harness.js';

function breaker(failureThreshold = 3, openMs = 30_000): { b: CircuitBreaker; clock: ManualClock; changes: string[] } {
  const clock = new ManualClock();
  const changes: string[] = [];
  const b = new CircuitBreaker({ failureThreshold, openMs, clock, onStateChange: (from: BreakerState, to: BreakerState) => changes.push(`${from}->${to}`) });
  return { b, clock, changes };
}

describe('circuit breaker', () => {
  it('stays closed below the threshold, and a success resets the count of consecutive failures', () => {
    const { b } = breaker(3);
    b.onFailure();
    b.onFailure();
    b.onSuccess();
    b.onFailure();
    b.onFailure();
    expect(b.state).toBe('closed');
    expect(b.tryAcquire()).toBe(true);
  });

  it('opens after the threshold of consecutive failures and refuses calls while open', () => {
    const { b, clock, changes } = breaker(3, 30_000);
    for (let i = 0; i < 3; i += 1) b.onFailure();
    expect(b.state).toBe('open');
    expect(b.tryAcquire()).toBe(false);
    clock.advance(29_999);
    expect(b.tryAcquire()).toBe(false);
    expect(b.retryAt).toBe(clock.now().getTime() + 1);
    expect(changes).toEqual(['closed->open']);
  });

  it('lets exactly one trial call through once the wait is over, and closes when it succeeds', () => {
    const { b, clock, changes } = breaker(1, 1000);
    b.onFailure();
    clock.advance(1000);
    expect(b.state).toBe('half-open');
    expect(b.tryAcquire()).toBe(true);
    expect(b.tryAcquire()).toBe(false);
    b.onSuccess();
    expect(b.state).toBe('closed');
    expect(b.tryAcquire()).toBe(true);
    expect(changes).toEqual(['closed->open', 'open->half-open', 'half-open->closed']);
  });

  it('opens again for a full wait when the trial call fails', () => {
    const { b, clock, changes } = breaker(2, 1000);
    b.onFailure();
    b.onFailure();
    clock.advance(1500);
    expect(b.tryAcquire()).toBe(true);
    b.onFailure();
    expect(b.state).toBe('open');
    clock.advance(999);
    expect(b.tryAcquire()).toBe(false);
    clock.advance(1);
    expect(b.tryAcquire()).toBe(true);
    expect(changes).toEqual(['closed->open', 'open->half-open', 'half-open->open', 'open->half-open']);
  });

  it('rejects thresholds that cannot work', () => {
    const clock = new ManualClock();
    expect(() => new CircuitBreaker({ failureThreshold: 0, openMs: 1, clock })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ failureThreshold: 1, openMs: -1, clock })).toThrow(RangeError);
  });
});

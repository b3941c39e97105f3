import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/shared/clock.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('systemClock', () => {
  it('gives the same time from millis() as from now(), fake timers included', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2020-01-01T00:00:00.000Z'));
    expect(systemClock.now().toISOString()).toBe('2020-01-01T00:00:00.000Z');
    expect(systemClock.millis?.()).toBe(Date.parse('2020-01-01T00:00:00.000Z'));
  });
});

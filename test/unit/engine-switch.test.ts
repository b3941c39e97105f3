import { describe, expect, it } from 'vitest';
import { engineSwitchOf } from '../helpers/engine-switch.js';

describe('TEST_ENGINES, the one switch for the servers a test run uses', () => {
  it('runs both engines and Redis unless told otherwise', () => {
    expect(engineSwitchOf({})).toBe('all');
    expect(engineSwitchOf({ TEST_ENGINES: '' })).toBe('all');
    expect(engineSwitchOf({ TEST_ENGINES: 'all' })).toBe('all');
  });

  it('runs SQLite alone when npm run test:fast sets it', () => {
    expect(engineSwitchOf({ TEST_ENGINES: 'sqlite' })).toBe('sqlite');
    expect(engineSwitchOf({ TEST_ENGINES: ' SQLite ' })).toBe('sqlite');
  });

  it('refuses anything else, naming the variable and the guide', () => {
    expect(() => engineSwitchOf({ TEST_ENGINES: 'postgres' })).toThrow(/TEST_ENGINES must be "sqlite" or "all" \(got "postgres"\): see docs\/testing\.md/);
  });
});

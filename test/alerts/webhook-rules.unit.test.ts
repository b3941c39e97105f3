import { describe, expect, it } from 'vitest';
import { crossesDownwards, normaliseThresholds } from '../../src/alerts/credit-alerts.js';
import { loadAlertConfig } from '../../src/config/alert-config.js';
import { ConfigError } from '../../src/config/config.js';
import { generateWebhookSecret, signWebhook, webhookHeaders } from '../../src/webhooks/webhook-signature.js';
import { isPrivateAddress, normaliseWebhookUrl, privateAddressGuard, webhookUrlProblem } from '../../src/webhooks/webhook-url.js';
import { verifyStandardWebhook } from './standard-webhooks-verifier.js';

describe('Standard Webhooks signing', () => {
  // The specification's published example (also in its reference libraries' tests).
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const body = '{"test": 2432232314}';

  it('reproduces the specification’s example signature', () => {
    expect(signWebhook(secret, id, 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('sends one space-separated signature per live secret, each verifiable on its own', () => {
    const next = generateWebhookSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([next, secret], id, now, body);
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verifyStandardWebhook([secret], headers, body, now)).toEqual([0]);
    expect(verifyStandardWebhook([next], headers, body, now)).toEqual([0]);
    expect(() => verifyStandardWebhook([generateWebhookSecret()], headers, body, now)).toThrow('no signature matches');
    expect(() => verifyStandardWebhook([secret], headers, `${body} `, now)).toThrow('no signature matches');
  });

  it('makes secrets of 32 random bytes with the whsec_ prefix', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});

describe('webhook URLs', () => {
  it('accepts only http and https URLs without credentials', () => {
    expect(webhookUrlProblem('https://hooks.example.com/in', false)).toBeUndefined();
    expect(webhookUrlProblem('ftp://hooks.example.com/in', false)).toMatch(/http or https/);
    expect(webhookUrlProblem('not a url', false)).toMatch(/absolute/);
    expect(webhookUrlProblem('https://user:pw@hooks.example.com/', false)).toMatch(/credentials/);
    expect(webhookUrlProblem(`https://example.com/${'a'.repeat(2048)}`, false)).toMatch(/2048/);
  });

  it('refuses loopback, private, link-local and metadata addresses unless the operator allows them', () => {
    for (const url of ['http://127.0.0.1:8080/', 'http://localhost/', 'http://10.1.2.3/', 'http://192.168.0.10/', 'http://172.20.0.1/', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/', 'http://[fd00::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/']) {
      expect(webhookUrlProblem(url, false), url).toMatch(/public address/);
      expect(webhookUrlProblem(url, true), url).toBeUndefined();
    }
    expect(isPrivateAddress('8.8.8.8')).toBe(false);
    expect(isPrivateAddress('2606:4700:4700::1111')).toBe(false);
  });

  it('refuses the other spellings of a private host: a trailing dot (the fully qualified name), upper case, IPv4 in hex or short form', () => {
    for (const url of ['http://localhost.:8080/', 'http://LOCALHOST../', 'http://api.localhost./', 'http://127.0.0.1./', 'http://0x7f.1/', 'http://127.1/', 'http://[::ffff:7f00:1]/']) {
      expect(webhookUrlProblem(url, false), url).toMatch(/public address/);
    }
    expect(webhookUrlProblem('https://hooks.example.org./in', false)).toBeUndefined();
  });

  it('stores a URL as the parser serialises it: no tab or newline it would have dropped', () => {
    expect(normaliseWebhookUrl('https://Hooks.Example.org/a\nb')).toBe('https://hooks.example.org/ab');
  });

  it('refuses at connection time a name that resolves to a private address', async () => {
    const error = await new Promise<Error | null>((resolve) => {
      privateAddressGuard('localhost', {}, (err) => {
        resolve(err);
      });
    });
    expect(error?.message).toMatch(/resolves to a private address/);
  });
});

describe('thresholds', () => {
  it('counts a crossing only when the debit took the balance from above the threshold to it or below', () => {
    expect(crossesDownwards(20, 1, 20)).toBe(true);
    expect(crossesDownwards(20, 5, 17)).toBe(true);
    expect(crossesDownwards(20, 1, 19)).toBe(false);
    expect(crossesDownwards(20, 1, 21)).toBe(false);
    expect(crossesDownwards(0, 1, 0)).toBe(true);
  });

  it('orders thresholds highest first without duplicates and refuses bad ones', () => {
    expect(normaliseThresholds([0, 100, 20, 100])).toEqual([100, 20, 0]);
    expect(() => normaliseThresholds([-1])).toThrow(/whole numbers/);
    expect(() => normaliseThresholds([1.5])).toThrow(/whole numbers/);
    expect(() => normaliseThresholds(Array.from({ length: 11 }, (_, i) => i))).toThrow(/at most 10/);
  });
});

describe('alert and webhook configuration', () => {
  it('defaults to thresholds 100, 20, 0 and waits of 5s, 5m, 30m, 2h, 5h, 10h', () => {
    const config = loadAlertConfig({});
    expect(config.alertThresholds).toEqual([100, 20, 0]);
    expect(config.retryScheduleMs).toEqual([5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000]);
    expect(config.timeoutMs).toBe(10_000);
    expect(config.allowPrivateUrls).toBe(false);
  });

  it('reads the operator’s settings and refuses malformed ones', () => {
    expect(loadAlertConfig({ CREDIT_ALERT_THRESHOLDS: '5, 50' }).alertThresholds).toEqual([50, 5]);
    // Empty counts as unset, as for every variable; `none` turns the default alerts off.
    expect(loadAlertConfig({ CREDIT_ALERT_THRESHOLDS: '' }).alertThresholds).toEqual([100, 20, 0]);
    expect(loadAlertConfig({ CREDIT_ALERT_THRESHOLDS: 'none' }).alertThresholds).toEqual([]);
    expect(loadAlertConfig({ CREDIT_ALERT_THRESHOLDS: '5,5,0' }).alertThresholds).toEqual([5, 0]);
    expect(loadAlertConfig({ WEBHOOK_RETRY_SCHEDULE: '100ms,1s,2m' }).retryScheduleMs).toEqual([100, 1000, 120_000]);
    expect(() => loadAlertConfig({ WEBHOOK_RETRY_SCHEDULE: '5 minutes' })).toThrow(ConfigError);
    expect(() => loadAlertConfig({ CREDIT_ALERT_THRESHOLDS: '10,-1' })).toThrow(ConfigError);
    expect(() => loadAlertConfig({ WEBHOOK_TIMEOUT_MS: '50' })).toThrow(ConfigError);
  });
});

import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { OperationDeclaration } from '../catalogue/operation.js';
import type { CapPeriod } from '../storage/database.js';

/*
 * A key's own rules (issue 33): a credit cap per period, the operations it may call, its own rate
 * limits, the client addresses it may be used from, and labels. Each is optional; a key without
 * any is exactly the key it was before (LiveKey.rules is undefined and the lookup path checks
 * nothing more for it).
 */

export type { CapPeriod } from '../storage/database.js';

export const CAP_PERIODS: readonly CapPeriod[] = ['day', 'month', 'total'];

/** A key's credit cap: at most `credits` per `period` (a UTC day, a UTC calendar month, or ever). */
export interface KeyCap {
  readonly credits: number;
  readonly period: CapPeriod;
}

/** A key's settings as customers and operators see and set them; null: no such rule. */
export interface KeySettings {
  readonly cap: KeyCap | null;
  /** Operation names, `country:NAME` (every operation of that country) and `vin` (the lookups by VIN). */
  readonly operations: readonly string[] | null;
  readonly perSecond: number | null;
  readonly perDay: number | null;
  /** CIDR blocks (a bare address is a /32 or /128). */
  readonly allowedIps: readonly string[] | null;
  /** Free key/value metadata; {} when none. */
  readonly labels: Readonly<Record<string, string>>;
}

/** A change of settings: a field absent stays as it is, null clears it. */
export type KeySettingsChange = { -readonly [K in keyof KeySettings]?: KeySettings[K] | null };

export const NO_SETTINGS: KeySettings = Object.freeze({ cap: null, operations: null, perSecond: null, perDay: null, allowedIps: null, labels: Object.freeze({}) });

export const MAX_CAP_CREDITS = 1_000_000_000;
export const MAX_KEY_RATE = 1_000_000_000;
const MAX_LIST = 100;
const MAX_LABELS = 20;
const LABEL_KEY = /^[A-Za-z0-9._:/-]{1,64}$/;
const MAX_LABEL_VALUE = 200;

/** The settings after a change; throws a message (KeyRuleError) for a value that cannot be a rule. */
export function applySettingsChange(current: KeySettings, change: KeySettingsChange, operations: readonly OperationDeclaration[]): KeySettings {
  const next: KeySettings = {
    cap: change.cap === undefined ? current.cap : change.cap,
    operations: change.operations === undefined ? current.operations : change.operations,
    perSecond: change.perSecond === undefined ? current.perSecond : change.perSecond,
    perDay: change.perDay === undefined ? current.perDay : change.perDay,
    allowedIps: change.allowedIps === undefined ? current.allowedIps : change.allowedIps,
    labels: change.labels === undefined ? current.labels : (change.labels ?? {}),
  };
  if (next.cap !== null) {
    if (!Number.isInteger(next.cap.credits) || next.cap.credits < 1 || next.cap.credits > MAX_CAP_CREDITS) {
      throw new KeyRuleError(`the cap must be a whole number of credits from 1 to ${MAX_CAP_CREDITS}`);
    }
    if (!CAP_PERIODS.includes(next.cap.period)) throw new KeyRuleError(`the cap period must be one of ${CAP_PERIODS.join(', ')}`);
  }
  for (const [what, value] of [['the per-second limit', next.perSecond], ['the per-day limit', next.perDay]] as const) {
    if (value !== null && (!Number.isInteger(value) || value < 1 || value > MAX_KEY_RATE)) throw new KeyRuleError(`${what} must be a whole number from 1 to ${MAX_KEY_RATE}`);
  }
  const ops = next.operations === null ? null : normaliseOperations(next.operations, operations);
  const ips = next.allowedIps === null ? null : normaliseAddresses(next.allowedIps);
  checkLabels(next.labels);
  return { ...next, operations: ops, allowedIps: ips, labels: { ...next.labels } };
}

/** Thrown for a setting that cannot be a rule; the service answers it as INVALID. */
export class KeyRuleError extends Error {
  override readonly name = 'KeyRuleError';
}

function normaliseOperations(list: readonly string[], operations: readonly OperationDeclaration[]): string[] {
  if (list.length === 0) throw new KeyRuleError('allowed operations must name at least one operation (or clear the rule to allow every operation)');
  if (list.length > MAX_LIST) throw new KeyRuleError(`at most ${MAX_LIST} allowed operations`);
  const names = new Set(operations.map((op) => op.name));
  const countries = new Map<string, string>();
  for (const op of operations) if (op.country !== undefined) countries.set(op.country.toLowerCase(), op.country);
  const out: string[] = [];
  for (const raw of list) {
    const item = raw.trim();
    let value: string;
    if (item.toLowerCase() === 'vin') value = 'vin';
    else if (item.toLowerCase().startsWith('country:')) {
      const country = countries.get(item.slice('country:'.length).trim().toLowerCase());
      if (country === undefined) throw new KeyRuleError(`unknown country in ${item}: use a country as the catalogue names it (country:USA, country:UK, country:France...)`);
      value = `country:${country}`;
    } else if (names.has(item)) value = item;
    else throw new KeyRuleError(`unknown operation ${item.slice(0, 64)} (operation names are case sensitive; or country:NAME, or vin)`);
    if (!out.includes(value)) out.push(value);
  }
  return out;
}

function normaliseAddresses(list: readonly string[]): string[] {
  if (list.length === 0) throw new KeyRuleError('allowed addresses must list at least one CIDR block (or clear the rule to allow any address)');
  if (list.length > MAX_LIST) throw new KeyRuleError(`at most ${MAX_LIST} allowed address blocks`);
  const out: string[] = [];
  for (const raw of list) {
    const block = parseCidr(raw.trim());
    if (!block) throw new KeyRuleError(`${raw.slice(0, 64)} is not an IP address or CIDR block (such as 203.0.113.0/24 or 2001:db8::/32)`);
    const text = `${block.address}/${block.prefix}`;
    if (!out.includes(text)) out.push(text);
  }
  return out;
}

function parseCidr(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, extra] = text.split('/');
  if (extra !== undefined) return undefined;
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  if (!family) return undefined;
  const max = family === 'ipv4' ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return undefined;
  return { address: address.toLowerCase(), prefix, family };
}

function checkLabels(labels: Readonly<Record<string, string>>): void {
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS) throw new KeyRuleError(`at most ${MAX_LABELS} labels`);
  for (const [key, value] of entries) {
    if (!LABEL_KEY.test(key)) throw new KeyRuleError(`label name ${key.slice(0, 64)} must be 1 to 64 letters, digits and . _ : / -`);
    if (typeof value !== 'string' || value.length > MAX_LABEL_VALUE) throw new KeyRuleError(`label ${key} must have a text value of at most ${MAX_LABEL_VALUE} characters`);
  }
}

/** Parses `KEY=VALUE` (the CLI's and the console's form of a label). */
export function parseLabel(text: string): [string, string] {
  const at = text.indexOf('=');
  if (at <= 0) throw new KeyRuleError(`a label is KEY=VALUE, not ${text.slice(0, 64)}`);
  return [text.slice(0, at).trim(), text.slice(at + 1).trim()];
}

/**
 * What the lookup path enforces for one key, compiled once when the account is loaded
 * (AccountCache): undefined for a key with no rule to enforce, so such a key costs nothing.
 */
export interface KeyRules {
  readonly keyId: number;
  readonly keyName: string;
  readonly cap: KeyCap | null;
  readonly perSecond: number | null;
  readonly perDay: number | null;
  /** Undefined: every operation. */
  readonly allowsOperation?: (op: OperationDeclaration) => boolean;
  /** Undefined: every address. */
  readonly allowsAddress?: (address: string) => boolean;
  /** The rules as set, for messages. */
  readonly operations: readonly string[] | null;
}

export function compileRules(keyId: number, keyName: string, settings: KeySettings): KeyRules | undefined {
  const { cap, operations, perSecond, perDay, allowedIps } = settings;
  if (cap === null && operations === null && perSecond === null && perDay === null && allowedIps === null) return undefined;
  return {
    keyId,
    keyName,
    cap,
    perSecond,
    perDay,
    operations,
    ...(operations === null ? {} : { allowsOperation: operationMatcher(operations) }),
    ...(allowedIps === null ? {} : { allowsAddress: addressMatcher(allowedIps) }),
  };
}

function operationMatcher(rules: readonly string[]): (op: OperationDeclaration) => boolean {
  const names = new Set<string>();
  const countries = new Set<string>();
  let vin = false;
  for (const rule of rules) {
    if (rule === 'vin') vin = true;
    else if (rule.startsWith('country:')) countries.add(rule.slice('country:'.length));
    else names.add(rule);
  }
  return (op) => names.has(op.name) || (op.country !== undefined && countries.has(op.country)) || (vin && isVinOperation(op));
}

/** The lookups by VIN: an operation whose key is a VIN (VinCheck, CheckRecalledVIN, CheckStolen). */
export function isVinOperation(op: OperationDeclaration): boolean {
  return op.parameters.some((p) => p.role === 'key' && p.rule?.name === 'vin');
}

function addressMatcher(blocks: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const text of blocks) {
    const block = parseCidr(text);
    if (block) list.addSubnet(block.address, block.prefix, block.family);
  }
  return (address) => {
    // An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d: match it as IPv4.
    const plain = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
    const family = isIPv4(plain) ? 'ipv4' : isIPv6(plain) ? 'ipv6' : undefined;
    return family !== undefined && list.check(plain, family);
  };
}

/** The period a cap counts in at `ms`: '2026-11-28' (day), '2026-11' (month), 'total'. */
export function capPeriodKey(period: CapPeriod, ms: number): string {
  if (period === 'total') return 'total';
  const iso = new Date(ms).toISOString();
  return period === 'day' ? iso.slice(0, 10) : iso.slice(0, 7);
}

/** When the cap's period that holds `ms` ends (ms), or null for `total`. */
export function capPeriodEndsMs(period: CapPeriod, ms: number): number | null {
  if (period === 'total') return null;
  const d = new Date(ms);
  return period === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The stored columns of settings (migration 0019). */
export function settingsColumns(s: KeySettings): {
  cap_credits: number | null;
  cap_period: CapPeriod | null;
  operations: string | null;
  rate_per_second: number | null;
  rate_per_day: number | null;
  allowed_ips: string | null;
  labels: string | null;
} {
  return {
    cap_credits: s.cap?.credits ?? null,
    cap_period: s.cap?.period ?? null,
    operations: s.operations === null ? null : JSON.stringify(s.operations),
    rate_per_second: s.perSecond,
    rate_per_day: s.perDay,
    allowed_ips: s.allowedIps === null ? null : JSON.stringify(s.allowedIps),
    labels: Object.keys(s.labels).length === 0 ? null : JSON.stringify(s.labels),
  };
}

/** Settings from stored columns. */
export function settingsOf(row: {
  readonly cap_credits: number | null;
  readonly cap_period: CapPeriod | null;
  readonly operations: string | null;
  readonly rate_per_second: number | null;
  readonly rate_per_day: number | null;
  readonly allowed_ips: string | null;
  readonly labels: string | null;
}): KeySettings {
  if (row.cap_credits === null && row.operations === null && row.rate_per_second === null && row.rate_per_day === null && row.allowed_ips === null && row.labels === null) {
    return NO_SETTINGS;
  }
  return {
    cap: row.cap_credits === null ? null : { credits: row.cap_credits, period: row.cap_period ?? 'total' },
    operations: row.operations === null ? null : (JSON.parse(row.operations) as string[]),
    perSecond: row.rate_per_second,
    perDay: row.rate_per_day,
    allowedIps: row.allowed_ips === null ? null : (JSON.parse(row.allowed_ips) as string[]),
    labels: row.labels === null ? {} : (JSON.parse(row.labels) as Record<string, string>),
  };
}

import { Catalogue } from '../../catalogue/catalogue.js';
import type { OperationDeclaration, ServiceId } from '../../catalogue/operation.js';
import { SERVICES } from '../../catalogue/services.js';
import type { LookupQuery } from '../../lookup/lookup-query.js';
import { readXml, XmlReadError, type XmlElement } from '../../xml/xml-reader.js';
import { codecOf, recordFromXml } from '../../results/index.js';
import type { RegcheckConfig } from '../../config/paid-upstream-config.js';
import { UpstreamError } from '../upstream/upstream-error.js';
import { recordedFetch, type AnswerSink } from '../upstream/answer-recording.js';
import { htmlPageError, statusError, UpstreamClient } from '../upstream/upstream-client.js';
import type { FetchOutcome, UpstreamAnswer, UpstreamContext } from '../upstream/upstream-source.js';

/**
 * What the `regcheck` source keeps of one answer (the upstream cache's payload, and what
 * REGCHECK_RECORD_FILE and `export --source regcheck` write as an import line, regcheck-answers.ts):
 * the operation asked, its key as an import line's `key` (key parameters by name, normalised), and
 * the record the operation's codec read from the original's XML (`ResultCodec.fromXml`), which
 * the local store holds and the JSON Lines import carries as is (docs/import-format.md).
 */
export interface RegcheckPayload {
  readonly operation: string;
  readonly key: Readonly<Record<string, string>>;
  readonly record: unknown;
}

/** What the operator's side may plug into the provider (issue 24: the balance gate). */
export interface RegcheckHooks {
  /** A reason not to ask the original now (no balance left there), or undefined (LookupOptions.refuse). */
  readonly refuse?: () => string | undefined | Promise<string | undefined>;
}

/** The namespaces of the original's answers (compat-notes "Namespaces and actions"). */
const NAMESPACE: Readonly<Record<ServiceId, string>> = {
  reg: SERVICES.reg.defaultNamespace,
  bespoke: SERVICES.bespoke.defaultNamespace,
};

/** The service whose GET binding the original answers an operation on: reg.asmx where it has it. */
export function serviceOf(op: OperationDeclaration): ServiceId {
  return op.services.includes('reg') ? 'reg' : 'bespoke';
}

/**
 * The original's answer texts that mean "no such vehicle" (compat-notes "Errors": "{Country}
 * Lookup failed"), an unknown account and an empty one. ASMX sends each as HTTP 500, text/plain,
 * the exception's message (and, from some hosts, its stack trace) as the body.
 */
const LOOKUP_FAILED = /lookup failed/i;
const WRONG_USERNAME = /username is incorrect/i;
const OUT_OF_CREDIT = /out of credit|credits? (have|has) (run out|expired)|no credits? (left|remaining)/i;

/**
 * The original Car Registration API over its HTTP GET binding (issue 24): `GET
 * {base}/api/reg.asmx/{Op}?{params}&username=` (or `/api/bespokeapi.asmx/` for the operations only
 * that service has), the only binding that carries every operation with the username alone. The
 * username travels in the query string because that is the binding; the redactor keeps it out of
 * every message. One attempt per lookup: the original charges per call, and a timeout may still
 * have been charged, so nothing is retried.
 */
export class RegcheckClient extends UpstreamClient {
  constructor(
    context: UpstreamContext,
    private readonly config: RegcheckConfig,
    private readonly hooks: RegcheckHooks = {},
    /** Where each answer fetched is recorded (REGCHECK_RECORD_FILE). */
    private readonly record?: AnswerSink,
  ) {
    super(context, config.settings, [config.username, encodeURIComponent(config.username)]);
  }

  /** The answer for a query: from the shared cache, or one call to the original. Never throws. */
  lookup(query: LookupQuery): Promise<UpstreamAnswer> {
    // The operation labels the upstream spend (calls and cache answers by operation).
    const key = cacheKey(query);
    const operation = query.operation.name;
    return this.source.lookup(key, recordedFetch(() => this.fetch(query), this.record, key, operation), { operation, ...(this.hooks.refuse ? { refuse: this.hooks.refuse } : {}) });
  }

  /** The GET binding's URL of a query: every parameter in the operation's order, username where it takes one. */
  url(query: LookupQuery): string {
    const op = query.operation;
    const params = new URLSearchParams();
    for (const p of op.parameters) params.append(p.name, p.role === 'username' ? this.config.username : query.values[p.name] ?? '');
    return this.urlOf(`${SERVICES[serviceOf(op)].path}/${op.name}?${params.toString()}`);
  }

  private async fetch(query: LookupQuery): Promise<FetchOutcome> {
    const op = query.operation;
    const response = await this.source.http.request({
      method: 'GET',
      url: this.url(query),
      headers: { accept: 'text/xml' },
      // Never twice for one request (issue 24), and the original's errors come as HTTP 500.
      idempotent: false,
      readServerErrors: true,
      endpoint: serviceOf(op),
    });
    if (response.status >= 500) {
      const body = response.text;
      const page = htmlPageError(response.status, body, 'XML');
      if (page) throw page;
      if (WRONG_USERNAME.test(body)) throw new UpstreamError('auth', 'the original refused the username (REGCHECK_USERNAME)', response.status);
      if (OUT_OF_CREDIT.test(body)) throw new UpstreamError('out-of-funds', 'the account at the original is out of credit', response.status);
      if (LOOKUP_FAILED.test(body)) return { status: 'not-found' };
      throw new UpstreamError('server-error', `HTTP ${response.status} (a fault of the original)`, response.status);
    }
    if (response.status !== 200) throw statusError(response.status);
    const page = htmlPageError(200, response.text, 'XML');
    if (page) throw page;
    const record = readAnswer(op, response.text);
    const payload: RegcheckPayload = { operation: op.name, key: keyObject(query), record };
    return { status: 'found', payload };
  }

}

/** The cache key of a query: the operation and every value sent upstream (filters too: CheckPrice's mileage). */
export function cacheKey(query: LookupQuery): string {
  const op = query.operation;
  return [op.name, ...Catalogue.inputParameters(op).map((p) => query.values[p.name] ?? '')].map((v) => encodeURIComponent(v)).join('|');
}

/** An import line's `key`: the key parameters by name, normalised. */
export function keyObject(query: LookupQuery): Record<string, string> {
  const key: Record<string, string> = {};
  for (const p of Catalogue.keyParameters(query.operation)) key[p.name] = query.values[p.name] ?? '';
  return key;
}

/**
 * The record of the original's XML answer to `op`: its root must be the result type's element in
 * the service's namespace, and its content what the codec reads; a record with data must be one
 * the import format accepts (so it can be recorded, exported and imported). Anything else is a
 * `bad-response` (unavailable, free).
 */
export function readAnswer(op: OperationDeclaration, text: string): unknown {
  const codec = codecOf(op.resultType);
  let root: XmlElement;
  let record: unknown;
  try {
    root = readXml(text);
    if (root.local !== codec.xmlName || root.uri !== NAMESPACE[serviceOf(op)]) {
      throw new UpstreamError('bad-response', `the answer is not a ${codec.xmlName} of ${SERVICES[serviceOf(op)].path}`, 200);
    }
    record = recordFromXml(op.resultType, root);
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    if (error instanceof XmlReadError) throw new UpstreamError('bad-response', `unreadable ${codec.xmlName}: ${error.message}`, 200);
    throw error;
  }
  if (codec.isChargeable(codec.fromRecord(record, { operation: op, baseUrl: '' }))) {
    const problem = importProblem(op, record);
    if (problem !== undefined) throw new UpstreamError('bad-response', `the ${codec.xmlName} cannot be kept: ${problem}`, 200);
  }
  return record;
}

/** Why the import format would refuse `record` for `op` (its codec's importPayload), or undefined. */
function importProblem(op: OperationDeclaration, record: unknown): string | undefined {
  const payload = codecOf(op.resultType).importPayload;
  // An NCAP search answers a list; the import format carries its ratings one a line.
  const items = op.dataset.kind === 'ncap' && Array.isArray(record) ? (record as unknown[]) : [record];
  const type = payload.jsonType ?? 'object';
  for (const item of items) {
    const fits = type === 'array' ? Array.isArray(item) : type === 'string' ? typeof item === 'string' : typeof item === 'object' && item !== null && !Array.isArray(item);
    if (!fits) return `"${payload.field}" must be a JSON ${type}`;
    const problem = payload.validate(item);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Renders docs/operations.md from the catalogue (DESIGN.md "One catalogue of operations": the docs
 * are generated from it). The output is committed and a test fails when it is stale (STYLE.md 14),
 * so it must depend on nothing but the catalogue: no dates, no environment.
 */
import { RESULT_CODECS } from '../results/index.js';
import { Catalogue } from './catalogue.js';
import type { InputRule } from './input-rules.js';
import type { OperationDeclaration, ParameterDeclaration, ResultType, ServiceId } from './operation.js';
import { SERVICES, soapAction } from './services.js';

/** Where the JSON interface lives; Catalogue.jsonPathShape() gives the part after it. */
const JSON_PREFIX = '/api/json.aspx';

/** Markdown table cells: a `|` would end the cell, a line break the row. */
function cell(text: string): string {
  return text.replaceAll('\\', '\\\\').replaceAll('|', '\\|').replaceAll(/\r?\n/g, ' ');
}

function code(text: string): string {
  return `\`${text}\``;
}

/** `reg.asmx` from `/api/reg.asmx`. */
function serviceFile(id: ServiceId): string {
  const path = SERVICES[id].path;
  return path.slice(path.lastIndexOf('/') + 1);
}

function describeParameter(p: ParameterDeclaration): string {
  const notes: string[] = [p.xmlType];
  if (p.role === 'username') notes.push('authenticates the XML bindings; not used by JSON');
  else {
    if (p.rule) notes.push(`rule ${code(p.rule.name)}`);
    if (!p.required) notes.push('optional');
    if (p.role === 'filter') notes.push('filter');
    if (p.role === 'ignored') notes.push('accepted, not used to find the record');
    if (p.aliases) notes.push(`also accepted as ${p.aliases.map(code).join(' or ')}`);
  }
  return `${code(p.name)} (${notes.join(', ')})`;
}

function describeServices(op: OperationDeclaration): string {
  return op.services
    .map((id) => `${serviceFile(id)}<br>SOAPAction ${code(soapAction(SERVICES[id].defaultNamespace, op.name))}`)
    .join('<br>');
}

function describeJsonPath(op: OperationDeclaration): string {
  const notes: string[] = [];
  const { segments, joinWith } = op.jsonPath;
  const optional = segments.filter((s) => s.optional).map((s) => `{${s.label}}`);
  if (optional.length > 0) notes.push(`optional: ${optional.join(', ')}`);
  const byParameter = new Map<string, string[]>();
  for (const s of segments) byParameter.set(s.parameter, [...(byParameter.get(s.parameter) ?? []), `{${s.label}}`]);
  for (const [parameter, labels] of byParameter) {
    if (labels.length > 1) notes.push(`${labels.join(' and ')} are joined with ${code(joinWith ?? '')} into ${code(parameter)}`);
    else if (labels[0] !== `{${parameter}}`) notes.push(`${labels[0] ?? ''} fills ${code(parameter)}`);
  }
  const path = code(`${JSON_PREFIX}${Catalogue.jsonPathShape(op)}`);
  return notes.length === 0 ? path : `${path}<br>${notes.join('; ')}`;
}

function describeDataset(op: OperationDeclaration, catalogue: Catalogue): string {
  const { name } = op.dataset;
  // The import member of its result type (vehicle, mot, ncap, valuation...): what an import line carries.
  const parts = [`${code(name)} (${RESULT_CODECS[op.resultType].importPayload.field})`];
  const sharing = catalogue.operations.filter((other) => other !== op && other.dataset.name === name).map((other) => other.name);
  if (sharing.length > 0) parts.push(`shared with ${sharing.join(', ')}`);
  if (op.fieldSubset) parts.push(`serves only ${[...op.fieldSubset, 'ImageUrl'].join(', ')}`);
  return parts.join('<br>');
}

interface RuleUse {
  readonly rule: InputRule;
  /** Parameter name -> operations using the rule for it, in catalogue order. */
  readonly parameters: Map<string, string[]>;
}

/** Every rule attached to a parameter, in order of first use, with where it is used. */
function rulesInUse(catalogue: Catalogue): RuleUse[] {
  const uses = new Map<string, RuleUse>();
  for (const op of catalogue.operations) {
    for (const p of op.parameters) {
      if (!p.rule) continue;
      let use = uses.get(p.rule.name);
      if (!use) {
        use = { rule: p.rule, parameters: new Map() };
        uses.set(p.rule.name, use);
      }
      use.parameters.set(p.name, [...(use.parameters.get(p.name) ?? []), op.name]);
    }
  }
  return [...uses.values()];
}

/** Long lists (the plain plate lookups) are counted rather than listed. */
function operationList(names: readonly string[]): string {
  return names.length > 8 ? `${names.length} operations` : names.join(', ');
}

/** docs/operations.md, rendered from the catalogue. */
export function renderOperationsMarkdown(catalogue: Catalogue): string {
  const ops = catalogue.operations;
  const lines: string[] = [
    '# Operations reference',
    '',
    '<!-- Generated from src/catalogue by `npm run docs:generate` (scripts/generate-docs.ts). Do not edit by hand:',
    '     test/docs/operations-doc.test.ts fails when this file differs from the catalogue. -->',
    '',
    `The catalogue declares ${ops.length} operations. Every one is available on the JSON interface`,
    `(\`GET ${JSON_PREFIX}/{Method}/...\`, HTTP Basic with the account username and API key); the`,
    '"Service" column names the SOAP service that exposes it in the original interface.',
    '',
    '- **Parameters** are listed in wire order with their XML Schema type. `username` is the last',
    '  parameter of every operation that has one on the XML bindings; the JSON interface authenticates',
    '  with HTTP Basic instead. Parameter names are case-sensitive in SOAP bodies.',
    '- **Without a username** (as in the original): the XML bindings charge the account of the HTTP',
    '  Basic credentials (username and API key); without credentials they answer only operations the',
    '  operator lists in `ANONYMOUS_OPERATIONS`, free and rate-limited per client address, and refuse',
    "  the rest with \"This operation needs the account's credentials\". Wrong credentials are refused,",
    '  never treated as anonymous. JSON always requires credentials ([interfaces.md](interfaces.md#operations-without-a-username)).',
    '- **JSON path**: spaces in path values may be sent as `+` or `%20`.',
    '- **Credits**: debited by a successful lookup only. Failed lookups, free test plates and answers',
    '  without data (empty Euro NCAP results, an empty CheckStolen list, a table without rows...) cost nothing.',
    '- **Dataset**: where the records come from, and in brackets the member of an import line that',
    '  carries one (`vehicle`, `mot`, `ncap`, `valuation`..., see [import-format.md](import-format.md)).',
    '  Operations that share a dataset answer from the same records.',
    '',
    '## Services',
    '',
    '| Service | Path | WSDL service name | Default namespace | Operations |',
    '|---|---|---|---|---|',
  ];
  for (const service of Object.values(SERVICES)) {
    lines.push(
      `| ${serviceFile(service.id)} | ${code(service.path)} | ${service.serviceName} | ${code(service.defaultNamespace)} | ${catalogue.forService(service.id).length} |`,
    );
  }
  lines.push(
    '',
    'SOAPAction is the namespace followed by the operation name, with a `/` between them unless the',
    'namespace already ends in one.',
    '',
    '## Operations',
    '',
    '| Operation | Service | Parameters | JSON path | Result | Credits | Dataset |',
    '|---|---|---|---|---|---|---|',
  );
  for (const op of ops) {
    const row = [
      `**${op.name}**<br>${op.documentation}`,
      describeServices(op),
      op.parameters.map(describeParameter).join('<br>'),
      describeJsonPath(op),
      op.resultType,
      String(op.cost),
      describeDataset(op, catalogue),
    ];
    lines.push(`| ${row.map(cell).join(' | ')} |`);
  }

  lines.push('', '## Result types', '', 'On the JSON interface the response body (HTTP 200, `application/json`) is:', '');
  // What each result type is on the JSON interface (the body its codec gives json.plugin.ts).
  const used = new Set(ops.map((op) => op.resultType));
  for (const [type, codec] of Object.entries(RESULT_CODECS)) {
    if (used.has(type as ResultType)) lines.push(`- **${type}**: ${codec.jsonDescription}.`);
  }

  lines.push(
    '',
    '## Input rules',
    '',
    'Each parameter value is checked and normalised by its rule before the lookup; the normalised',
    'values form the lookup key, so `ab-12 cd` and `AB12CD` find the same record. A value that breaks',
    'its rule is refused (on the JSON interface: HTTP 500 with a message naming the parameter) and',
    'costs nothing. Import files go through the same rules.',
  );
  for (const { rule, parameters } of rulesInUse(catalogue)) {
    lines.push('', `### ${code(rule.name)}`, '', `${rule.description}.`, '', 'Used by:', '');
    for (const [parameter, names] of parameters) lines.push(`- ${code(parameter)}: ${operationList(names)}`);
  }
  lines.push('');
  return lines.join('\n');
}

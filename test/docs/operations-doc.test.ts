import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { renderOperationsMarkdown } from '../../src/catalogue/catalogue-docs.js';
import { OPERATIONS } from '../../src/catalogue/operations.js';
import type { OperationDeclaration } from '../../src/catalogue/operation.js';
import { textRule } from '../../src/catalogue/input-rules.js';

const DOC_PATH = new URL('../../docs/operations.md', import.meta.url);

/** The table row of one operation in a rendered document. */
function rowOf(markdown: string, name: string): string {
  const row = markdown.split('\n').find((line) => line.startsWith(`| **${name}**<br>`));
  if (row === undefined) throw new Error(`no row for ${name}`);
  return row;
}

describe('docs/operations.md', () => {
  it('is exactly what the catalogue renders (run npm run docs:generate after changing the catalogue)', () => {
    const committed = readFileSync(DOC_PATH, 'utf8');
    const rendered = renderOperationsMarkdown(new Catalogue());
    // toBe's diff shows the stale lines; the message says how to fix it.
    expect(committed, 'docs/operations.md is stale: run npm run docs:generate').toBe(rendered);
  });
});

describe('renderOperationsMarkdown', () => {
  const markdown = renderOperationsMarkdown(new Catalogue());

  it('has one table row per operation, in catalogue order', () => {
    const rows = markdown.split('\n').filter((line) => line.startsWith('| **'));
    expect(rows.map((row) => /^\| \*\*([^*]+)\*\*/.exec(row)?.[1])).toEqual(OPERATIONS.map((op) => op.name));
  });

  it('builds SOAPAction from the service namespace without doubling the slash', () => {
    expect(rowOf(markdown, 'CheckUSA')).toContain('reg.asmx<br>SOAPAction `http://regcheck.org.uk/CheckUSA`');
    expect(rowOf(markdown, 'CheckEuroNCap')).toContain('bespokeapi.asmx<br>SOAPAction `http://Regcheck.org.uk/CheckEuroNCap`');
  });

  it('lists parameters in wire order with their XML type and rule', () => {
    expect(rowOf(markdown, 'CheckUSAMinimal')).toContain(
      '`regNumber` (s:string, rule `registration`)<br>`state` (s:string, rule `us-state`)<br>`username` (s:string',
    );
    expect(rowOf(markdown, 'CheckAustria')).toContain('`NatCode` (s:int, rule `int32`)');
  });

  it('shows the JSON path shape, optional segments and joined segments', () => {
    expect(rowOf(markdown, 'CheckUSA')).toContain('`/api/json.aspx/CheckUSA/{RegistrationNumber}/{State}`');
    expect(rowOf(markdown, 'CheckGermany')).toContain('optional: {Suffix}; {Prefix} and {Suffix} are joined with `/` into `KBANumber`');
    expect(rowOf(markdown, 'UKMOT')).toContain('{Make} fills `Model`');
  });

  it('notes shared datasets on both sides and the CheckUSAMinimal field subset', () => {
    expect(rowOf(markdown, 'CheckUSAMinimal')).toContain('`CheckUSA` (vehicle)<br>shared with CheckUSA, CheckUSADynamic, CheckUSAEdBolian<br>serves only Description, RegistrationYear');
    expect(rowOf(markdown, 'CheckUSA')).toContain('shared with CheckUSAMinimal, CheckUSADynamic, CheckUSAEdBolian');
    expect(rowOf(markdown, 'CheckUKMinimal')).toContain('`Check` (vehicle)<br>shared with Check<br>serves only Description, RegistrationYear');
    expect(rowOf(markdown, 'CheckAustraliaExtensive')).toContain('`CheckAustralia` (vehicle)<br>shared with CheckAustralia');
    expect(rowOf(markdown, 'Check')).toContain('shared with CheckUKMinimal');
    expect(rowOf(markdown, 'CheckFrance')).not.toContain('shared with');
    // One declaration on both services: the bespoke CheckFrance has its own namespace and SOAPAction.
    expect(rowOf(markdown, 'CheckFrance')).toContain('reg.asmx<br>SOAPAction `http://regcheck.org.uk/CheckFrance`<br>bespokeapi.asmx<br>SOAPAction `http://Regcheck.org.uk/CheckFrance`');
  });

  it('shows the credit cost declared for the operation', () => {
    const base = OPERATIONS.find((op) => op.name === 'CheckFrance');
    if (!base) throw new Error('CheckFrance is not in the catalogue');
    const pricey: OperationDeclaration = { ...base, cost: 3 };
    const rendered = renderOperationsMarkdown(new Catalogue([pricey]));
    expect(rowOf(rendered, 'CheckFrance')).toContain('| Vehicle | 3 |');
  });

  it('escapes table separators in catalogue text so a row stays one row', () => {
    const base = OPERATIONS.find((op) => op.name === 'CheckFrance');
    if (!base) throw new Error('CheckFrance is not in the catalogue');
    const odd: OperationDeclaration = { ...base, documentation: 'Plates | with a pipe\nand a newline.' };
    const rendered = renderOperationsMarkdown(new Catalogue([odd]));
    expect(rowOf(rendered, 'CheckFrance')).toContain('Plates \\| with a pipe and a newline.');
  });

  it('describes every input rule in use, with the state lists', () => {
    expect(markdown).toContain('### `us-state`');
    expect(markdown).toContain('one of NSW, VIC, QLD, SA, WA, TAS, ACT, NT');
    expect(markdown).toContain(`${textRule.description}.`);
    const ruleNames = new Set(OPERATIONS.flatMap((op) => op.parameters.flatMap((p) => (p.rule ? [p.rule.name] : []))));
    for (const name of ruleNames) expect(markdown).toContain(`### \`${name}\``);
  });
});

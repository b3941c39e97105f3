import { describe, expect, it } from 'vitest';
import { describeBodyDifference, describeResponseDifference, diffUnits } from './golden-diff.js';

const envelope = (make: string): Buffer =>
  Buffer.from(`<?xml version="1.0" encoding="utf-8"?><soap:Envelope><soap:Body><R><CarMake>${make}</CarMake><CarModel>CLIO</CarModel></R></soap:Body></soap:Envelope>`);

describe('golden wire diff', () => {
  it('reports nothing when the bytes are equal', () => {
    expect(describeBodyDifference(envelope('RENAULT'), envelope('RENAULT'))).toBeUndefined();
  });

  it('splits a one-line envelope at every >< so a changed element is its own diff line', () => {
    expect(diffUnits('<a><b>x</b><c /></a>')).toEqual(['<a>', '<b>x</b>', '<c />', '</a>']);
    const report = describeBodyDifference(envelope('RENAULT'), envelope('PEUGEOT')) ?? '';
    expect(report).toContain('first difference at byte');
    expect(report).toMatch(/^- {7}<CarMake>RENAULT<\/CarMake>$/m);
    expect(report).toMatch(/^\+ {7}<CarMake>PEUGEOT<\/CarMake>$/m);
    expect(report).not.toMatch(/^[-+] .*CarModel/m);
  });

  it('shows a line-ending difference the line diff alone would hide', () => {
    const report = describeBodyDifference(Buffer.from('<a>\r\n  <b />\r\n</a>'), Buffer.from('<a>\n  <b />\r\n</a>')) ?? '';
    expect(report).toContain('first difference at byte 3 (expected line 1, column 4)');
    expect(report).toMatch(/^\+ <a>\\n$/m);
  });

  it('compares the status line and each listed header, ignoring headers the golden file does not list', () => {
    const expected = { status: 200, reason: 'OK', headers: [['Content-Type', 'text/xml; charset=utf-8']] as const, body: Buffer.from('x') };
    const sameButMore = { ...expected, headers: [['content-type', 'text/xml; charset=utf-8'], ['x-request-id', 'abc']] as const };
    expect(describeResponseDifference(expected, sameButMore)).toBeUndefined();
    const other = { status: 500, reason: 'Internal Server Error', headers: [['content-type', 'text/plain; charset=utf-8']] as const, body: Buffer.from('x') };
    expect(describeResponseDifference(expected, other)).toBe(
      'status: expected 200 OK, got 500 Internal Server Error\nheader Content-Type: expected "text/xml; charset=utf-8", got "text/plain; charset=utf-8"',
    );
  });
});

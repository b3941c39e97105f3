import { describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { RecordValidator } from '../../src/datasets/import/record-validator.js';
import { LookupError } from '../../src/lookup/lookup-error.js';
import { LookupPipeline, type LookupPipelineDeps } from '../../src/lookup/lookup-pipeline.js';
import type { ProviderAnswer } from '../../src/lookup/provider.js';
import { XmlWriter } from '../../src/xml/xml-writer.js';
import { RESULT_CODECS, isChargeable, jsonBodyOf, type ResultType } from '../../src/results/index.js';
import { VersionedCache } from '../../src/shared/versioned-cache.js';

const catalogue = new Catalogue();
function operation(name: string) {
  const found = catalogue.find(name);
  if (!found) throw new Error(`no operation ${name}`);
  return found;
}
const validator = new RecordValidator(catalogue);
const validate = (line: Record<string, unknown>): string | undefined => {
  const outcome = validator.validate(line);
  return outcome.ok ? undefined : outcome.reason;
};

function soapXml(type: ResultType, value: unknown): string {
  const w = new XmlWriter(false);
  RESULT_CODECS[type].writeXml(w, 'R', [], value as never, 'soap');
  return w.toString();
}

describe('the record types of the original', () => {
  it('write value fields in the vendor WSDL order, with .NET defaults for what an upstream answer lacks', () => {
    expect(soapXml('InsuranceDetails', { Region: 'Lazio', IsInsured: true, Make: 'FIAT', Expiry: '2027-04-30T00:00:00' })).toBe(
      '<R><Make>FIAT</Make><Expiry>2027-04-30T00:00:00</Expiry><IsInsured>true</IsInsured><Region>Lazio</Region></R>',
    );
    expect(soapXml('Insurance', { Company: 'X' })).toBe('<R><Company>X</Company><StartDate>0001-01-01T00:00:00</StartDate><EndDate>0001-01-01T00:00:00</EndDate></R>');
    expect(soapXml('Valuation', { Price: 1250.75 })).toBe('<R><Price>1250.75</Price></R>');
    expect(soapXml('string', 'a & b')).toBe('<R>a &amp; b</R>');
    expect(soapXml('ArrayOfNameValue', [])).toBe('<R />');
    expect(soapXml('DataGrid', { json: '[]', columnNames: ['A'], data: [] })).toBe('<R><json>[]</json><columnNames><string>A</string></columnNames><data /></R>');
  });

  it('serve only the fields of the type on JSON, in schema order', () => {
    const value = RESULT_CODECS.LondonTaxi.fromRecord({ Expiry: '2027', Make: 'LEVC', Secret: 'x' }, { operation: operation('CheckLondonTaxi'), baseUrl: '' });
    expect(jsonBodyOf({ type: 'LondonTaxi', value })).toEqual({ Make: 'LEVC', Expiry: '2027' });
    expect(Object.keys(value)).toEqual(['Make', 'Expiry']);
  });

  it('derive DataGrid json from the rows when the record has none, and keep an upstream record\'s own', () => {
    const context = { operation: operation('CheckLondonTaxi'), baseUrl: '' };
    expect(RESULT_CODECS.DataGrid.fromRecord({ columnNames: ['Spec', 'Value'], data: [['Doors', '5']] }, context).json).toBe('[{"Spec":"Doors","Value":"5"}]');
    expect(RESULT_CODECS.DataGrid.fromRecord({ json: '{"own":1}', columnNames: ['A'], data: [['1']] }, context).json).toBe('{"own":1}');
  });

  it('charge answers with data and not the empty ones', () => {
    expect(isChargeable({ type: 'ArrayOfNameValue', value: [] })).toBe(false);
    expect(isChargeable({ type: 'ArrayOfNameValue', value: [{ Name: 'Status', Value: 'Stolen' }] })).toBe(true);
    expect(isChargeable({ type: 'string', value: '' })).toBe(false);
    expect(isChargeable({ type: 'string', value: 'No recalls' })).toBe(true);
    expect(isChargeable({ type: 'FrenchCar2', value: { versions: [] } })).toBe(false);
    expect(isChargeable({ type: 'DataGrid', value: { json: '[]', columnNames: ['A'], data: [] } })).toBe(false);
    // "Not insured" is a found answer.
    expect(isChargeable({ type: 'InsuredStatus', value: { Insured: false } })).toBe(true);
  });

  it('refuse import lines that would put a wrong type on the wire, naming the field', () => {
    expect(validate({ operation: 'CheckPrice', key: { RegistrationNumber: 'AB12CDE' }, valuation: { Description: 'x' } })).toBe('valuation.Price is required and must be a number');
    expect(validate({ operation: 'CheckPrice', key: { RegistrationNumber: 'AB12CDE' }, valuation: { Price: '9000' } })).toBe('valuation.Price must be a number');
    expect(validate({ operation: 'CheckInsuranceStatusPortugal', key: { regNumber: 'AB12CD' }, insurance: { StartDate: '2026-01-15', EndDate: '2027-01-14T00:00:00' } })).toBe(
      'insurance.StartDate must be an ISO 8601 date-time such as 2027-03-14T00:00:00',
    );
    expect(validate({ operation: 'IsInsured', key: { regNumber: 'AB12CDE' }, insuredStatus: { Insured: 'yes' } })).toBe('insuredStatus.Insured must be true or false');
    expect(validate({ operation: 'CheckLondonTaxi', key: { regNumber: 'LT19TXA' }, londonTaxi: { Make: 'LEVC', Colour: 'Black' } })).toBe(
      'londonTaxi has unexpected field "Colour" (expected Make, Model, License, Expiry)',
    );
    expect(validate({ operation: 'CheckStolen', key: { vinNumber: 'WF0JXXGAHJKE41827' }, nameValues: { Status: 'Stolen' } })).toBe('"nameValues" must be a JSON array');
    expect(validate({ operation: 'CheckStolen', key: { vinNumber: 'WF0JXXGAHJKE41827' }, nameValues: [{ Name: 'Status', Value: 1 }] })).toBe('nameValues[0].Value must be a string');
    expect(validate({ operation: 'CheckRecalledVIN', key: { vin: '1HGCV1F38KA004821' }, text: '' })).toBe('"text" must be a non-empty string');
    expect(validate({ operation: 'WheelSize', key: { make: 'Ford', model: 'Fiesta', year: 2019 }, text: { size: 'R16' } })).toBe('"text" must be a JSON string');
    expect(validate({ operation: 'CarSpecifications', key: { make: 'Ford', model: 'Fiesta', year: 2019 }, dataGrid: { columnNames: ['A', 'B'], data: [['1']] } })).toBe(
      'dataGrid.data[0] has 1 values for 2 columns',
    );
    expect(validate({ operation: 'CarSpecifications', key: { make: 'Ford', model: 'Fiesta', year: 'new' }, dataGrid: { columnNames: ['A'], data: [] } })).toBe('key.year must be a whole number');
    expect(validate({ operation: 'CheckAlternativeVersionsFrance', key: { RegNumber: 'AB-123-CD' }, frenchCar2: { versions: [{ marque: 'PEUGEOT', couleur: 'bleu' }] } })).toMatch(
      /^frenchCar2.versions\[0\] has unexpected field "couleur"/,
    );
  });
});

describe('CheckStolen when no record is found', () => {
  /** A pipeline for anonymous CheckStolen calls whose one provider answers `answer`. */
  function pipeline(answer: ProviderAnswer): LookupPipeline {
    const deps: Partial<LookupPipelineDeps> = {
      providersFor: () => [{ name: 'register', find: () => Promise.resolve(answer) }],
      recordCache: new VersionedCache<unknown>(() => 0, 10),
      clock: { now: () => new Date(0) },
      requireApiKeyEverywhere: false,
      anonymous: { operations: new Set(['CheckStolen']), limits: { perSecond: null, perDay: null } },
    };
    // The anonymous path touches no account, credit or test plate: those dependencies stay unset.
    return new LookupPipeline(deps as LookupPipelineDeps);
  }
  const call = (p: LookupPipeline) =>
    p.execute({
      call: { operation: operation('CheckStolen'), args: { vinNumber: 'WF0JXXGAHJKE41827' } },
      auth: { mode: 'username-parameter', basic: undefined },
      interface: 'http-get',
      requestId: 'r1',
      baseUrl: 'http://x.test',
      caller: { address: '192.0.2.1', sentAuthorization: false },
    });

  it('answers the empty list, free, when the register does not list the VIN', async () => {
    const outcome = await call(pipeline({ status: 'not-found' }));
    expect(outcome.result).toEqual({ type: 'ArrayOfNameValue', value: [] });
    expect(outcome.charged).toBe(0);
  });

  it('never reads an unavailable register as "not stolen"', async () => {
    const failed = await call(pipeline({ status: 'unavailable', reason: 'timeout' })).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(LookupError);
    expect((failed as LookupError).code).toBe('UPSTREAM_UNAVAILABLE');
  });
});

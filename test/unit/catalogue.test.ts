import { describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { soapAction, SERVICES } from '../../src/catalogue/services.js';

const catalogue = new Catalogue();
const names = (service: 'reg' | 'bespoke') => catalogue.forService(service).map((op) => op.name);

// The contract: interface-spec.md "Endpoints" and compat-notes.md "Namespaces and actions".
const SPEC_REG_PLATE = [
  'CheckNetherlands', 'CheckNewZealand', 'CheckCostaRica', 'CheckSingapore', 'CheckTunisia', 'CheckEcuador', 'CheckBolivia',
  'CheckNigeria', 'CheckBelgium', 'CheckIsrael', 'CheckPeru', 'CheckIndonesia', 'CheckLithuania', 'CheckSriLanka', 'CheckPortugal',
  'CheckColombia', 'CheckDenmark', 'CheckHungary', 'CheckFrance',
];
const COMPAT_REG_PLATE = [
  'Check', 'CheckSpain', 'CheckItaly', 'CheckSweden', 'CheckFinland', 'CheckEstonia', 'CheckCzechRepublic', 'CheckSlovakia',
  'CheckCroatia', 'CheckIreland', 'CheckNorway', 'CheckIndia', 'CheckMalaysia', 'CheckBrazil', 'CheckMexico', 'CheckArgentina',
  'CheckChile', 'CheckSouthAfrica',
];
const JSON_ONLY_NAMES = ['Check', 'CheckIreland', 'CheckNorway', 'CheckMalaysia', 'CheckAustralia', 'CheckCanada', 'CheckPakistan', 'VinCheck'];
const BESPOKE = ['CheckAustraliaExtensive', 'CheckMotorBikeFrance', 'CheckMotorBikeSpain', 'CheckUSAMinimal', 'CheckItalyMotorbike', 'CheckEuroNCap'];
// compat-notes "The original's whole contract": the Vehicle lookups of the original we lacked.
const WHOLE_CONTRACT_REG_PLATE = [
  'CheckUAE', 'CheckRussia', 'CheckCyprus', 'CheckUkraine', 'CheckIceland', 'CheckLatvia', 'CheckSwitzerland', 'CheckChina',
  'CheckGreece', 'CheckKazakhstan', 'CheckMalta', 'CheckOman', 'CheckPoland', 'CheckRomania', 'CheckSlovenia', 'CheckTaiwan',
];
const WHOLE_CONTRACT_BESPOKE = ['CheckFrance', 'CheckArgentinaExtensive', 'CheckUSADynamic', 'CheckUSAEdBolian', 'CheckUKMinimal', 'CheckIOM'];
/** On both services under one name, with the same parameters and dataset (compat-notes). */
const ON_BOTH_SERVICES = ['CheckFrance'];

/**
 * The operations returning the original's other record types (compat-notes "The original's whole
 * contract"; vendor bespokeapi WSDL): service, parameters in wire order with their XML types, result.
 */
const RECORD_OPERATIONS: Readonly<Record<string, readonly [service: 'reg' | 'bespoke', parameters: readonly string[], result: string]>> = {
  CarSpecifications: ['reg', ['make', 'model', 'year:s:int'], 'DataGrid'],
  WheelSize: ['reg', ['make', 'model', 'year:s:int'], 'string'],
  CheckPrice: ['bespoke', ['RegistrationNumber', 'mileage:s:int', 'username'], 'Valuation'],
  IsInsured: ['bespoke', ['regNumber', 'username'], 'InsuredStatus'],
  CheckInsuranceStatusItaly: ['bespoke', ['regNumber', 'username'], 'InsuranceDetails'],
  CheckInsuranceStatusPortugal: ['bespoke', ['regNumber', 'username'], 'Insurance'],
  CheckStolen: ['bespoke', ['vinNumber'], 'ArrayOfNameValue'],
  CheckRecalledVIN: ['bespoke', ['vin'], 'string'],
  CheckAlternativeVersionsFrance: ['bespoke', ['RegNumber'], 'FrenchCar2'],
  CheckIrishTaxi: ['bespoke', ['regNumber'], 'IrishTaxi'],
  CheckLondonTaxi: ['bespoke', ['regNumber'], 'LondonTaxi'],
};
const isRecordOperation = (name: string): boolean => name in RECORD_OPERATIONS;

function parameterNames(name: string): string[] {
  const op = catalogue.find(name);
  if (!op) throw new Error(`${name} missing`);
  return op.parameters.map((p) => p.name);
}

describe('operation catalogue', () => {
  it('declares every reg.asmx operation of the spec and compat-notes on reg.asmx only', () => {
    const reg = names('reg');
    for (const name of [...SPEC_REG_PLATE, ...COMPAT_REG_PLATE, ...WHOLE_CONTRACT_REG_PLATE, ...JSON_ONLY_NAMES, 'CheckUSA', 'CheckGermany', 'CheckAustria', 'UKMOT', 'CheckSouthAfrica']) {
      expect(reg, name).toContain(name);
    }
    expect(reg.filter((n) => BESPOKE.includes(n))).toEqual([]);
  });

  it('declares exactly the spec bespokeapi.asmx operations on bespokeapi.asmx', () => {
    expect(names('bespoke').filter((n) => !isRecordOperation(n)).sort()).toEqual([...BESPOKE, ...WHOLE_CONTRACT_BESPOKE].sort());
  });

  it('declares the record-returning operations of the original with their exact signature and result type', () => {
    for (const [name, [service, parameters, result]] of Object.entries(RECORD_OPERATIONS)) {
      const op = catalogue.find(name);
      expect(op, name).toBeDefined();
      expect(op?.services, name).toEqual([service]);
      expect(op?.parameters.map((p) => (p.xmlType === 's:string' ? p.name : `${p.name}:${p.xmlType}`)), name).toEqual(parameters);
      expect(op?.resultType, name).toBe(result);
      if (op) expect(Catalogue.takesUsername(op), name).toBe(parameters.includes('username'));
    }
    expect(soapAction(SERVICES.reg.defaultNamespace, 'CarSpecifications')).toBe('http://regcheck.org.uk/CarSpecifications');
    expect(soapAction(SERVICES.bespoke.defaultNamespace, 'CheckStolen')).toBe('http://Regcheck.org.uk/CheckStolen');
  });

  it('has unique operation names and every operation but CheckFrance on exactly one service', () => {
    const all = catalogue.operations.map((op) => op.name);
    expect(new Set(all).size).toBe(all.length);
    for (const op of catalogue.operations) expect(op.services, op.name).toHaveLength(ON_BOTH_SERVICES.includes(op.name) ? 2 : 1);
  });

  it('declares the Vehicle lookups of the whole contract with the parameters, labels and datasets of the original', () => {
    for (const name of WHOLE_CONTRACT_REG_PLATE) {
      expect(parameterNames(name), name).toEqual(['RegistrationNumber', 'username']);
      expect(catalogue.find(name)?.dataset, name).toEqual({ name, kind: 'vehicle' });
    }
    expect(parameterNames('CheckArgentinaExtensive')).toEqual(['RegistrationNumber', 'username']);
    expect(parameterNames('CheckUSADynamic')).toEqual(['regNumber', 'state', 'username']);
    expect(parameterNames('CheckUSAEdBolian')).toEqual(['RegistrationNumber', 'State', 'username']);
    expect(parameterNames('CheckUKMinimal')).toEqual(['regNumber', 'username']);
    expect(parameterNames('CheckIOM')).toEqual(['regNumber', 'username']);
    const datasetOf = (name: string) => catalogue.find(name)?.dataset.name;
    expect(datasetOf('CheckArgentinaExtensive')).toBe('CheckArgentina');
    expect(datasetOf('CheckUSADynamic')).toBe('CheckUSA');
    expect(datasetOf('CheckUSAEdBolian')).toBe('CheckUSA');
    expect(datasetOf('CheckUKMinimal')).toBe('Check');
    expect(datasetOf('CheckIOM')).toBe('CheckIOM');
    expect(catalogue.find('CheckUKMinimal')?.fieldSubset).toEqual(catalogue.find('CheckUSAMinimal')?.fieldSubset);
    expect(catalogue.find('CheckUSADynamic')?.parameters[1]?.rule?.name).toBe('us-state');
    expect(catalogue.find('CheckUSAEdBolian')?.parameters[1]?.rule?.name).toBe('us-state');
    expect(catalogue.find('CheckUAE')?.label).toBe('UAE');
    expect(catalogue.find('CheckIOM')?.label).toBe('Isle of Man');
  });

  it('puts username last in every parameter list, as the typed schema orders it', () => {
    for (const op of catalogue.operations.filter((o) => Catalogue.takesUsername(o))) {
      expect(op.parameters.at(-1)?.name, op.name).toBe('username');
      expect(op.parameters.filter((p) => p.role === 'username'), op.name).toHaveLength(1);
    }
  });

  it('uses the spec parameter names in order, case-sensitively', () => {
    for (const name of [...SPEC_REG_PLATE, ...COMPAT_REG_PLATE]) expect(parameterNames(name), name).toEqual(['RegistrationNumber', 'username']);
    expect(parameterNames('CheckUSA')).toEqual(['RegistrationNumber', 'State', 'username']);
    expect(parameterNames('CheckAustralia')).toEqual(['RegistrationNumber', 'State', 'username']);
    expect(parameterNames('CheckAustraliaExtensive')).toEqual(['RegistrationNumber', 'State', 'username']);
    expect(parameterNames('CheckPakistan')).toEqual(['RegistrationNumber', 'state', 'district', 'username']);
    expect(parameterNames('CheckGermany')).toEqual(['KBANumber', 'username']);
    expect(parameterNames('CheckAustria')).toEqual(['NatCode', 'username']);
    expect(parameterNames('VinCheck')).toEqual(['Vin', 'username']);
    expect(parameterNames('UKMOT')).toEqual(['RegistrationNumber', 'Model', 'username']);
    expect(parameterNames('CheckUSAMinimal')).toEqual(['regNumber', 'state', 'username']);
    expect(parameterNames('CheckItalyMotorbike')).toEqual(['regNumber', 'username']);
    expect(parameterNames('CheckEuroNCap')).toEqual(['Make', 'Model', 'username']);
  });

  it('types CheckAustria NatCode as s:int and every other parameter as s:string', () => {
    for (const op of catalogue.operations.filter((o) => !isRecordOperation(o.name))) {
      for (const p of op.parameters) {
        expect(p.xmlType, `${op.name}.${p.name}`).toBe(op.name === 'CheckAustria' && p.name === 'NatCode' ? 's:int' : 's:string');
      }
    }
  });

  it('gives every caller-supplied parameter an input rule', () => {
    for (const op of catalogue.operations) {
      for (const p of Catalogue.inputParameters(op)) expect(p.rule, `${op.name}.${p.name}`).toBeDefined();
    }
  });

  it('maps every JSON path segment to a parameter and covers every required parameter', () => {
    for (const op of catalogue.operations) {
      const params = new Set(op.parameters.map((p) => p.name));
      for (const s of op.jsonPath.segments) expect(params.has(s.parameter), `${op.name} segment ${s.label}`).toBe(true);
      for (const p of Catalogue.inputParameters(op).filter((x) => x.required)) {
        expect(op.jsonPath.segments.some((s) => s.parameter === p.name && !s.optional), `${op.name}.${p.name}`).toBe(true);
      }
      // Optional segments only at the end, or a path could not be read unambiguously.
      const firstOptional = op.jsonPath.segments.findIndex((s) => s.optional);
      if (firstOptional >= 0) expect(op.jsonPath.segments.slice(firstOptional).every((s) => s.optional), op.name).toBe(true);
    }
  });

  it('follows the spec table for the JSON path shapes that differ from the base shape', () => {
    const labels = (name: string) => catalogue.find(name)?.jsonPath.segments.map((s) => s.label);
    expect(labels('CheckAustralia')).toEqual(['RegistrationNumber', 'State']);
    expect(labels('CheckUSA')).toEqual(['RegistrationNumber', 'State']);
    expect(labels('CheckCanada')).toEqual(['RegistrationNumber', 'Province']);
    expect(labels('CheckPakistan')).toEqual(['RegistrationNumber', 'Province', 'District']);
    expect(labels('CheckGermany')).toEqual(['Prefix', 'Suffix']);
    expect(labels('UKMOT')).toEqual(['RegistrationNumber', 'Make']);
    expect(labels('VinCheck')).toEqual(['Vin']);
    expect(labels('CheckEuroNCap')).toEqual(['Make', 'Model']);
    expect(labels('CheckUSAMinimal')).toEqual(['regNumber', 'state']);
  });

  it('declares result types and a whole positive credit cost', () => {
    for (const op of catalogue.operations) {
      expect(Number.isInteger(op.cost) && op.cost >= 1, op.name).toBe(true);
      if (isRecordOperation(op.name)) continue;
      const expected = op.name === 'UKMOT' ? 'UKMOTData' : op.name === 'CheckEuroNCap' ? 'ArrayOfPreAssessmentSearchResult' : 'Vehicle';
      expect(op.resultType, op.name).toBe(expected);
    }
  });

  it('shares a dataset only between operations with the same kind and the same number of key parameters', () => {
    const byDataset = new Map<string, typeof catalogue.operations>();
    for (const op of catalogue.operations) byDataset.set(op.dataset.name, [...(byDataset.get(op.dataset.name) ?? []), op]);
    for (const [dataset, ops] of byDataset) {
      const first = ops[0];
      if (!first) continue;
      for (const op of ops) {
        expect(op.dataset.kind, dataset).toBe(first.dataset.kind);
        expect(Catalogue.keyParameters(op).length, dataset).toBe(Catalogue.keyParameters(first).length);
      }
    }
    expect(catalogue.find('CheckUSAMinimal')?.dataset.name).toBe('CheckUSA');
    expect(catalogue.find('CheckAustraliaExtensive')?.dataset.name).toBe('CheckAustralia');
  });

  it('builds SOAPActions as compat-notes describes for both namespaces', () => {
    expect(soapAction(SERVICES.reg.defaultNamespace, 'CheckUSA')).toBe('http://regcheck.org.uk/CheckUSA');
    expect(soapAction(SERVICES.bespoke.defaultNamespace, 'CheckEuroNCap')).toBe('http://Regcheck.org.uk/CheckEuroNCap');
  });

  it('finds operations case-sensitively and suggests the right name for a wrong case', () => {
    expect(catalogue.find('checkfrance')).toBeUndefined();
    expect(catalogue.findIgnoringCase('checkfrance')?.name).toBe('CheckFrance');
  });
});

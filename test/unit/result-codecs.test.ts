import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import { OPERATIONS } from '../../src/catalogue/operations.js';
import { decodeImageSegment } from '../../src/results/image-url.js';
import { XmlWriter } from '../../src/xml/xml-writer.js';
import { codecOf, isChargeable, jsonBodyOf, RESULT_CODECS, resultOf, sampleOf, type ResultType } from '../../src/results/index.js';
import { writeResultElement } from '../../src/http/lookup/result-encoder.js';

const TYPES = Object.keys(RESULT_CODECS) as ResultType[];
const op = (name: string) => {
  const found = new Catalogue(OPERATIONS).find(name);
  if (!found) throw new Error(`no operation ${name}`);
  return found;
};

function xml(type: ResultType, value: unknown): string {
  const w = new XmlWriter(false);
  writeResultElement(w, 'R', [], { type, value } as Parameters<typeof writeResultElement>[3], 'soap');
  return w.toString();
}

describe('result codecs', () => {
  it('has a codec for every result type the catalogue uses, each naming its own GET/POST root and schema type', () => {
    for (const operation of OPERATIONS) expect(RESULT_CODECS[operation.resultType], operation.name).toBeDefined();
    for (const type of TYPES) {
      const codec = codecOf(type);
      // A complex result declares its own type; a simple one (the original's `string`) uses XML Schema's.
      if (codec.xsdType.startsWith('tns:')) expect(codec.schemaTypes.map((t) => t.name)).toContain(codec.xsdType.slice(4));
      else expect(codec.xsdType).toMatch(/^s:/);
    }
  });

  it('charges nothing for an empty Euro NCAP list and the usual cost for any other result', () => {
    expect(isChargeable({ type: 'ArrayOfPreAssessmentSearchResult', value: [] })).toBe(false);
    expect(isChargeable({ type: 'ArrayOfPreAssessmentSearchResult', value: [{ Make: 'Volvo', Model: 'XC60' }] })).toBe(true);
    expect(isChargeable({ type: 'Vehicle', value: { document: {}, vehicleDataOmits: [] } })).toBe(true);
    expect(isChargeable({ type: 'UKMOTData', value: { Tests: [] } })).toBe(true);
  });

  it('writes an empty Euro NCAP list as a self-closing result element, and every sample as a full one', () => {
    expect(xml('ArrayOfPreAssessmentSearchResult', [])).toBe('<R />');
    for (const type of TYPES) {
      const sample = sampleOf(type);
      const written = xml(type, sample.value);
      expect(written, type).toMatch(/^<R>.+<\/R>$/);
    }
  });

  it('serves a restricted variant only its field subset plus an ImageUrl made from the make and model', () => {
    const record = Object.freeze({ Description: 'FORD F150', CarMake: { CurrentTextValue: 'FORD' }, CarModel: { CurrentTextValue: 'F150' }, Colour: 'Red' });
    const result = resultOf('Vehicle', record, { operation: op('CheckUSAMinimal'), baseUrl: 'http://x.test' });
    expect(result.type).toBe('Vehicle');
    expect(Object.keys((result.value as { document: object }).document)).toEqual(['Description', 'CarMake', 'CarModel', 'ImageUrl']);
    expect(record).not.toHaveProperty('ImageUrl');
  });

  it('gives the JSON interface an ExtendedInformation object even when the MOT record has none', () => {
    expect(jsonBodyOf({ type: 'UKMOTData', value: { Tests: [] } })).toEqual({ Tests: [], ExtendedInformation: {} });
  });

  it('checks import payloads with the codec of the operation\'s result type', () => {
    expect(RESULT_CODECS.UKMOTData.importPayload.validate({ Tests: 'none' })).toBe('mot.Tests must be an array');
    expect(RESULT_CODECS.ArrayOfPreAssessmentSearchResult.importPayload.validate({ Make: 'Volvo', Model: 'XC60', Year: '2017' })).toBe('ncap.Year must be a whole number');
    expect(RESULT_CODECS.Vehicle.importPayload.validate({ anything: 1 })).toBeUndefined();
  });
});

describe('Vehicle codec: the wire differences of compat-notes', () => {
  const car = Object.freeze({ CarMake: { CurrentTextValue: 'HONDA' }, CarModel: { CurrentTextValue: 'CB500F' }, BodyStyle: { CurrentTextValue: 'Motorbike' } });
  const imageName = (operation: ReturnType<typeof op>, record: object): string | undefined => {
    const { value } = resultOf('Vehicle', record, { operation, baseUrl: 'http://x.test' });
    const url = (value as { document: Record<string, unknown> }).document.ImageUrl;
    if (typeof url !== 'string') return undefined;
    // The suffix is inside the encoded text, as the original writes it (issue 24 "Fidelity" 2).
    return Buffer.from(url.slice(url.indexOf('@') + 1), 'base64').toString('utf8');
  };

  it('marks every ImageUrl of a motorbike operation with |motorcycle (the rule CheckMotorBikeUK will use)', () => {
    const motorBikeUk = { ...op('Check'), name: 'CheckMotorBikeUK', imageUrl: 'uk-motorbike' as const };
    expect(imageName(motorBikeUk, { ...car, BodyStyle: { CurrentTextValue: 'Solo' } })).toBe('HONDA CB500F|motorcycle');
  });

  it('marks a UK Check answer only when the record is a motorbike', () => {
    expect(imageName(op('Check'), car)).toBe('HONDA CB500F|motorcycle');
    expect(imageName(op('Check'), { ...car, BodyStyle: undefined, Wheelplan: '2 WHEELS' })).toBe('HONDA CB500F|motorcycle');
    expect(imageName(op('Check'), { ...car, BodyStyle: { CurrentTextValue: 'Hatchback' } })).toBe('HONDA CB500F');
    expect(imageName(op('CheckFrance'), car)).toBe('HONDA CB500F');
    // A restricted UK variant (CheckUKMinimal, section 2) that does not serve BodyStyle still marks it.
    expect(imageName({ ...op('Check'), fieldSubset: ['CarMake', 'CarModel'] }, car)).toBe('HONDA CB500F|motorcycle');
  });

  it('reads a motorbike ImageUrl back as its make and model, so the image route draws it (the suffix inside, or after as in links given out before)', () => {
    expect(decodeImageSegment(`@${Buffer.from('HONDA CB500F|motorcycle').toString('base64')}`)).toBe('HONDA CB500F');
    expect(decodeImageSegment(`@${Buffer.from('HONDA CB500F').toString('base64')}|motorcycle`)).toBe('HONDA CB500F');
  });

  it('gives an Australian record its picture by State: the Description in Queensland, an Image member in the ACT', () => {
    const au = { Description: '2011 HYUNDAI ACCENT HATCHBACK', CarMake: { CurrentTextValue: 'HYUNDAI' }, CarModel: { CurrentTextValue: 'ACCENT HATCHBACK' } };
    const document = (record: object): Record<string, unknown> => (resultOf('Vehicle', record, { operation: op('CheckAustralia'), baseUrl: 'http://x.test' }).value as { document: Record<string, unknown> }).document;
    const decoded = (url: unknown): string => Buffer.from(String(url).slice(String(url).indexOf('@') + 1), 'base64').toString('utf8');
    expect(decoded(document({ ...au, State: 'QLD' }).ImageUrl)).toBe('2011 HYUNDAI ACCENT HATCHBACK');
    expect(decoded(document({ ...au, State: 'NSW' }).ImageUrl)).toBe('HYUNDAI ACCENT HATCHBACK');
    const act = document({ ...au, State: 'ACT' });
    expect(act).not.toHaveProperty('ImageUrl');
    expect(decoded(act.Image)).toBe('HYUNDAI ACCENT HATCHBACK');
    expect(document({ ...au, State: 'ACT', Image: 'http://own/img' })).toHaveProperty('Image', 'http://own/img');
  });

  it('leaves MakeDescription and ModelDescription out of vehicleData for Check and CheckAustralia only, as live answers', () => {
    const record = { Description: 'FORD KA', MakeDescription: 'FORD', ModelDescription: 'KA' };
    const data = (name: string): string => {
      const { value } = resultOf('Vehicle', record, { operation: op(name), baseUrl: 'http://x.test' });
      return xml('Vehicle', value).replace(/<vehicleJson>.*<\/vehicleJson>/, '');
    };
    for (const name of ['Check', 'CheckAustralia']) expect(data(name), name).not.toMatch(/MakeDescription|ModelDescription/);
    expect(data('CheckFrance')).toMatch(/<MakeDescription>FORD<\/MakeDescription><ModelDescription>KA<\/ModelDescription>/);
  });

  it('adds no ImageUrl where live answers have none, and keeps the record\'s own', () => {
    expect(imageName(op('CheckNorway'), car)).toBeUndefined();
    expect((resultOf('Vehicle', { ...car, ImageUrl: 'http://own/img' }, { operation: op('CheckNorway'), baseUrl: 'http://x.test' }).value as { document: object }).document).toHaveProperty('ImageUrl', 'http://own/img');
  });

  it('encodes the untrimmed make and model, an absent model as an empty one', () => {
    expect(imageName(op('CheckCroatia'), { CarMake: { CurrentTextValue: 'BMW' }, CarModel: { CurrentTextValue: ' SERIJA 3, 316I' } })).toBe('BMW  SERIJA 3, 316I');
    expect(imageName(op('CheckCroatia'), { CarMake: { CurrentTextValue: 'MITSUBISHI' } })).toBe('MITSUBISHI ');
  });

  it('writes IndicativeValue only when it is an xs:decimal', () => {
    const indicative = (value: unknown): string | undefined => /<IndicativeValue>([^<]*)<\/IndicativeValue>/.exec(xml('Vehicle', { document: { IndicativeValue: value }, vehicleDataOmits: [] }))?.[1];
    expect(indicative('12500')).toBe('12500');
    expect(indicative({ CurrentTextValue: '-12500.75' })).toBe('-12500.75');
    expect(indicative('.5')).toBe('.5');
    expect(indicative(0)).toBe('0');
    for (const bad of ['£12,500', '12 500', '1e5', 'n/a', '12.500,00 kr', '']) expect(indicative(bad), bad).toBeUndefined();
  });

  it("describes each result type's JSON body with a schema its help-page sample satisfies, and an empty Euro NCAP list too", () => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    addFormats.default(ajv);
    for (const type of TYPES) {
      const validate = ajv.compile(codecOf(type).jsonSchema());
      expect(validate(jsonBodyOf(sampleOf(type))), `${type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      // A schema that accepts anything would say nothing about the body.
      expect(validate(type === 'string' ? 42 : 'not a result'), type).toBe(false);
    }
    expect(ajv.validate(RESULT_CODECS.ArrayOfPreAssessmentSearchResult.jsonSchema(), [])).toBe(true);
    expect(ajv.validate(RESULT_CODECS.UKMOTData.jsonSchema(), { Tests: [{ Result: 'PASS', Odometer: 41200 }], ExtendedInformation: {} })).toBe(false);
  });
});

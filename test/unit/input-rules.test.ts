import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  australianStateRule,
  canadianProvinceRule,
  cyrillicPlateRule,
  greekPlateRule,
  int32Rule,
  kbaNumberRule,
  optionalTextRule,
  pakistanProvinceRule,
  registrationRule,
  swissPlateRule,
  textRule,
  usStateRule,
  vinRule,
  type InputRule,
} from '../../src/catalogue/input-rules.js';

const value = (rule: InputRule, raw: string) => {
  const r = rule.normalise(raw);
  return r.ok ? r.value : undefined;
};
const reason = (rule: InputRule, raw: string) => {
  const r = rule.normalise(raw);
  return r.ok ? undefined : r.reason;
};

describe('input rules', () => {
  it('compares registration numbers case-insensitively, ignoring spaces and hyphens', () => {
    for (const raw of ['ab12 cde', 'AB12CDE', ' ab-12-cde ', 'Ab 12\tCde']) expect(value(registrationRule, raw)).toBe('AB12CDE');
  });

  it('folds full-width plate characters to one key', () => {
    expect(value(registrationRule, 'ＡＢ１２ＣＤＥ')).toBe('AB12CDE');
  });

  it('rejects empty, over-long and punctuated registration numbers with a reason', () => {
    expect(reason(registrationRule, '  ')).toMatch(/empty/);
    expect(reason(registrationRule, 'A'.repeat(21))).toMatch(/20/);
    expect(reason(registrationRule, "AB1'; DROP")).toMatch(/letters, digits/);
    expect(reason(registrationRule, '<b>')).toBeDefined();
  });

  it('accepts the Australian states and territories in any case and nothing else', () => {
    for (const s of ['NSW', 'VIC', 'QLD', 'SA', 'WA', 'TAS', 'ACT', 'NT']) {
      expect(value(australianStateRule, s.toLowerCase())).toBe(s);
    }
    expect(reason(australianStateRule, 'NY')).toMatch(/NSW/);
  });

  it('accepts US state codes in lower case and upper-cases them', () => {
    expect(value(usStateRule, 'nj')).toBe('NJ');
    expect(value(usStateRule, ' dc ')).toBe('DC');
    expect(value(usStateRule, 'XX')).toBeUndefined();
    expect(value(usStateRule, 'NSW')).toBeUndefined();
  });

  it('accepts Canadian provinces and territories only', () => {
    expect(value(canadianProvinceRule, 'on')).toBe('ON');
    expect(value(canadianProvinceRule, 'YT')).toBe('YT');
    expect(value(canadianProvinceRule, 'NY')).toBeUndefined();
  });

  it('maps Pakistani province aliases to one code so both spellings find one record', () => {
    expect(value(pakistanProvinceRule, 'kp')).toBe('KPK');
    expect(value(pakistanProvinceRule, 'Islamabad')).toBe('ICT');
    expect(value(pakistanProvinceRule, 'punjab')).toBe('PUNJAB');
    expect(value(pakistanProvinceRule, 'Texas')).toBeUndefined();
  });

  it('accepts 17-character VINs without I, O or Q', () => {
    expect(value(vinRule, '1hgcv1f32la048217')).toBe('1HGCV1F32LA048217');
    expect(reason(vinRule, '1HGCV1F3XLA04821')).toMatch(/17/);
    expect(reason(vinRule, '1HGCV1F3XLA04821O')).toMatch(/no I, O or Q/);
    expect(reason(vinRule, '1HGCV1F3XLA04821I')).toBeDefined();
  });

  it('normalises KBA numbers to HSN/TSN with a slash', () => {
    expect(value(kbaNumberRule, '0005/alq')).toBe('0005/ALQ');
    expect(value(kbaNumberRule, '0005ALQ')).toBe('0005/ALQ');
    expect(value(kbaNumberRule, '0005 / ALQ')).toBe('0005/ALQ');
    expect(value(kbaNumberRule, '005/ALQ')).toBeUndefined();
  });

  it('parses NatCode as a 32-bit integer the way System.Int32 does', () => {
    expect(value(int32Rule, ' 0123 ')).toBe('123');
    expect(value(int32Rule, '2147483647')).toBe('2147483647');
    expect(value(int32Rule, '2147483648')).toBeUndefined();
    expect(value(int32Rule, '12a')).toBeUndefined();
    expect(value(int32Rule, '1.5')).toBeUndefined();
  });

  it('trims and case-folds free text and bounds its length', () => {
    expect(value(textRule, '  Volvo   Cars ')).toBe('VOLVO CARS');
    expect(value(textRule, 'x'.repeat(101))).toBeUndefined();
  });

  it('reads the Cyrillic letters of Russian and Ukrainian plates as the Latin ones, so either spelling finds one record', () => {
    expect(value(cyrillicPlateRule, 'Е317ВМ199')).toBe('E317BM199');
    expect(value(cyrillicPlateRule, 'е317 вм-199')).toBe('E317BM199');
    expect(value(cyrillicPlateRule, 'E317BM199')).toBe('E317BM199');
    expect(value(cyrillicPlateRule, 'ВС3172ЕІ')).toBe('BC3172EI');
    // A letter no plate uses is kept, not guessed.
    expect(value(cyrillicPlateRule, 'Д123')).toBe('Д123');
    expect(reason(cyrillicPlateRule, "A1'")).toMatch(/letters, digits/);
  });

  it('reads the Greek letters of Greek plates as the Latin ones', () => {
    expect(value(greekPlateRule, 'ΥΗΜ 3179')).toBe('YHM3179');
    expect(value(greekPlateRule, 'υημ-3179')).toBe('YHM3179');
    expect(value(greekPlateRule, 'IKX4821')).toBe('IKX4821');
    expect(reason(greekPlateRule, ' ')).toMatch(/empty/);
  });

  it('accepts a Swiss plate only as a canton code and 1 to 6 digits', () => {
    expect(value(swissPlateRule, 'zh 482 177')).toBe('ZH482177');
    expect(value(swissPlateRule, 'VD-3')).toBe('VD3');
    expect(value(swissPlateRule, 'BE 1234 U')).toBe('BE1234U');
    for (const raw of ['XX123', 'ZH', 'ZH1234567', 'M12345', '123456']) expect(reason(swissPlateRule, raw), raw).toMatch(/canton code/);
    expect(reason(swissPlateRule, '')).toMatch(/empty/);
  });

  it('declares a schema that accepts every value it accepts (a list in its canonical case) and refuses what it refuses', () => {
    const ajv = new Ajv2020({ strict: true });
    const samples: ReadonlyArray<readonly [InputRule, readonly string[]]> = [
      [registrationRule, ['AB12CDE', 'ab12 cde', ' ab-12-cde ', 'ＡＢ１２ＣＤＥ', 'Ab 12\tCde', 'AB!12', '']],
      [usStateRule, ['CA', 'DC', 'XX', '']],
      [australianStateRule, ['NSW', 'ACT', 'NEW SOUTH WALES']],
      [canadianProvinceRule, ['ON', 'QC', 'ZZ']],
      [pakistanProvinceRule, ['PUNJAB', 'KP', 'KHYBER PAKHTUNKHWA', 'ISLAMABAD', 'LAHORE']],
      [vinRule, ['1HGCM82633A004352', '1hgcm82633a004352', '1HG-CM826-33A004352', '1HGCM82633A00435', '1HGCM82633A00435I']],
      [kbaNumberRule, ['0005/ALQ', '0005alq', ' 0005 ALQ ', '005/ALQ', '0005/AL']],
      [int32Rule, ['123', '+42', ' -7 ', '12.5', 'twelve']],
      [textRule, ['Volvo', '  Land Rover ', ' ', '']],
      [optionalTextRule, ['XC60', '']],
    ];
    for (const [rule, raws] of samples) {
      const validate = ajv.compile(rule.schema);
      for (const raw of raws) {
        const accepted = rule.normalise(raw).ok;
        expect(validate(raw), `${rule.name} "${raw}"`).toBe(accepted);
      }
    }
  });
});

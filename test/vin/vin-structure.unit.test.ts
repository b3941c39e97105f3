import { describe, expect, it } from 'vitest';
import { vinRule } from '../../src/catalogue/input-rules.js';
import { latestModelYear, northAmericanModelYear } from '../../src/vin/model-year.js';
import { checkDigitMandate, checkVin, expectedCheckDigit, hasValidCheckDigit, transliterate } from '../../src/vin/vin.js';
import { KNOWN_WMI_COUNT, knownWmi, wmiCountry } from '../../src/vin/wmi.js';

const reason = (raw: string): string | undefined => {
  const outcome = vinRule.normalise(raw);
  return outcome.ok ? undefined : outcome.reason;
};

describe('VIN check digit (49 CFR 565.15)', () => {
  it('computes the check digit of published VINs, including X for a remainder of 10', () => {
    expect(expectedCheckDigit('1HGCM82633A004352')).toBe('3');
    // The textbook example of 49 CFR 565 explanations and of Wikipedia's "Vehicle identification number".
    expect(expectedCheckDigit('1M8GDM9AXKP042788')).toBe('X');
    expect(expectedCheckDigit('11111111111111111')).toBe('1');
    expect(hasValidCheckDigit('1M8GDM9AXKP042788')).toBe(true);
    expect(hasValidCheckDigit('1M8GDM9A1KP042788')).toBe(false);
  });

  it('transliterates letters by the table of the regulation, J and S restarting the count', () => {
    expect(Array.from('ABCDEFGH', (c) => transliterate(c))).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(Array.from('JKLMNPR', (c) => transliterate(c))).toEqual([1, 2, 3, 4, 5, 7, 9]);
    expect(Array.from('STUVWXYZ', (c) => transliterate(c))).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(Array.from('0123456789', (c) => transliterate(c))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const letter of ['I', 'O', 'Q']) expect(() => transliterate(letter)).toThrow(RangeError);
  });

  it('weighs letters by their value: changing a letter to another of the same value keeps the digit', () => {
    // A and J are both 1, so they give the same sum; A and B do not.
    expect(expectedCheckDigit('1HGCM82633A004352')).toBe(expectedCheckDigit('1HGCM82633J004352'));
    expect(expectedCheckDigit('1HGCM82633B004352')).not.toBe(expectedCheckDigit('1HGCM82633A004352'));
  });

  it('makes the check digit mandatory for North American (1-5) and Chinese (L) WMIs only', () => {
    for (const first of ['1', '2', '3', '4', '5']) expect(checkDigitMandate(`${first}HGCM82633A004352`)).toBe('North America');
    expect(checkDigitMandate('LRW3E7EK1MC482173')).toBe('China');
    for (const vin of ['WVWZZZ1KZ6W000001', 'JHMCM56557C404453', 'KMHD84LF1HU123456', 'SALGS2EF8GA123456', '9BWZZZ377VT004251']) expect(checkDigitMandate(vin)).toBeUndefined();
  });
});

describe('vinRule (what a VinCheck accepts before any lookup)', () => {
  it('rejects a North American VIN with a wrong check digit, naming the expected digit', () => {
    expect(reason('5YJ3E1EA7JF000316')).toMatch(/^check digit is wrong: expected 2 at position 9, found 7 \(North American/);
    expect(reason('1M8GDM9A1KP042788')).toMatch(/expected X at position 9, found 1/);
    expect(reason('LRW3E7EK1MC482170')).toMatch(/^check digit is wrong: .*Chinese/);
  });

  it('accepts a correct North American VIN in any case, with spaces or hyphens', () => {
    const outcome = vinRule.normalise(' 1hgcm826-33a 004352 ');
    expect(outcome).toEqual({ ok: true, value: '1HGCM82633A004352' });
  });

  it('accepts European and Japanese VINs whatever position 9 holds', () => {
    expect(reason('WVWZZZ1KZ6W000001')).toBeUndefined();
    expect(reason('VF1RFB00X56123456')).toBeUndefined();
    expect(reason('JMZGG14F201234567')).toBeUndefined();
  });

  it('still rejects wrong lengths and I, O or Q before looking at the check digit', () => {
    expect(reason('1HGCM82633A00435')).toBe('must be 17 characters (got 16)');
    expect(reason('1HGCM82633A00435O')).toMatch(/no I, O or Q/);
    expect(checkVin('WVWZZZ1KZ6W00000I')).toEqual({ ok: false, reason: 'may contain only A-H, J-N, P, R-Z and 0-9 (no I, O or Q)' });
  });
});

describe('model year from position 10', () => {
  it('uses position 7 to choose the cycle in North America: a letter means 2010 or later', () => {
    expect(northAmericanModelYear('1HGCM82633A004352', 2027)).toBe(2003);
    expect(northAmericanModelYear('5YJ3E1EA2JF000316', 2027)).toBe(2018);
    expect(northAmericanModelYear('1FTFW1ET9DFC10312', 2027)).toBe(2013);
    expect(northAmericanModelYear('1G1ZT53806F109149', 2027)).toBe(2006);
    // A letter at 7 with a code past next year falls back a cycle, as vPIC does.
    expect(northAmericanModelYear('1HGCV1F3XYA000000', 2027)).toBe(2000);
  });

  it('takes the most recent year not after next year elsewhere', () => {
    expect(latestModelYear('WVWZZZ1KZ6W000001', 2027)).toBe(2006);
    expect(latestModelYear('TMBJJ7NE0J0123456', 2027)).toBe(2018);
    // T is 1996 or 2026: 2026 once next year is 2026 or later (the VIN cannot tell them apart).
    expect(latestModelYear('WVWZZZ1JZTW000001', 2025)).toBe(1996);
    expect(latestModelYear('WVWZZZ1JZTW000001', 2026)).toBe(2026);
  });

  it('reads no year where position 10 holds no year code (0, U or Z)', () => {
    for (const vin of ['SB1K93BE10E048213', 'WVWZZZ1KZUW000001', 'WVWZZZ1KZZW000001']) {
      expect(latestModelYear(vin, 2027)).toBeUndefined();
      expect(northAmericanModelYear(vin, 2027)).toBeUndefined();
    }
  });
});

describe('WMI table and ISO 3780 countries', () => {
  it('knows European makers the vPIC database lacks', () => {
    expect(knownWmi('TMBJJ7NE0J0123456')).toEqual({ make: 'Škoda', manufacturer: 'Škoda Auto', yearAtPosition10: true });
    expect(knownWmi('UU1KSDAF412345678')?.make).toBe('Dacia');
    expect(knownWmi('XTA210990Y1234567')?.make).toBe('Lada');
    expect(knownWmi('VF1RFB00X56123456')).toEqual({ make: 'Renault', manufacturer: 'Renault SA' });
    expect(knownWmi('ZZZ12345678901234')).toBeUndefined();
    expect(KNOWN_WMI_COUNT).toBeGreaterThan(150);
  });

  it('maps the first two characters to the allocated country, in ISO 3780 order (letters, then 1-9, then 0)', () => {
    const cases: Record<string, string | undefined> = {
      '1HG': 'United States', '2HG': 'Canada', '3VW': 'Mexico', '5YJ': 'United States', JHM: 'Japan', KMH: 'South Korea',
      LRW: 'China', SAL: 'United Kingdom', SUF: 'Poland', TMB: 'Czech Republic', TRU: 'Hungary', T1A: 'Portugal',
      UU1: 'Romania', VF1: 'France', VSS: 'Spain', WVW: 'Germany', W0L: 'Germany', XTA: 'Russia', X7L: 'Russia',
      YV1: 'Sweden', ZFA: 'Italy', ZZZ: 'Slovenia', '9BW': 'Brazil', '93H': 'Brazil', '6G1': 'Australia',
      // Blocks no country was allocated in our table.
      ZSZ: undefined, '3X1': undefined, '0AB': undefined,
    };
    for (const [wmi, country] of Object.entries(cases)) expect(wmiCountry(`${wmi}ZZZ1KZ6W000001`), wmi).toBe(country);
  });
});

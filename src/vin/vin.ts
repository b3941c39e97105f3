/**
 * The structure of a 17-character VIN (ISO 3779) and its check digit (49 CFR 565.15, the North
 * American scheme that China's GB 16735 copies). Pure functions: no I/O, no database.
 */

/** 17 characters of A-H, J-N, P, R-Z and 0-9: ISO 3779 never uses I, O or Q. */
export const VIN_PATTERN = /^[A-HJ-NPR-Z0-9]{17}$/;

/** Letter values of the check-digit calculation (49 CFR 565.15(c), table IV). */
const TRANSLITERATION: Readonly<Record<string, number>> = {
  A: 1, B: 2, C: 3, D: 4, E: 5, F: 6, G: 7, H: 8,
  J: 1, K: 2, L: 3, M: 4, N: 5, P: 7, R: 9,
  S: 2, T: 3, U: 4, V: 5, W: 6, X: 7, Y: 8, Z: 9,
};

/** Position weights 1..17 (49 CFR 565.15(c), table V); position 9, the check digit, weighs 0. */
const WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2] as const;

/** The number a VIN character stands for in the check-digit sum (digits are themselves). */
export function transliterate(char: string): number {
  if (char >= '0' && char <= '9') return char.charCodeAt(0) - 48;
  const value = TRANSLITERATION[char];
  if (value === undefined) throw new RangeError(`"${char}" is not a VIN character`);
  return value;
}

/**
 * The check digit position 9 should hold: the weighted sum modulo 11, with 10 written as X.
 * `vin` must already match VIN_PATTERN.
 */
export function expectedCheckDigit(vin: string): string {
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += transliterate(vin.charAt(i)) * (WEIGHTS[i] ?? 0);
  const remainder = sum % 11;
  return remainder === 10 ? 'X' : String(remainder);
}

export function hasValidCheckDigit(vin: string): boolean {
  return vin.charAt(8) === expectedCheckDigit(vin);
}

/**
 * Where the check digit is mandatory, by the first character of the WMI (ISO 3780 regions):
 * - 1-5, North America (US 1, 4, 5; Canada 2; Mexico 3): 49 CFR 565.15 requires it for every
 *   vehicle sold in the US, and Canada (CMVSR 115) and Mexico (NOM-131) adopt the same VIN.
 * - L, China: GB 16735 makes position 9 a check digit computed the same way.
 * Elsewhere (Europe, Japan, Korea, ...) ISO 3779 leaves position 9 to the manufacturer: many
 * European VINs hold a filler such as Z there, so a "wrong" check digit proves nothing.
 */
export function checkDigitMandate(vin: string): 'North America' | 'China' | undefined {
  const first = vin.charAt(0);
  if (first >= '1' && first <= '5') return 'North America';
  if (first === 'L') return 'China';
  return undefined;
}

export type VinProblem = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Checks a normalised (trimmed, upper-case) VIN: length, alphabet, and the check digit where it
 * is mandatory. `reason` reads after the parameter name: "Vin check digit is wrong: ...".
 */
export function checkVin(vin: string): VinProblem {
  if (vin.length !== 17) return { ok: false, reason: `must be 17 characters (got ${vin.length})` };
  if (!VIN_PATTERN.test(vin)) return { ok: false, reason: 'may contain only A-H, J-N, P, R-Z and 0-9 (no I, O or Q)' };
  const mandate = checkDigitMandate(vin);
  if (mandate !== undefined) {
    const expected = expectedCheckDigit(vin);
    if (vin.charAt(8) !== expected) {
      return {
        ok: false,
        reason: `check digit is wrong: expected ${expected} at position 9, found ${vin.charAt(8)} (${mandate === 'China' ? 'Chinese' : 'North American'} VINs carry a mandatory check digit; the VIN is probably mistyped)`,
      };
    }
  }
  return { ok: true };
}

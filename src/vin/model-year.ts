/**
 * Model year from VIN position 10. The 30 year codes repeat every 30 years (A = 1980 and 2010,
 * 1 = 2001 and 2031), so every reading picks one cycle and says how.
 */

/** Year codes in order from A = 1980 (49 CFR 565.15(a), table VI): no I, O, Q, U, Z or 0. */
const YEAR_CODES = 'ABCDEFGHJKLMNPRSTVWXY123456789';

/** Offset of a year code within its 30-year cycle, or undefined when position 10 holds none. */
function cycleOffset(vin: string): number | undefined {
  const index = YEAR_CODES.indexOf(vin.charAt(9));
  return index === -1 ? undefined : index;
}

/**
 * The North American reading (49 CFR 565.15(a)(2)): for passenger cars, MPVs and light trucks a
 * letter at position 7 means the 2010-2039 cycle, a digit the 1980-2009 cycle. A year later than
 * `latestYear` (next year, normally) falls back one cycle, as the NHTSA decoder does.
 */
export function northAmericanModelYear(vin: string, latestYear: number): number | undefined {
  const offset = cycleOffset(vin);
  if (offset === undefined) return undefined;
  const seventh = vin.charAt(6);
  const year = (seventh >= '0' && seventh <= '9' ? 1980 : 2010) + offset;
  return year > latestYear ? year - 30 : year;
}

/**
 * The reading for VINs outside the North American scheme (European makers that encode the year,
 * such as the Volkswagen group): position 7 means nothing there, so the most recent year of the
 * code that is not after `latestYear`. A 1996 car ("T") reads as 2026 once `latestYear` reaches
 * 2026: the VIN alone cannot tell them apart.
 */
export function latestModelYear(vin: string, latestYear: number): number | undefined {
  const offset = cycleOffset(vin);
  if (offset === undefined) return undefined;
  let year = 1980 + offset;
  while (year + 30 <= latestYear) year += 30;
  return year;
}

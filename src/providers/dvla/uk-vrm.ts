/**
 * The registration as DVLA and DVSA take it (upper case, no spaces), or undefined when it cannot
 * be a GB/NI registration mark: then neither upstream is asked, which saves quota and keeps their
 * 400 answers for real problems. Our registration rule already removed spaces and hyphens and
 * upper-cased; GB marks are at most 7 characters (NI: 3 letters and up to 4 digits).
 */
export function ukVrm(key: string): string | undefined {
  return /^[A-Z0-9]{2,8}$/.test(key) ? key : undefined;
}

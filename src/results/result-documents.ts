/** The JSON object a vehicle lookup returns (vehicleJson). Its members vary by country. */
export type VehicleDocument = Record<string, unknown>;

/** One MOT test as the original reports it (interface spec, UKTest). */
export interface UkTest {
  TestDate?: string;
  ExpiryDate?: string;
  Result?: string;
  Odometer?: string;
  TestNumber?: string;
  FailureReasons?: string[];
  Advisories?: string[];
}

/** The UKMOT result: on JSON `Tests` and `ExtendedInformation`; the XML form adds Json fields. */
export interface MotDocument {
  Tests: UkTest[];
  taxDate?: string;
  ExtendedInformation?: Record<string, string>;
  /**
   * The XML form's `Json` and `ExtendedInformationJson` texts as the original service sent them
   * (issue 24: its answers are served byte for byte); absent, the writer makes them from Tests and
   * ExtendedInformation. Never part of the JSON body.
   */
  Json?: string;
  ExtendedInformationJson?: string;
}

/** A PreAssessmentSearchResult (interface spec) as stored. */
export type NcapRating = Record<string, unknown>;

/** A result and its type; each result type's codec (src/results/) says what it holds. */
export type { LookupResult } from './index.js';

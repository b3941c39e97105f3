import { flatRecordCodec, boolean, dateTime, text, type FlatField } from './flat-record.js';

/**
 * CheckInsuranceStatusItaly: the insurance of an Italian vehicle (vendor WSDL "InsuranceDetails";
 * Region after IsInsured, as a 2026 client of the original sees it: compat-notes "The original's whole contract").
 */

/** InsuranceDetails in the vendor WSDL's element order. */
export const INSURANCE_DETAILS_FIELDS: readonly FlatField[] = [text('Make'), text('Model'), text('Company'), dateTime('Expiry'), boolean('IsInsured'), text('Region')];

export const insuranceDetailsCodec = flatRecordCodec({
  typeName: 'InsuranceDetails',
  fields: INSURANCE_DETAILS_FIELDS,
  importField: 'insuranceDetails',
  jsonDescription: 'a JSON object with `Make`, `Model`, `Company`, `Expiry` (ISO 8601 date-time), `IsInsured` (true or false) and `Region`',
});

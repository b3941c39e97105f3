import { flatRecordCodec, dateTime, text, type FlatField } from './flat-record.js';

/**
 * CheckInsuranceStatusPortugal: the insurance policy of a Portuguese vehicle (vendor WSDL "Insurance").
 */

/** Insurance in the vendor WSDL's element order. */
export const INSURANCE_FIELDS: readonly FlatField[] = [text('Company'), dateTime('StartDate'), dateTime('EndDate'), text('Policy')];

export const insuranceCodec = flatRecordCodec({
  typeName: 'Insurance',
  fields: INSURANCE_FIELDS,
  importField: 'insurance',
  jsonDescription: 'a JSON object with `Company`, `StartDate` and `EndDate` (ISO 8601 date-times) and `Policy`',
});

import { flatRecordCodec, double, text, type FlatField } from './flat-record.js';

/**
 * CheckPrice: a valuation of the vehicle (vendor WSDL "Valuation").
 */

/** Valuation in the vendor WSDL's element order. */
export const VALUATION_FIELDS: readonly FlatField[] = [text('Description'), double('Price')];

export const valuationCodec = flatRecordCodec({
  typeName: 'Valuation',
  fields: VALUATION_FIELDS,
  importField: 'valuation',
  jsonDescription: 'a JSON object with `Description` (string) and `Price` (number)',
});

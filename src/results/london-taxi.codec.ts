import { flatRecordCodec, text, type FlatField } from './flat-record.js';

/**
 * CheckLondonTaxi: a London taxi licence (vendor WSDL "LondonTaxi"; Expiry is a string there).
 */

/** LondonTaxi in the vendor WSDL's element order. */
export const LONDON_TAXI_FIELDS: readonly FlatField[] = [text('Make'), text('Model'), text('License'), text('Expiry')];

export const londonTaxiCodec = flatRecordCodec({
  typeName: 'LondonTaxi',
  fields: LONDON_TAXI_FIELDS,
  importField: 'londonTaxi',
  jsonDescription: 'a JSON object with `Make`, `Model`, `License` and `Expiry` (strings)',
});

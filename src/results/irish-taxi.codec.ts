import { flatRecordCodec, text, type FlatField } from './flat-record.js';

/**
 * CheckIrishTaxi: an Irish taxi licence (vendor WSDL "IrishTaxi"; Expiry is a string there).
 */

/** IrishTaxi in the vendor WSDL's element order. */
export const IRISH_TAXI_FIELDS: readonly FlatField[] = [text('LicenceNumber'), text('Expiry'), text('LicenceHolder')];

export const irishTaxiCodec = flatRecordCodec({
  typeName: 'IrishTaxi',
  fields: IRISH_TAXI_FIELDS,
  importField: 'irishTaxi',
  jsonDescription: 'a JSON object with `LicenceNumber`, `Expiry` and `LicenceHolder` (strings)',
});

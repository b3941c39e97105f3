import { flatRecordCodec, boolean, text, type FlatField } from './flat-record.js';

/**
 * IsInsured: whether the vehicle is insured (vendor WSDL "InsuredStatus"). A record saying
 * "not insured" is a found answer and is charged like any other.
 */

/** InsuredStatus in the vendor WSDL's element order. */
export const INSURED_STATUS_FIELDS: readonly FlatField[] = [boolean('Insured'), text('VehicleDetails')];

export const insuredStatusCodec = flatRecordCodec({
  typeName: 'InsuredStatus',
  fields: INSURED_STATUS_FIELDS,
  importField: 'insuredStatus',
  jsonDescription: 'a JSON object with `Insured` (true or false) and `VehicleDetails` (string)',
});

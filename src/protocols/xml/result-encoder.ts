import { textValue } from '../../lookup/image-url.js';
import type { LookupResult, MotDocument, NcapRating, VehicleDocument } from '../../lookup/lookup-result.js';
import type { XmlWriter } from './xml-writer.js';
import { NCAP_DEFAULTS, NCAP_FIELD_ORDER, UKTEST_ARRAY_FIELDS, UKTEST_STRING_FIELDS, VEHICLE_DATA_FIELDS } from './result-schema.js';

const NIL: ReadonlyArray<readonly [string, string]> = [['xsi:nil', 'true']];
const INTEGER = /^[+-]?\d{1,18}$/;

/** The CurrentValue of a vehicleJson member: an explicit integer, else its text when that is a whole number. */
function currentValue(doc: VehicleDocument, member: string, text: string | undefined): string | undefined {
  const v = doc[member];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const explicit = (v as Record<string, unknown>).CurrentValue;
    if (typeof explicit === 'number' && Number.isInteger(explicit)) return String(explicit);
    if (typeof explicit === 'string' && INTEGER.test(explicit.trim())) return String(Number(explicit.trim()));
  }
  if (text !== undefined && INTEGER.test(text) && Math.abs(Number(text)) <= 2147483647) return String(Number(text));
  return undefined;
}

/** vehicleData, derived from the vehicleJson document (issue 3 "Results"). */
function writeVehicleData(w: XmlWriter, doc: VehicleDocument): void {
  w.open('vehicleData');
  for (const field of VEHICLE_DATA_FIELDS) {
    const text = textValue(doc, field.name);
    switch (field.kind) {
      case 'integer':
        if (text !== undefined && INTEGER.test(text)) w.leaf(field.name, String(BigInt(text)));
        break;
      case 'text':
        if (text !== undefined) w.leaf(field.name, text);
        break;
      case 'pair': {
        const value = currentValue(doc, field.name, text);
        w.open(field.name);
        if (value === undefined) w.empty('CurrentValue', NIL);
        else w.leaf('CurrentValue', value);
        if (text === undefined) w.empty('CurrentTextValue', NIL);
        else w.leaf('CurrentTextValue', text);
        w.close();
        break;
      }
    }
  }
  w.close();
}

function writeVehicle(w: XmlWriter, doc: VehicleDocument): void {
  w.leaf('vehicleJson', JSON.stringify(doc));
  writeVehicleData(w, doc);
}

function writeStrings(w: XmlWriter, name: string, values: readonly string[]): void {
  if (values.length === 0) {
    w.empty(name);
    return;
  }
  w.open(name);
  for (const v of values) w.leaf('string', v);
  w.close();
}

function writeMot(w: XmlWriter, mot: MotDocument): void {
  if (mot.Tests.length === 0) w.empty('Tests');
  else {
    w.open('Tests');
    for (const test of mot.Tests) {
      w.open('UKTest');
      for (const f of UKTEST_STRING_FIELDS) {
        const v = test[f];
        if (v !== undefined) w.leaf(f, v);
      }
      for (const f of UKTEST_ARRAY_FIELDS) {
        const v = test[f];
        if (v !== undefined) writeStrings(w, f, v);
      }
      w.close();
    }
    w.close();
  }
  if (mot.taxDate !== undefined) w.leaf('taxDate', mot.taxDate);
  w.leaf('Json', JSON.stringify(mot.Tests));
  const extended = Object.entries(mot.ExtendedInformation ?? {});
  if (extended.length === 0) w.empty('ExtendedInformation');
  else {
    w.open('ExtendedInformation');
    for (const [k, v] of extended) writeStrings(w, 'ArrayOfString', [k, v]);
    w.close();
  }
  w.leaf('ExtendedInformationJson', JSON.stringify(mot.ExtendedInformation ?? {}));
}

function writeRating(w: XmlWriter, rating: NcapRating): void {
  w.open('PreAssessmentSearchResult');
  for (const field of NCAP_FIELD_ORDER) {
    const v = rating[field.name];
    if (field.type === 'string') {
      if (typeof v === 'string') w.leaf(field.name, v);
      continue;
    }
    const given = field.type === 'int' ? (typeof v === 'number' && Number.isInteger(v) ? String(v) : undefined)
      : field.type === 'boolean' ? (typeof v === 'boolean' ? String(v) : undefined)
      : typeof v === 'string' ? v : undefined;
    w.leaf(field.name, given ?? NCAP_DEFAULTS[field.type]);
  }
  w.close();
}

/** Writes the children of a result element ({Op}Result in SOAP, the root element in GET/POST). */
export function writeResultContent(w: XmlWriter, result: LookupResult): void {
  switch (result.type) {
    case 'Vehicle':
      writeVehicle(w, result.vehicle);
      return;
    case 'UKMOTData':
      writeMot(w, result.mot);
      return;
    case 'ArrayOfPreAssessmentSearchResult':
      for (const r of result.ratings) writeRating(w, r);
      return;
  }
}

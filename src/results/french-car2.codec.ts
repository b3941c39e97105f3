import { writeComplex, type ResultCodec } from './result-codec.js';
import { flatSchemaType, pickFields, text, validateFlat, writeFlatFields, type FlatField, type FlatRecord } from './flat-record.js';
import { child, childrenNamed, onlyChildren, simpleFields } from './xml-read.js';
import { arrayItem, optional, sequenceType } from './xsd.js';

/**
 * FrenchCar2: the alternative versions of a French vehicle (CheckAlternativeVersionsFrance; vendor
 * WSDL "FrenchCar2", "ArrayOfFRVersion", "FRVersion"). An empty list of versions is no answer and
 * costs nothing.
 */

/**
 * FRVersion's 26 fields in the vendor WSDL's order. The vendor declares `genre` without a type
 * (xs:anyType); every value of it is text, so ours says s:string and proxies read a string.
 */
export const FR_VERSION_FIELDS: readonly FlatField[] = [
  'anneeSortie', 'boiteDeVitesse', 'carburantVersion', 'carrosserieVersion', 'classeSra', 'libVersion', 'libelleModele',
  'marque', 'modele', 'produit', 'puissance', 'version', 'cleCarrosserie', 'groupeSra', 'nbPlace',
  'datePremiereMiseCirculation', 'questionBatterie', 'electrique', 'genre', 'typeVehicule', 'numSerieMoteur',
  'valeurANeufSRA', 'niveauRisqueVol', 'protectionConstructeur', 'puissanceDyn', 'segmentVeh',
].map(text);

export interface FrenchCar2 {
  readonly versions: readonly FlatRecord[];
}

function validateFrenchCar2(payload: unknown): string | undefined {
  const record = payload as Record<string, unknown>;
  const extra = Object.keys(record).filter((k) => k !== 'versions');
  if (extra.length > 0) return `frenchCar2 has unexpected field "${extra[0] ?? ''}" (expected versions)`;
  if (!Array.isArray(record.versions)) return 'frenchCar2.versions must be an array of FRVersion objects';
  for (const [i, version] of record.versions.entries()) {
    const problem = validateFlat(`frenchCar2.versions[${i}]`, FR_VERSION_FIELDS, version);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

export const frenchCar2Codec: ResultCodec<FrenchCar2> = {
  xmlName: 'FrenchCar2',
  xsdType: 'tns:FrenchCar2',
  schemaTypes: [
    sequenceType('FrenchCar2', (w) => {
      w.empty('s:element', optional('versions', 'tns:ArrayOfFRVersion'));
    }),
    sequenceType('ArrayOfFRVersion', (w) => {
      w.empty('s:element', arrayItem('FRVersion', 'tns:FRVersion'));
    }),
    flatSchemaType('FRVersion', FR_VERSION_FIELDS),
  ],
  jsonDescription: 'a JSON object with `versions`, an array of FRVersion objects (26 string fields: `marque`, `modele`, `libVersion`, ...)',
  importPayload: { field: 'frenchCar2', validate: validateFrenchCar2 },

  fromRecord: (record) => ({ versions: ((record as { versions?: FlatRecord[] }).versions ?? []).map((v) => pickFields(FR_VERSION_FIELDS, v)) }),

  fromXml(root) {
    onlyChildren(root, ['versions']);
    const versions = child(root, 'versions');
    if (!versions) return { versions: [] };
    onlyChildren(versions, ['FRVersion']);
    return { versions: childrenNamed(versions, 'FRVersion').map((v) => simpleFields(v, FR_VERSION_FIELDS)) };
  },

  isChargeable: (car) => car.versions.length > 0,

  jsonSchema: () => ({
    title: 'FrenchCar2',
    type: 'object',
    properties: { versions: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } } },
    required: ['versions'],
  }),
  jsonBody: (car) => car,

  writeXml(w, element, attributes, car) {
    writeComplex(w, element, attributes, false, () => {
      if (car.versions.length === 0) {
        w.empty('versions');
        return;
      }
      w.open('versions');
      for (const version of car.versions) {
        w.open('FRVersion');
        writeFlatFields(w, FR_VERSION_FIELDS, version);
        w.close();
      }
      w.close();
    });
  },

  sample: () => ({ versions: [Object.fromEntries(FR_VERSION_FIELDS.map((f) => [f.name, 'string']))] }),
};

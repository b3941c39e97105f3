import { writeComplex, type ResultCodec } from './result-codec.js';
import { child, onlyChildren, simpleText, strings, XmlReadError } from './xml-read.js';
import { ARRAY_OF_ARRAY_OF_STRING, ARRAY_OF_STRING, optional, sequenceType, writeStrings } from './xsd.js';

/**
 * DataGrid: CarSpecifications' table (compat-notes "The original's whole contract": sequence of
 * `json`, `columnNames` (ArrayOfString) and `data` (ArrayOfArrayOfString, rows of ArrayOfString)).
 * `json` is the table as JSON text: the record's own when it has one (an upstream's), else the rows
 * as objects keyed by column name. A table without rows is no answer and costs nothing.
 */

export interface DataGrid {
  readonly json: string;
  readonly columnNames: readonly string[];
  readonly data: ReadonlyArray<readonly string[]>;
}

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** The rows as objects keyed by column name, as JSON text. */
export function tableJson(columnNames: readonly string[], data: ReadonlyArray<readonly string[]>): string {
  return JSON.stringify(data.map((row) => Object.fromEntries(columnNames.map((name, i) => [name, row[i] ?? '']))));
}

function validateDataGrid(payload: unknown): string | undefined {
  const grid = payload as Record<string, unknown>;
  const extra = Object.keys(grid).filter((k) => !['json', 'columnNames', 'data'].includes(k));
  if (extra.length > 0) return `dataGrid has unexpected field "${extra[0] ?? ''}" (expected json, columnNames, data)`;
  if ('json' in grid && typeof grid.json !== 'string') return 'dataGrid.json must be a string';
  if (!isStringArray(grid.columnNames) || grid.columnNames.length === 0) return 'dataGrid.columnNames must be a non-empty array of strings';
  const width = grid.columnNames.length;
  if (!Array.isArray(grid.data)) return 'dataGrid.data must be an array of rows (arrays of strings)';
  for (const [i, row] of grid.data.entries()) {
    if (!isStringArray(row)) return `dataGrid.data[${i}] must be an array of strings`;
    if (row.length !== width) return `dataGrid.data[${i}] has ${row.length} values for ${width} columns`;
  }
  return undefined;
}

export const dataGridCodec: ResultCodec<DataGrid> = {
  xmlName: 'DataGrid',
  xsdType: 'tns:DataGrid',
  schemaTypes: [
    sequenceType('DataGrid', (w) => {
      w.empty('s:element', optional('json', 's:string'));
      w.empty('s:element', optional('columnNames', 'tns:ArrayOfString'));
      w.empty('s:element', optional('data', 'tns:ArrayOfArrayOfString'));
    }),
    ARRAY_OF_STRING,
    ARRAY_OF_ARRAY_OF_STRING,
  ],
  jsonDescription: 'a JSON object with `json` (the rows as JSON text), `columnNames` (array of strings) and `data` (array of rows, each an array of strings)',
  importPayload: { field: 'dataGrid', validate: validateDataGrid },

  fromRecord(record) {
    const grid = record as { json?: unknown; columnNames?: string[]; data?: string[][] };
    const columnNames = grid.columnNames ?? [];
    const data = grid.data ?? [];
    return { json: typeof grid.json === 'string' ? grid.json : tableJson(columnNames, data), columnNames, data };
  },

  fromXml(root) {
    onlyChildren(root, ['json', 'columnNames', 'data']);
    const json = child(root, 'json');
    const columns = child(root, 'columnNames');
    const data = child(root, 'data');
    if (data) onlyChildren(data, ['ArrayOfString']);
    const grid = {
      ...(json ? { json: simpleText(json) } : {}),
      columnNames: columns ? strings(columns) : [],
      data: data ? data.children.map(strings) : [],
    };
    if (grid.data.some((row) => row.length !== grid.columnNames.length)) throw new XmlReadError('DataGrid has a row whose width is not the number of columns');
    return grid;
  },

  isChargeable: (grid) => grid.data.length > 0,

  jsonSchema: () => ({
    title: 'DataGrid',
    type: 'object',
    properties: {
      json: { type: 'string', description: 'The rows as a JSON array of objects keyed by column name' },
      columnNames: { type: 'array', items: { type: 'string' } },
      data: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
    },
    required: ['json', 'columnNames', 'data'],
  }),
  jsonBody: (grid) => grid,

  writeXml(w, element, attributes, grid) {
    writeComplex(w, element, attributes, false, () => {
      w.leaf('json', grid.json);
      writeStrings(w, 'columnNames', grid.columnNames);
      if (grid.data.length === 0) w.empty('data');
      else {
        w.open('data');
        for (const row of grid.data) writeStrings(w, 'ArrayOfString', row);
        w.close();
      }
    });
  },

  sample: () => ({ json: '[{"string":"string"}]', columnNames: ['string'], data: [['string']] }),
};

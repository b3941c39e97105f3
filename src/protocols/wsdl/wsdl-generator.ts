import type { OperationDeclaration, ResultType } from '../../catalogue/operation.js';
import type { ServiceEndpoint } from '../service-endpoints.js';
import { NCAP_FIELD_ORDER, UKTEST_ARRAY_FIELDS, UKTEST_STRING_FIELDS, VEHICLE_DATA_FIELDS } from '../xml/result-schema.js';
import { XmlWriter, type Attributes } from '../xml/xml-writer.js';

/**
 * The WSDL of a service, with the structure ASMX generates (compat-notes "WSDL (as ASMX generates
 * it)"): document/literal wrapped types, SOAP/HttpGet/HttpPost messages, three port types, four
 * bindings and four ports. Generated from the catalogue and the result schema, nothing hand-kept.
 */

const NS = {
  soap: 'http://schemas.xmlsoap.org/wsdl/soap/',
  tm: 'http://microsoft.com/wsdl/mime/textMatching/',
  soapenc: 'http://schemas.xmlsoap.org/soap/encoding/',
  mime: 'http://schemas.xmlsoap.org/wsdl/mime/',
  s: 'http://www.w3.org/2001/XMLSchema',
  soap12: 'http://schemas.xmlsoap.org/wsdl/soap12/',
  http: 'http://schemas.xmlsoap.org/wsdl/http/',
  wsdl: 'http://schemas.xmlsoap.org/wsdl/',
} as const;

const HTTP_TRANSPORT = 'http://schemas.xmlsoap.org/soap/http';
const WSDL_DOC: Attributes = [['xmlns:wsdl', NS.wsdl]];

/** Named complex types each result type needs, in the order they are first declared. */
const TYPES_FOR_RESULT: Readonly<Record<ResultType, readonly string[]>> = {
  Vehicle: ['Vehicle'],
  UKMOTData: ['UKMOTData', 'ArrayOfUKTest', 'UKTest', 'ArrayOfString', 'ArrayOfArrayOfString'],
  ArrayOfPreAssessmentSearchResult: ['ArrayOfPreAssessmentSearchResult', 'PreAssessmentSearchResult'],
};

const optional = (name: string, type: string): Attributes => [
  ['minOccurs', '0'],
  ['maxOccurs', '1'],
  ['name', name],
  ['type', type],
];
const required = (name: string, type: string): Attributes => [
  ['minOccurs', '1'],
  ['maxOccurs', '1'],
  ['name', name],
  ['type', type],
];
const arrayItem = (name: string, type: string): Attributes => [
  ['minOccurs', '0'],
  ['maxOccurs', 'unbounded'],
  ['name', name],
  ['nillable', 'true'],
  ['type', type],
];

/** The optional `type` attribute every vehicleData child carries (interface spec). */
function typeAttribute(w: XmlWriter): void {
  w.empty('s:attribute', [['name', 'type'], ['type', 's:NCName']]);
}

function simpleContent(w: XmlWriter, name: string, base: string): void {
  w.open('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', name]]);
  w.open('s:complexType').open('s:simpleContent').open('s:extension', [['base', base]]);
  typeAttribute(w);
  w.close().close().close().close();
}

function writeVehicleType(w: XmlWriter): void {
  w.open('s:complexType', [['name', 'Vehicle']]).open('s:sequence');
  w.empty('s:element', optional('vehicleJson', 's:string'));
  w.open('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', 'vehicleData']]);
  w.open('s:complexType').open('s:sequence');
  for (const field of VEHICLE_DATA_FIELDS) {
    switch (field.kind) {
      case 'integer':
        simpleContent(w, field.name, 's:integer');
        break;
      case 'text':
        simpleContent(w, field.name, 's:string');
        break;
      case 'pair':
        w.open('s:element', [['minOccurs', '0'], ['maxOccurs', '1'], ['name', field.name]]);
        w.open('s:complexType').open('s:sequence');
        w.empty('s:element', [['minOccurs', '1'], ['maxOccurs', '1'], ['name', 'CurrentValue'], ['nillable', 'true'], ['type', 's:int']]);
        w.empty('s:element', [['minOccurs', '1'], ['maxOccurs', '1'], ['name', 'CurrentTextValue'], ['nillable', 'true'], ['type', 's:string']]);
        w.close();
        typeAttribute(w);
        w.close().close();
        break;
    }
  }
  w.close().close().close(); // sequence, complexType, element vehicleData
  w.close().close(); // sequence, complexType Vehicle
}

function writeComplexType(w: XmlWriter, name: string): void {
  if (name === 'Vehicle') {
    writeVehicleType(w);
    return;
  }
  w.open('s:complexType', [['name', name]]).open('s:sequence');
  switch (name) {
    case 'UKMOTData':
      w.empty('s:element', optional('Tests', 'tns:ArrayOfUKTest'));
      w.empty('s:element', optional('taxDate', 's:string'));
      w.empty('s:element', optional('Json', 's:string'));
      w.empty('s:element', optional('ExtendedInformation', 'tns:ArrayOfArrayOfString'));
      w.empty('s:element', optional('ExtendedInformationJson', 's:string'));
      break;
    case 'ArrayOfUKTest':
      w.empty('s:element', arrayItem('UKTest', 'tns:UKTest'));
      break;
    case 'UKTest':
      for (const f of UKTEST_STRING_FIELDS) w.empty('s:element', optional(f, 's:string'));
      for (const f of UKTEST_ARRAY_FIELDS) w.empty('s:element', optional(f, 'tns:ArrayOfString'));
      break;
    case 'ArrayOfString':
      w.empty('s:element', arrayItem('string', 's:string'));
      break;
    case 'ArrayOfArrayOfString':
      w.empty('s:element', arrayItem('ArrayOfString', 'tns:ArrayOfString'));
      break;
    case 'ArrayOfPreAssessmentSearchResult':
      w.empty('s:element', arrayItem('PreAssessmentSearchResult', 'tns:PreAssessmentSearchResult'));
      break;
    case 'PreAssessmentSearchResult':
      for (const f of NCAP_FIELD_ORDER) {
        w.empty('s:element', f.type === 'string' ? optional(f.name, 's:string') : required(f.name, `s:${f.type}`));
      }
      break;
    default:
      throw new Error(`no schema for complex type ${name}`);
  }
  w.close().close();
}

function writeTypes(w: XmlWriter, endpoint: ServiceEndpoint): void {
  w.open('wsdl:types');
  w.open('s:schema', [['elementFormDefault', 'qualified'], ['targetNamespace', endpoint.namespace]]);
  const declared = new Set<string>();
  for (const op of endpoint.operations) {
    w.open('s:element', [['name', op.name]]).open('s:complexType').open('s:sequence');
    for (const p of op.parameters) {
      w.empty('s:element', p.xmlType === 's:int' ? required(p.name, 's:int') : optional(p.name, 's:string'));
    }
    w.close().close().close();
    w.open('s:element', [['name', `${op.name}Response`]]).open('s:complexType').open('s:sequence');
    w.empty('s:element', optional(`${op.name}Result`, `tns:${op.resultType}`));
    w.close().close().close();
    for (const type of TYPES_FOR_RESULT[op.resultType]) {
      if (declared.has(type)) continue;
      declared.add(type);
      writeComplexType(w, type);
    }
  }
  // Root elements of the GET/POST responses, appended as ASMX does.
  for (const type of new Set(endpoint.operations.map((op) => op.resultType))) {
    w.empty('s:element', [['name', type], ['nillable', 'true'], ['type', `tns:${type}`]]);
  }
  w.close().close();
}

function writeMessages(w: XmlWriter, op: OperationDeclaration): void {
  w.open('wsdl:message', [['name', `${op.name}SoapIn`]]).empty('wsdl:part', [['name', 'parameters'], ['element', `tns:${op.name}`]]).close();
  w.open('wsdl:message', [['name', `${op.name}SoapOut`]]).empty('wsdl:part', [['name', 'parameters'], ['element', `tns:${op.name}Response`]]).close();
  for (const verb of ['HttpGet', 'HttpPost']) {
    w.open('wsdl:message', [['name', `${op.name}${verb}In`]]);
    // The GET/POST bindings send every parameter as text, ints included.
    for (const p of op.parameters) w.empty('wsdl:part', [['name', p.name], ['type', 's:string']]);
    w.close();
    w.open('wsdl:message', [['name', `${op.name}${verb}Out`]]).empty('wsdl:part', [['name', 'Body'], ['element', `tns:${op.resultType}`]]).close();
  }
}

function writePortType(w: XmlWriter, endpoint: ServiceEndpoint, suffix: 'Soap' | 'HttpGet' | 'HttpPost'): void {
  w.open('wsdl:portType', [['name', `${endpoint.definition.serviceName}${suffix}`]]);
  for (const op of endpoint.operations) {
    w.open('wsdl:operation', [['name', op.name]]);
    w.leaf('wsdl:documentation', op.documentation, WSDL_DOC);
    w.empty('wsdl:input', [['message', `tns:${op.name}${suffix}In`]]);
    w.empty('wsdl:output', [['message', `tns:${op.name}${suffix}Out`]]);
    w.close();
  }
  w.close();
}

function writeSoapBinding(w: XmlWriter, endpoint: ServiceEndpoint, prefix: 'soap' | 'soap12'): void {
  const name = `${endpoint.definition.serviceName}${prefix === 'soap' ? 'Soap' : 'Soap12'}`;
  w.open('wsdl:binding', [['name', name], ['type', `tns:${endpoint.definition.serviceName}Soap`]]);
  w.empty(`${prefix}:binding`, [['transport', HTTP_TRANSPORT]]);
  for (const op of endpoint.operations) {
    w.open('wsdl:operation', [['name', op.name]]);
    w.empty(`${prefix}:operation`, [['soapAction', endpoint.action(op)], ['style', 'document']]);
    w.open('wsdl:input').empty(`${prefix}:body`, [['use', 'literal']]).close();
    w.open('wsdl:output').empty(`${prefix}:body`, [['use', 'literal']]).close();
    w.close();
  }
  w.close();
}

function writeHttpBinding(w: XmlWriter, endpoint: ServiceEndpoint, verb: 'GET' | 'POST'): void {
  const suffix = verb === 'GET' ? 'HttpGet' : 'HttpPost';
  w.open('wsdl:binding', [['name', `${endpoint.definition.serviceName}${suffix}`], ['type', `tns:${endpoint.definition.serviceName}${suffix}`]]);
  w.empty('http:binding', [['verb', verb]]);
  for (const op of endpoint.operations) {
    w.open('wsdl:operation', [['name', op.name]]);
    w.empty('http:operation', [['location', `/${op.name}`]]);
    w.open('wsdl:input');
    if (verb === 'GET') w.empty('http:urlEncoded');
    else w.empty('mime:content', [['type', 'application/x-www-form-urlencoded']]);
    w.close();
    w.open('wsdl:output').empty('mime:mimeXml', [['part', 'Body']]).close();
    w.close();
  }
  w.close();
}

/** The WSDL document of one service; `address` is the absolute URL of the .asmx endpoint. */
export function generateWsdl(endpoint: ServiceEndpoint, address: string): string {
  const w = new XmlWriter(true).declaration();
  const svc = endpoint.definition.serviceName;
  w.open('wsdl:definitions', [
    ['xmlns:soap', NS.soap],
    ['xmlns:tm', NS.tm],
    ['xmlns:soapenc', NS.soapenc],
    ['xmlns:mime', NS.mime],
    ['xmlns:tns', endpoint.namespace],
    ['xmlns:s', NS.s],
    ['xmlns:soap12', NS.soap12],
    ['xmlns:http', NS.http],
    ['targetNamespace', endpoint.namespace],
    ['xmlns:wsdl', NS.wsdl],
  ]);
  writeTypes(w, endpoint);
  for (const op of endpoint.operations) writeMessages(w, op);
  writePortType(w, endpoint, 'Soap');
  writePortType(w, endpoint, 'HttpGet');
  writePortType(w, endpoint, 'HttpPost');
  writeSoapBinding(w, endpoint, 'soap');
  writeSoapBinding(w, endpoint, 'soap12');
  writeHttpBinding(w, endpoint, 'GET');
  writeHttpBinding(w, endpoint, 'POST');
  w.open('wsdl:service', [['name', svc]]);
  for (const [port, prefix] of [['Soap', 'soap'], ['Soap12', 'soap12'], ['HttpGet', 'http'], ['HttpPost', 'http']] as const) {
    w.open('wsdl:port', [['name', `${svc}${port}`], ['binding', `tns:${svc}${port}`]]);
    w.empty(`${prefix}:address`, [['location', address]]);
    w.close();
  }
  w.close().close();
  return w.toString();
}

/** The DISCO document ASMX serves for `?disco`. */
export function generateDisco(endpoint: ServiceEndpoint, address: string): string {
  const w = new XmlWriter(true).declaration();
  w.open('discovery', [
    ['xmlns:xsd', 'http://www.w3.org/2001/XMLSchema'],
    ['xmlns:xsi', 'http://www.w3.org/2001/XMLSchema-instance'],
    ['xmlns', 'http://schemas.xmlsoap.org/disco/'],
  ]);
  w.empty('contractRef', [['ref', `${address}?wsdl`], ['docRef', address], ['xmlns', 'http://schemas.xmlsoap.org/disco/scl/']]);
  const svc = endpoint.definition.serviceName;
  for (const [i, port] of (['Soap', 'Soap12'] as const).entries()) {
    const q = `q${i + 1}`;
    w.empty('soap', [['address', address], [`xmlns:${q}`, endpoint.namespace], ['binding', `${q}:${svc}${port}`], ['xmlns', 'http://schemas.xmlsoap.org/disco/soap/']]);
  }
  w.close();
  return w.toString();
}

import type { OperationDeclaration } from '../../../catalogue/operation.js';
import { RESULT_CODECS } from '../../../results/index.js';
import { optional, required } from '../../../results/xsd.js';
import type { ServiceEndpoint } from '../service-endpoints.js';
import { XmlWriter, type Attributes } from '../../../xml/xml-writer.js';

/**
 * The WSDL of a service, with the structure ASMX generates (compat-notes "WSDL (as ASMX generates
 * it)"): document/literal wrapped types, SOAP/HttpGet/HttpPost messages, three port types, four
 * bindings and four ports. Generated from the catalogue and the result codecs, nothing hand-kept.
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
    const codec = RESULT_CODECS[op.resultType];
    w.empty('s:element', optional(`${op.name}Result`, codec.xsdType));
    w.close().close().close();
    for (const type of codec.schemaTypes) {
      if (declared.has(type.name)) continue;
      declared.add(type.name);
      type.write(w);
    }
  }
  // Root elements of the GET/POST responses, appended as ASMX does.
  for (const type of new Set(endpoint.operations.map((op) => op.resultType))) {
    const codec = RESULT_CODECS[type];
    w.empty('s:element', [['name', codec.xmlName], ['nillable', 'true'], ['type', codec.xsdType]]);
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
    w.open('wsdl:message', [['name', `${op.name}${verb}Out`]]).empty('wsdl:part', [['name', 'Body'], ['element', `tns:${RESULT_CODECS[op.resultType].xmlName}`]]).close();
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

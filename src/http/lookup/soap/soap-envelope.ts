import type { OperationDeclaration } from '../../../catalogue/operation.js';
import type { LookupResult } from '../../../results/result-documents.js';
import { writeResultElement } from '../result-encoder.js';
import { isNil, type XmlElement } from '../../../xml/xml-reader.js';
import { XmlWriter } from '../../../xml/xml-writer.js';

export const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';
export const XSD_NS = 'http://www.w3.org/2001/XMLSchema';

export type SoapVersion = '1.1' | '1.2';

export const SOAP_CONTENT_TYPE: Readonly<Record<SoapVersion, string>> = {
  '1.1': 'text/xml; charset=utf-8',
  '1.2': 'application/soap+xml; charset=utf-8',
};

/** A request the SOAP layer refuses before any operation runs; carries its HTTP status. */
export class SoapRequestError extends Error {
  override readonly name = 'SoapRequestError';
  constructor(
    readonly status: number,
    readonly faultCode: 'Client' | 'Server' | 'VersionMismatch',
    message: string,
  ) {
    super(message);
  }
}

export interface SoapEnvelope {
  readonly version: SoapVersion;
  /** First element child of Body: the operation element. */
  readonly operation: XmlElement;
}

/** Checks the parsed document is a SOAP envelope and finds the operation element in its Body. */
export function readEnvelope(root: XmlElement): SoapEnvelope {
  if (root.local !== 'Envelope' || (root.uri !== SOAP11_NS && root.uri !== SOAP12_NS)) {
    const shown = root.uri === '' ? root.local : `{${root.uri}}${root.local}`;
    throw new SoapRequestError(400, 'Client', `The request is not a SOAP envelope: the root element is ${shown}, expected Envelope in ${SOAP11_NS} or ${SOAP12_NS}`);
  }
  const version: SoapVersion = root.uri === SOAP11_NS ? '1.1' : '1.2';
  const body = root.children.find((c) => c.uri === root.uri && c.local === 'Body');
  if (!body) throw new SoapRequestError(400, 'Client', 'The SOAP envelope has no Body');
  const operation = body.children[0];
  if (!operation) throw new SoapRequestError(400, 'Client', 'The SOAP Body is empty: expected the operation element');
  return { version, operation };
}

/**
 * Parameter values by name: direct children of the operation element matched by local name AND
 * the service namespace, in any order, or by one of the parameter's aliases when it is absent;
 * unknown elements are ignored, a missing or nil one is undefined (compat-notes "SOAP requests and
 * responses").
 */
export function readParameters(element: XmlElement, op: OperationDeclaration, namespace: string): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = Object.create(null) as Record<string, string | undefined>;
  for (const param of op.parameters) {
    let child = element.children.find((c) => c.local === param.name && c.uri === namespace);
    for (const alias of param.aliases ?? []) child ??= element.children.find((c) => c.local === alias && c.uri === namespace);
    values[param.name] = child === undefined || isNil(child) ? undefined : child.text;
  }
  return values;
}

function envelopeOpen(w: XmlWriter, version: SoapVersion): void {
  w.declaration().open('soap:Envelope', [
    ['xmlns:soap', version === '1.1' ? SOAP11_NS : SOAP12_NS],
    ['xmlns:xsi', XSI_NS],
    ['xmlns:xsd', XSD_NS],
  ]);
  w.open('soap:Body');
}

/** `<{Op}Response xmlns="{ns}"><{Op}Result>...` in one line, as ASMX writes it. */
export function writeSoapResponse(version: SoapVersion, op: OperationDeclaration, namespace: string, result: LookupResult, indent = false): string {
  const w = new XmlWriter(indent);
  envelopeOpen(w, version);
  w.open(`${op.name}Response`, [['xmlns', namespace]]);
  writeResultElement(w, `${op.name}Result`, [], result, 'soap');
  w.close().close().close();
  return w.toString();
}

/** SOAP 1.1 faultcode / SOAP 1.2 Code value for a fault kind. */
function faultCode(version: SoapVersion, kind: SoapRequestError['faultCode']): string {
  if (kind === 'VersionMismatch') return 'soap:VersionMismatch';
  if (version === '1.1') return `soap:${kind}`;
  return kind === 'Client' ? 'soap:Sender' : 'soap:Receiver';
}

/** A fault in the shape compat-notes records for each version. */
export function writeSoapFault(version: SoapVersion, kind: SoapRequestError['faultCode'], message: string): string {
  const w = new XmlWriter(false);
  envelopeOpen(w, version);
  w.open('soap:Fault');
  if (version === '1.1') {
    w.leaf('faultcode', faultCode(version, kind)).leaf('faultstring', message).empty('detail');
  } else {
    w.open('soap:Code').leaf('soap:Value', faultCode(version, kind)).close();
    w.open('soap:Reason').leaf('soap:Text', message, [['xml:lang', 'en']]).close();
    w.empty('soap:Detail');
  }
  w.close().close().close();
  return w.toString();
}

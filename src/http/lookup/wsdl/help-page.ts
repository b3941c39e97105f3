import type { OperationDeclaration } from '../../../catalogue/operation.js';
import { sampleOf } from '../../../results/index.js';
import { writeHttpResult } from '../asmx-http/asmx-http.plugin.js';
import type { ServiceEndpoint } from '../service-endpoints.js';
import { SOAP11_NS, SOAP12_NS, writeSoapResponse, XSD_NS, XSI_NS, type SoapVersion } from '../soap/soap-envelope.js';
import { XmlWriter } from '../../../xml/xml-writer.js';

/**
 * The ASMX-style help pages: a list of operations, and per operation sample requests and responses
 * for the four bindings plus a form that invokes it over HTTP GET.
 */

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** Placeholder values, as the original help pages show them. */
const placeholder = (xmlType: string): string => (xmlType === 's:int' ? 'int' : 'string');

function soapRequest(endpoint: ServiceEndpoint, op: OperationDeclaration, version: SoapVersion): string {
  const w = new XmlWriter(true).declaration();
  w.open('soap:Envelope', [['xmlns:xsi', XSI_NS], ['xmlns:xsd', XSD_NS], ['xmlns:soap', version === '1.1' ? SOAP11_NS : SOAP12_NS]]);
  w.open('soap:Body').open(op.name, [['xmlns', endpoint.namespace]]);
  for (const p of op.parameters) w.leaf(p.name, placeholder(p.xmlType));
  w.close().close().close();
  return w.toString();
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1d2b3a}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #d5dde6}
pre{background:#f3f5f8;padding:.8rem;overflow-x:auto;font-size:.85rem}
table{border-collapse:collapse}td,th{padding:.3rem .6rem;text-align:left;border-bottom:1px solid #e5e9ef}
.hl{color:#0b5cad}
body{overflow-wrap:break-word}code{overflow-wrap:anywhere}input{max-width:100%}
@media (max-width:40rem){form table,form tbody,form tr,form td{display:block}form tr:first-child{display:none}form td{padding:.1rem 0;border:0}form tr{padding:.4rem 0;border-bottom:1px solid #e5e9ef}}
</style></head><body>
${body}
</body></html>
`;
}

/** `GET /api/{service}.asmx`: the service and its operations. */
export function renderServicePage(endpoint: ServiceEndpoint, address: string, notice?: string): string {
  const rows = endpoint.operations
    .map((op) => `<li><a href="?op=${encodeURIComponent(op.name)}">${escapeHtml(op.name)}</a><br>${escapeHtml(op.documentation)}</li>`)
    .join('\n');
  return page(
    endpoint.definition.serviceName,
    `<h1>${escapeHtml(endpoint.definition.serviceName)}</h1>
${notice === undefined ? '' : `<p><strong>${escapeHtml(notice)}</strong></p>`}
<p>The following operations are supported. For a formal definition, please review the <a href="${escapeHtml(address)}?WSDL">Service Description</a>.</p>
<p>Namespace: <code>${escapeHtml(endpoint.namespace)}</code></p>
<ul>
${rows}
</ul>`,
  );
}

/** `GET /api/{service}.asmx?op={Operation}`: samples for all four bindings and a test form. */
export function renderOperationPage(endpoint: ServiceEndpoint, op: OperationDeclaration, address: string): string {
  const path = endpoint.definition.path;
  const host = new URL(address).host;
  const query = op.parameters.map((p) => `${p.name}=${placeholder(p.xmlType)}`).join('&');
  // A result with one of everything, encoded by the real encoders so the samples cannot drift.
  const sample = sampleOf(op.resultType);
  const httpResponse = writeHttpResult(sample, endpoint.namespace);
  const soap11Request = soapRequest(endpoint, op, '1.1');
  const soap12Request = soapRequest(endpoint, op, '1.2');
  const inputs = op.parameters
    .map(
      (p) => `<tr><td><label for="p-${escapeHtml(p.name)}">${escapeHtml(p.name)}</label></td><td><input id="p-${escapeHtml(p.name)}" name="${escapeHtml(p.name)}" type="text"${p.required ? ' required' : ''}></td><td>${escapeHtml(p.description)}</td></tr>`,
    )
    .join('\n');
  const block = (text: string): string => `<pre>${escapeHtml(text)}</pre>`;
  return page(
    `${endpoint.definition.serviceName}: ${op.name}`,
    `<p><a href="${escapeHtml(path)}">${escapeHtml(endpoint.definition.serviceName)}</a></p>
<h1>${escapeHtml(op.name)}</h1>
<p>${escapeHtml(op.documentation)}</p>
<p>Costs ${op.cost} credit${op.cost === 1 ? '' : 's'} when it succeeds; a failed lookup costs nothing.</p>
<h2>Test</h2>
<p>To test the operation using the HTTP GET protocol, fill in the parameters and click Invoke.</p>
<form action="${escapeHtml(`${path}/${op.name}`)}" method="GET">
<table>
<tr><th>Parameter</th><th>Value</th><th></th></tr>
${inputs}
</table>
<p><button type="submit">Invoke</button></p>
</form>
<h2>SOAP 1.1</h2>
<p>The following is a sample SOAP 1.1 request and response. The placeholders shown need to be replaced with actual values.</p>
${block(`POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: length\r\nSOAPAction: "${endpoint.action(op)}"\r\n\r\n${soap11Request}`)}
${block(`HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: length\r\n\r\n${writeSoapResponse('1.1', op, endpoint.namespace, sample, true)}`)}
<h2>SOAP 1.2</h2>
<p>The following is a sample SOAP 1.2 request and response. The placeholders shown need to be replaced with actual values.</p>
${block(`POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/soap+xml; charset=utf-8\r\nContent-Length: length\r\n\r\n${soap12Request}`)}
${block(`HTTP/1.1 200 OK\r\nContent-Type: application/soap+xml; charset=utf-8\r\nContent-Length: length\r\n\r\n${writeSoapResponse('1.2', op, endpoint.namespace, sample, true)}`)}
<h2>HTTP GET</h2>
<p>The following is a sample HTTP GET request and response. The placeholders shown need to be replaced with actual values.</p>
${block(`GET ${path}/${op.name}?${query} HTTP/1.1\r\nHost: ${host}`)}
${block(`HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: length\r\n\r\n${httpResponse}`)}
<h2>HTTP POST</h2>
<p>The following is a sample HTTP POST request and response. The placeholders shown need to be replaced with actual values.</p>
${block(`POST ${path}/${op.name} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: length\r\n\r\n${query}`)}
${block(`HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: length\r\n\r\n${httpResponse}`)}`,
  );
}

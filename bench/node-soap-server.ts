/**
 * The comparison of `npm run bench:soap`: the `soap` package (node-soap) serving the same
 * operation from the service's own WSDL, on a plain node:http server, answering from an in-memory
 * Map. No auth, no credits, no storage: only node-soap's envelope parsing, dispatch and
 * serialisation, which is what our hand-written SOAP layer replaces.
 *
 * Environment (all set by bench/soap-lookup.bench.ts):
 * - NODE_SOAP_HOST, NODE_SOAP_PORT: where to listen.
 * - NODE_SOAP_PATH: the endpoint, e.g. /api/reg.asmx.
 * - NODE_SOAP_WSDL_FILE: the WSDL (as the service serves it at `?WSDL`).
 * - NODE_SOAP_SERVICE, NODE_SOAP_PORT_NAME, NODE_SOAP_OPERATION: e.g. CarReg, CarRegSoap, CheckUSA.
 * - NODE_SOAP_DATA_FILE: JSON array of `{ key, result }`, `key` being the operation's key
 *   parameters in order (e.g. RegistrationNumber and State) and `result` the `{Op}Response`
 *   object, e.g. `{ CheckUSAResult: { vehicleJson, vehicleData: { ... } } }`.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { inspect } from 'node:util';
import * as soap from 'soap';

const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

interface Entry {
  readonly key: readonly string[];
  readonly result: unknown;
}

/** The Map key of a request: its key parameters, as sent. */
function entryKey(values: readonly string[]): string {
  return values.join('\u0000');
}

async function main(): Promise<void> {
  const host = required('NODE_SOAP_HOST');
  const port = Number(required('NODE_SOAP_PORT'));
  const path = required('NODE_SOAP_PATH');
  const wsdl = readFileSync(required('NODE_SOAP_WSDL_FILE'), 'utf8');
  const serviceName = required('NODE_SOAP_SERVICE');
  const portName = required('NODE_SOAP_PORT_NAME');
  const operation = required('NODE_SOAP_OPERATION');
  const keyParameters = required('NODE_SOAP_KEY_PARAMETERS').split(',');
  const entries = JSON.parse(readFileSync(required('NODE_SOAP_DATA_FILE'), 'utf8')) as Entry[];

  const store = new Map<string, unknown>();
  for (const entry of entries) store.set(entryKey(entry.key), entry.result);

  const lookup = (args: Record<string, unknown>): unknown => {
    const values = keyParameters.map((name) => {
      const value = args[name];
      return typeof value === 'string' ? value : '';
    });
    const found = store.get(entryKey(values));
    if (found === undefined) {
      // node-soap turns a thrown { Fault } into a SOAP fault with status 500.
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      throw { Fault: { faultcode: 'soap:Client', faultstring: `No vehicle found for ${values.join(' ')}` } };
    }
    return found;
  };

  const httpServer = createServer((_request, response) => {
    // node-soap answers its own path; everything else is not ours.
    response.statusCode = 404;
    response.end();
  });
  const services: soap.IServices = { [serviceName]: { [portName]: { [operation]: lookup } } };
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, host, () => {
      resolve();
    });
  });
  // No `log` function is set, so node-soap logs nothing per request.
  await new Promise<void>((resolve, reject) => {
    soap.listen(httpServer, path, services, wsdl, (error: unknown, server: soap.Server) => {
      if (error !== null && error !== undefined) {
        reject(error instanceof Error ? error : new Error(inspect(error)));
        return;
      }
      // node-soap 1.13 writes `xsi:nil="true"` for a null value but declares no xsi prefix: its
      // envelope lists only the WSDL's own namespaces, skipping every w3.org one. Without the
      // declaration below its answer is not namespace-well-formed XML (a namespace-aware parser,
      // ours included, rejects it). Declared once at start-up; no cost per request.
      (server as unknown as { wsdl: soap.WSDL }).wsdl.xmlnsInEnvelope += ` xmlns:xsi="${XSI_NS}"`;
      resolve();
    });
  });

  const stop = (): void => {
    httpServer.close(() => process.exit(0));
    httpServer.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error('node-soap-server failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});

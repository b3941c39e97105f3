import { Catalogue } from '../src/catalogue/catalogue.js';
import { renderOperationsMarkdown } from '../src/catalogue/catalogue-docs.js';
import { SERVICES } from '../src/catalogue/services.js';
import { renderOpenApi } from '../src/http/lookup/json/openapi-document.js';
import { serviceEndpoints } from '../src/http/lookup/service-endpoints.js';
import { generateWsdl } from '../src/http/lookup/wsdl/wsdl-generator.js';

/** A committed file generated from the code; CI fails when the committed copy is stale (STYLE.md 14). */
export interface GeneratedArtefact {
  /** Path relative to the repository root. */
  readonly path: string;
  render(): string;
}

/** The address the committed WSDL snapshots carry: the default local service. */
export const SNAPSHOT_BASE_URL = 'http://localhost:8080';

export function generatedArtefacts(): GeneratedArtefact[] {
  const catalogue = new Catalogue();
  const endpoints = serviceEndpoints(catalogue, { reg: SERVICES.reg.defaultNamespace, bespoke: SERVICES.bespoke.defaultNamespace });
  return [
    { path: 'docs/operations.md', render: () => renderOperationsMarkdown(catalogue) },
    ...endpoints.map((endpoint) => ({
      path: `docs/wsdl/${endpoint.definition.path.split('/').at(-1) ?? endpoint.definition.id}.wsdl`,
      render: () => generateWsdl(endpoint, `${SNAPSHOT_BASE_URL}${endpoint.definition.path}`),
    })),
    // The same text the service serves at /openapi/lookup.json: its server URL is relative.
    { path: 'docs/openapi/lookup.json', render: () => renderOpenApi(catalogue) },
  ];
}

import { OPENAPI_PATHS } from '../lookup/json/openapi.plugin.js';
import { DEMO_EXAMPLE_PATH } from '../../bootstrap/seed.js';
import { html } from '../console/html.js';
import { page } from '../console/layout.js';
import { signupLink } from '../console/signup-pages.js';


/** A SOAP service the front page links to. */
export interface ServiceLink {
  readonly name: string;
  readonly path: string;
}

export interface FrontPageInput {
  readonly version: string;
  /** The public base URL (BASE_URL, or the request's scheme and host) for the addresses shown. */
  readonly baseUrl: string;
  readonly services: readonly ServiceLink[];
  /** Self-service sign-up is on (SIGNUP_ENABLED): the page links to it. */
  readonly signupEnabled: boolean;
}

/** `/`: what this is and where everything lives. No login, no store access: it is static but for the host. */
export function frontPage(input: FrontPageInput): string {
  const { baseUrl } = input;
  return page(
    'Vehicle lookup service',
    html`<p>A vehicle-data lookup service by registration plate or VIN, wire-compatible with the "Car Registration API"
  (SOAP 1.1 and 1.2, HTTP GET and POST, and JSON). Version <strong>${input.version}</strong>.</p>
<section class="panel" aria-labelledby="soap-services">
  <h2 id="soap-services">SOAP and HTTP GET/POST services</h2>
  <ul class="links">${input.services.map(
    (s) => html`<li><strong>${s.name}</strong>: <a href="${s.path}">help page and operations</a> · <a href="${s.path}?WSDL">WSDL</a>
      <br><code>${baseUrl}${s.path}</code></li>`,
  )}</ul>
</section>
<section class="panel" aria-labelledby="json-interface">
  <h2 id="json-interface">JSON interface</h2>
  <p><code>GET ${baseUrl}/api/json.aspx/{Operation}/{value}</code> with HTTP Basic authentication (user name and API key), for example:</p>
  <pre><code>curl -u USERNAME:API_KEY ${baseUrl}${DEMO_EXAMPLE_PATH}</code></pre>
  <p><a href="${OPENAPI_PATHS.page}">Interactive documentation of the JSON interface</a> (its <a href="${OPENAPI_PATHS.document}">OpenAPI 3.1 document</a>); the admin and account API: <a href="/admin/api/docs">documentation</a>.</p>
</section>
<section class="panel" aria-labelledby="accounts">
  <h2 id="accounts">Accounts</h2>
  <ul class="links">
    <li><a href="/console/login">Console login</a>: customers see their balance, usage, ledger and API keys; operators manage accounts.</li>
    ${input.signupEnabled ? html`<li>${signupLink('Sign up')} for an account of your own.</li>` : ''}
    <li><a href="/admin/api/docs">Admin and account API documentation</a></li>
  </ul>
</section>
<section class="panel" aria-labelledby="operations">
  <h2 id="operations">Operations</h2>
  <ul class="links"><li><a href="/healthz">/healthz</a>: liveness</li><li><a href="/readyz">/readyz</a>: readiness</li></ul>
</section>`,
  );
}

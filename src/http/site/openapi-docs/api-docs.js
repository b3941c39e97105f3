/* global document, fetch, btoa, TextEncoder, URL, URLSearchParams */
// The interactive page of an OpenAPI document (openapi-docs-page.ts), for the JSON interface's
// document and the admin and account APIs' alike: every operation by tag with its parameters,
// body and answers, a filter, and a form that sends a GET operation. Plain DOM, no dependencies,
// no network but the service's own origin, and no inline script or style, so the page works
// offline under the strict Content-Security-Policy it is served with. Text is set with
// textContent only: nothing from the document or an answer is parsed as HTML.

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

/**
 * The Markdown the documents use in their text, inline code between backticks, as nodes: text
 * nodes and <code> elements, never parsed as HTML (a description is shown as it is written).
 */
function inline(text) {
  return String(text ?? '').split(/`([^`]+)`/).map((part, i) => (i % 2 === 1 ? el('code', {}, part) : part)).filter((node) => node !== '');
}

/** `#/components/...` references of the document itself, the only kind it uses. */
function resolve(doc, value) {
  if (!value || typeof value.$ref !== 'string' || !value.$ref.startsWith('#/')) return value;
  return value.$ref.slice(2).split('/').reduce((at, key) => (at === undefined ? undefined : at[key]), doc);
}

/** HTTP Basic with UTF-8 credentials (RFC 7617 charset="UTF-8", as the service's challenge says). */
function basic(username, password) {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/** Whether the document authenticates with HTTP Basic (the JSON interface): the page then asks for credentials. */
function usesBasic(doc) {
  return Object.values(doc.components?.securitySchemes ?? {}).some((scheme) => scheme.type === 'http' && scheme.scheme === 'basic');
}

function securityText(doc, operation) {
  const security = operation.security ?? doc.security;
  if (!Array.isArray(security) || security.length === 0) return 'public: no credentials';
  return security.map((alternative) => Object.keys(alternative).join(' + ')).join(' or ');
}

/** A schema's rules as nodes: text, and the pattern as code (a regular expression, not Markdown). */
function schemaNodes(schema) {
  const rules = [];
  if (schema.type) rules.push([Array.isArray(schema.type) ? schema.type.join(' or ') : schema.type]);
  if (Array.isArray(schema.enum)) rules.push([`one of ${schema.enum.join(', ')}`]);
  if (schema.pattern) rules.push(['pattern ', el('code', {}, schema.pattern)]);
  if (schema.minLength !== undefined) rules.push([`at least ${schema.minLength} character(s)`]);
  if (schema.maxLength !== undefined) rules.push([`at most ${schema.maxLength} character(s)`]);
  if (schema.minimum !== undefined) rules.push([`from ${schema.minimum}`]);
  if (schema.maximum !== undefined) rules.push([`to ${schema.maximum}`]);
  return rules.flatMap((rule, i) => (i === 0 ? rule : ['; ', ...rule]));
}

/** An input for a parameter, filled with the document's example (a sample record's value) if any. */
function parameterInput(id, parameter) {
  const schema = parameter.schema ?? {};
  if (Array.isArray(schema.enum)) {
    const options = schema.enum.map((value) => el('option', { value: String(value) }, String(value)));
    const select = el('select', { id, name: parameter.name }, ...(parameter.required ? [] : [el('option', { value: '' }, '')]), ...options);
    if (parameter.example !== undefined) select.value = String(parameter.example);
    return select;
  }
  const input = el('input', { id, name: parameter.name, type: 'text', autocomplete: 'off', spellcheck: 'false' });
  if (parameter.required) input.setAttribute('required', '');
  if (parameter.example !== undefined) input.value = String(parameter.example);
  return input;
}

/** The form that sends a GET operation and shows the answer. */
function tryForm(server, path, operation, credentials) {
  const form = el('form', { class: 'try' });
  const fields = (operation.parameters ?? []).map((parameter, i) => {
    const id = `${operation.operationId}-${i}`;
    const input = parameterInput(id, parameter);
    // Only the description is Markdown; the schema's pattern is shown as code as it is.
    const parts = [parameter.in === 'query' ? ['query'] : [], inline(parameter.description), schemaNodes(parameter.schema ?? {})].filter((nodes) => nodes.length > 0);
    const hint = parts.flatMap((nodes, i) => (i === 0 ? nodes : ['. ', ...nodes]));
    form.append(el('label', { for: id }, el('code', {}, parameter.name)), input, el('p', { class: 'hint' }, ...hint));
    return { parameter, input };
  });
  const output = el('pre', { class: 'answer', 'aria-live': 'polite' });
  form.append(el('button', { type: 'submit' }, 'Send'), output);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let url = `${server}${path}`;
    const query = new URLSearchParams();
    for (const { parameter, input } of fields) {
      if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(input.value));
      else if (parameter.in === 'query' && input.value !== '') query.append(parameter.name, input.value);
    }
    if ([...query.keys()].length > 0) url = `${url}?${query.toString()}`;
    const headers = {};
    if (credentials && credentials.username.value !== '') headers.authorization = basic(credentials.username.value, credentials.password.value);
    output.textContent = `GET ${url}\n...`;
    // The admin and account APIs authenticate with the browser's session cookie: same origin only.
    // The JSON interface authenticates with the typed credentials alone: 'omit', since with any
    // other mode a 401's `WWW-Authenticate: Basic` makes the browser raise its own sign-in prompt
    // (Fetch standard, HTTP-network-or-cache fetch), and the answer would never show.
    fetch(url, { headers, credentials: credentials ? 'omit' : 'same-origin' })
      .then(async (response) => {
        const shown = ['content-type', 'x-credits-charged', 'x-credits-remaining', 'www-authenticate', 'retry-after']
          .filter((name) => response.headers.has(name))
          .map((name) => `${name}: ${response.headers.get(name)}`);
        let body = await response.text();
        if ((response.headers.get('content-type') ?? '').startsWith('application/json')) body = JSON.stringify(JSON.parse(body), null, 2);
        output.textContent = [`GET ${url}`, `${response.status} ${response.statusText}`, ...shown, '', body].join('\n');
      })
      .catch((error) => {
        output.textContent = `GET ${url}\nThe request failed: ${error.message}`;
      });
  });
  return form;
}

function parameterTable(parameters) {
  const rows = parameters.map((p) =>
    el('tr', {}, el('td', {}, el('code', {}, p.name)), el('td', {}, p.in), el('td', {}, p.required ? 'required' : 'optional'), el('td', {}, ...schemaNodes(p.schema ?? {}))),
  );
  return el('table', {}, el('tr', {}, el('th', {}, 'name'), el('th', {}, 'in'), el('th', {}, ''), el('th', {}, 'schema')), ...rows);
}

function answers(doc, operation) {
  const list = el('dl', { class: 'answers' });
  for (const [status, reference] of Object.entries(operation.responses ?? {})) {
    const response = resolve(doc, reference) ?? {};
    const detail = el('dd', {}, ...inline(response.description));
    for (const [type, media] of Object.entries(response.content ?? {})) {
      detail.append(el('details', {}, el('summary', {}, type), el('pre', {}, JSON.stringify(resolve(doc, media.schema) ?? {}, null, 2))));
    }
    const headerNames = Object.keys(response.headers ?? {});
    if (headerNames.length > 0) detail.append(el('p', { class: 'hint' }, `Headers: ${headerNames.join(', ')}`));
    list.append(el('dt', {}, status), detail);
  }
  return list;
}

function operationSection(doc, server, path, method, operation, credentials) {
  const id = operation.operationId ?? `${method}-${path}`;
  const section = el(
    'details',
    { class: 'operation', id, 'data-search': `${id} ${method} ${path} ${operation.summary ?? ''}`.toLowerCase() },
    el('summary', {}, el('span', { class: `verb ${method}` }, method.toUpperCase()), ' ', el('code', {}, `${server}${path}`), ' ', el('span', { class: 'hint' }, ...inline(operation.summary))),
  );
  if (operation.description) section.append(el('p', {}, ...inline(operation.description)));
  section.append(el('p', { class: 'security' }, `Authentication: ${securityText(doc, operation)}`));
  const parameters = operation.parameters ?? [];
  if (method === 'get') {
    section.append(tryForm(server, path, operation, credentials));
  } else if (parameters.length > 0) {
    section.append(el('h3', {}, 'Parameters'), parameterTable(parameters));
  }
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (body) section.append(el('h3', {}, 'Body (application/json)'), el('pre', { class: 'schema' }, JSON.stringify(resolve(doc, body) ?? {}, null, 2)));
  section.append(el('h3', {}, 'Answers'), answers(doc, operation));
  return section;
}

function render(root, doc, source) {
  // Paths are relative to the first server's URL (the JSON interface's `/api/json.aspx`), or to the
  // origin; a path with servers of its own (the balance page, at the site's root) to its first.
  const serverOf = (servers) => (servers?.[0]?.url ? new URL(servers[0].url, document.baseURI).pathname.replace(/\/$/, '') : '');
  const server = serverOf(doc.servers);
  document.title = doc.info?.title ?? document.title;
  const filter = el('input', { id: 'filter', type: 'search', placeholder: 'Filter operations', autocomplete: 'off', 'aria-label': 'Filter operations' });
  root.replaceChildren(el('h1', {}, doc.info?.title ?? 'API'), el('p', {}, ...inline(doc.info?.description)), el('p', {}, 'The document: ', el('a', { href: source }, source)));
  let credentials;
  if (usesBasic(doc)) {
    credentials = {
      username: el('input', { id: 'username', type: 'text', autocomplete: 'username' }),
      password: el('input', { id: 'password', type: 'password', autocomplete: 'current-password' }),
    };
    root.append(
      el(
        'fieldset',
        { class: 'credentials' },
        el('legend', {}, 'Credentials (HTTP Basic, sent only to this service)'),
        el('label', { for: 'username' }, 'Username'),
        credentials.username,
        el('label', { for: 'password' }, 'API key'),
        credentials.password,
      ),
    );
  }
  root.append(filter);
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'other';
      if (!byTag.has(tag)) byTag.set(tag, el('section', { class: 'tag' }, el('h2', {}, tag)));
      byTag.get(tag).append(operationSection(doc, item.servers ? serverOf(item.servers) : server, path, method, operation, credentials));
    }
  }
  const list = el('div', { class: 'operations' }, ...byTag.values());
  root.append(list);
  filter.addEventListener('input', () => {
    const wanted = filter.value.trim().toLowerCase();
    for (const group of list.children) {
      let shown = 0;
      for (const node of group.querySelectorAll('.operation')) {
        node.hidden = wanted !== '' && !node.dataset.search.includes(wanted);
        if (!node.hidden) shown += 1;
      }
      group.hidden = shown === 0;
    }
  });
}

const root = document.getElementById('api-docs');
if (root) {
  const source = root.getAttribute('data-openapi') ?? '';
  fetch(source, { credentials: 'same-origin' })
    .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`${source}: HTTP ${response.status}`))))
    .then((doc) => {
      render(root, doc, source);
    })
    .catch((error) => {
      root.replaceChildren(el('p', { class: 'error' }, `The API description could not be loaded: ${error instanceof Error ? error.message : String(error)}`));
    });
}

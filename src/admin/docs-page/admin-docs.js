/* global document, fetch */
// The documentation page of the admin and account APIs (openapi-document.ts docsPage): every
// operation of the OpenAPI document with its parameters, body and answers. Plain DOM, no
// dependencies, no network but the service's own origin, and no inline script or style, so the
// page works offline under the strict Content-Security-Policy it is served with. Text is set with
// textContent only: nothing from the document is parsed as HTML.

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

/** `#/components/...` references of the document itself, the only kind it uses. */
function resolve(doc, value) {
  if (!value || typeof value.$ref !== 'string' || !value.$ref.startsWith('#/')) return value;
  return value.$ref.slice(2).split('/').reduce((at, key) => (at === undefined ? undefined : at[key]), doc);
}

function schemaBlock(doc, schema) {
  return el('pre', { class: 'schema' }, JSON.stringify(resolve(doc, schema) ?? {}, null, 2));
}

function securityText(security) {
  if (!Array.isArray(security) || security.length === 0) return 'public: no login';
  return security.map((alternative) => Object.keys(alternative).join(' + ')).join(' or ');
}

function operationSection(doc, path, method, operation) {
  const section = el('section', { class: 'operation', id: `${method}-${path}` });
  section.append(el('h3', {}, el('span', { class: `method ${method}` }, method.toUpperCase()), ' ', el('code', {}, path)));
  if (operation.summary) section.append(el('p', {}, operation.summary));
  section.append(el('p', { class: 'security' }, `Authentication: ${securityText(operation.security)}`));
  const parameters = operation.parameters ?? [];
  if (parameters.length > 0) {
    const rows = parameters.map((p) =>
      el('tr', {}, el('td', {}, el('code', {}, p.name)), el('td', {}, p.in), el('td', {}, p.required ? 'required' : 'optional'), el('td', {}, JSON.stringify(p.schema ?? {}))),
    );
    section.append(el('h4', {}, 'Parameters'), el('table', {}, el('tr', {}, el('th', {}, 'name'), el('th', {}, 'in'), el('th', {}, ''), el('th', {}, 'schema')), ...rows));
  }
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (body) section.append(el('h4', {}, 'Body (application/json)'), schemaBlock(doc, body));
  const responses = Object.entries(operation.responses ?? {});
  if (responses.length > 0) {
    section.append(el('h4', {}, 'Answers'));
    for (const [status, response] of responses) {
      const resolved = resolve(doc, response) ?? {};
      section.append(el('p', {}, el('code', {}, status), ' ', resolved.description ?? ''));
      const schema = resolved.content?.['application/json']?.schema;
      if (schema) section.append(schemaBlock(doc, schema));
    }
  }
  return section;
}

function render(root, doc) {
  root.replaceChildren(el('h1', {}, doc.info?.title ?? 'API'), el('p', {}, doc.info?.description ?? ''));
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      const tag = operation.tags?.[0] ?? 'other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push(operationSection(doc, path, method, operation));
    }
  }
  for (const [tag, sections] of byTag) root.append(el('h2', {}, tag), ...sections);
}

const root = document.getElementById('api-docs');
if (root) {
  const url = root.getAttribute('data-url') ?? '';
  fetch(url, { credentials: 'same-origin' })
    .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`${url}: HTTP ${response.status}`))))
    .then((doc) => {
      render(root, doc);
    })
    .catch((error) => {
      root.replaceChildren(el('p', { class: 'error' }, `Could not load the API description: ${error instanceof Error ? error.message : String(error)}`));
    });
}

/* global document, fetch, btoa, TextEncoder, URL */
// The interactive page of an OpenAPI document (openapi.plugin.ts): lists every path with its
// parameters and answers, and sends a request with the credentials typed in. Plain DOM, no
// dependencies, no network but the service's own origin, and no inline script or style, so the
// page works offline under a strict Content-Security-Policy. Text is set with textContent only:
// nothing from the document or an answer is parsed as HTML.

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

/** HTTP Basic with UTF-8 credentials (RFC 7617 charset="UTF-8", as the service's challenge says). */
function basic(username, password) {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

/** An input for a path parameter, filled with the document's example (a sample record's value). */
function parameterInput(id, parameter) {
  const schema = parameter.schema ?? {};
  if (Array.isArray(schema.enum)) {
    const select = el('select', { id, name: parameter.name }, ...schema.enum.map((value) => el('option', { value }, value)));
    if (parameter.example !== undefined) select.value = parameter.example;
    return select;
  }
  const input = el('input', { id, name: parameter.name, type: 'text', required: '', autocomplete: 'off', spellcheck: 'false' });
  if (parameter.example !== undefined) input.value = parameter.example;
  return input;
}

function schemaText(schema) {
  const rules = [];
  if (Array.isArray(schema.enum)) rules.push(`one of ${schema.enum.join(', ')}`);
  if (schema.pattern) rules.push(`pattern ${schema.pattern}`);
  if (schema.minLength !== undefined) rules.push(`at least ${schema.minLength} character(s)`);
  return rules.join('; ');
}

function renderOperation(doc, server, path, operation, credentials) {
  const form = el('form', { class: 'try' });
  const fields = (operation.parameters ?? []).map((parameter, i) => {
    const id = `${operation.operationId}-${i}`;
    const input = parameterInput(id, parameter);
    const rules = schemaText(parameter.schema ?? {});
    form.append(
      el('label', { for: id }, el('code', {}, parameter.name)),
      input,
      el('p', { class: 'hint' }, [parameter.description, rules].filter(Boolean).join('. ')),
    );
    return { parameter, input };
  });
  const output = el('pre', { class: 'answer', 'aria-live': 'polite' });
  form.append(el('button', { type: 'submit' }, 'Send'), output);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    let url = `${server}${path}`;
    for (const { parameter, input } of fields) url = url.replace(`{${parameter.name}}`, encodeURIComponent(input.value));
    const headers = {};
    if (credentials.username.value !== '') headers.authorization = basic(credentials.username.value, credentials.password.value);
    output.textContent = `GET ${url}\n...`;
    fetch(url, { headers })
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

  const answers = el('dl', { class: 'answers' });
  for (const [status, reference] of Object.entries(operation.responses ?? {})) {
    const response = resolve(doc, reference) ?? {};
    const detail = el('dd', {}, response.description ?? '');
    for (const [type, media] of Object.entries(response.content ?? {})) {
      const schema = resolve(doc, media.schema);
      const schemaBlock = el('details', {}, el('summary', {}, type), el('pre', {}, JSON.stringify(schema, null, 2)));
      detail.append(schemaBlock);
    }
    const headerNames = Object.keys(response.headers ?? {});
    if (headerNames.length > 0) detail.append(el('p', { class: 'hint' }, `Headers: ${headerNames.join(', ')}`));
    answers.append(el('dt', {}, status), detail);
  }

  return el(
    'details',
    { class: 'operation', id: operation.operationId },
    el('summary', {}, el('span', { class: 'verb' }, 'GET'), ' ', el('code', {}, `${server}${path}`), ' ', el('span', { class: 'hint' }, operation.summary ?? '')),
    el('p', {}, operation.description ?? ''),
    form,
    el('h4', {}, 'Answers'),
    answers,
  );
}

async function main() {
  const root = document.getElementById('api-docs');
  const source = root.dataset.openapi;
  const doc = await (await fetch(source)).json();
  const server = new URL(doc.servers?.[0]?.url ?? '', document.baseURI).pathname.replace(/\/$/, '');

  document.title = doc.info.title;
  const username = el('input', { id: 'username', type: 'text', autocomplete: 'username' });
  const password = el('input', { id: 'password', type: 'password', autocomplete: 'current-password' });
  const filter = el('input', { id: 'filter', type: 'search', placeholder: 'Filter operations', autocomplete: 'off' });
  root.replaceChildren(
    el('h1', {}, doc.info.title),
    el('p', {}, doc.info.description ?? ''),
    el('p', {}, 'The document: ', el('a', { href: source }, source)),
    el(
      'fieldset',
      { class: 'credentials' },
      el('legend', {}, 'Credentials (HTTP Basic, sent only to this service)'),
      el('label', { for: 'username' }, 'Username'),
      username,
      el('label', { for: 'password' }, 'API key'),
      password,
    ),
    filter,
  );
  const list = el('div', { class: 'operations' });
  for (const [path, item] of Object.entries(doc.paths)) {
    list.append(renderOperation(doc, server, path, item.get, { username, password }));
  }
  root.append(list);
  filter.addEventListener('input', () => {
    const wanted = filter.value.trim().toLowerCase();
    for (const node of list.children) node.hidden = wanted !== '' && !node.id.toLowerCase().includes(wanted);
  });
}

main().catch((error) => {
  document.getElementById('api-docs').textContent = `The API description could not be loaded: ${error.message}`;
});

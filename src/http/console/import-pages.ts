import { DEFAULT_SOURCE, IMPORT_MEDIA_TYPES, percentDone, SOURCE_PATTERN } from '../api/imports.routes.js';
import type { ImportJob } from '../../datasets/import/import-jobs.js';
import { html, type Html } from './html.js';
import { csrfField, message, page, when, type Viewer } from './layout.js';
import { atMost, fieldMessage, formMessage, hint, invalidAttrs, typed, type FormError } from './form-errors.js';

/** The console's import pages (issue 18). */
export const IMPORTS_PATH = '/console/admin/imports';
export const importPath = (id: number): string => `${IMPORTS_PATH}/${id}`;

const STATE_TEXT: Readonly<Record<ImportJob['state'], string>> = {
  queued: 'queued',
  validating: 'checking every line',
  importing: 'importing',
  done: 'done',
  failed: 'failed',
};

/** The source rule as an HTML pattern: browsers compile it with the `v` flag, where a class's `-` needs escaping. */
const HTML_SOURCE_PATTERN = SOURCE_PATTERN.slice(1, -1).replace('-]', '\\-]');
/** The longest source name (the API's rule, SOURCE_PATTERN's bound). */
export const SOURCE_MAX = 64;

const finished = (job: ImportJob): boolean => job.state === 'done' || job.state === 'failed';

/** 1536 -> "1.5 KB": file sizes for people (the exact bytes are in the title attribute). */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit] ?? ''}`;
}

function stateBadge(job: ImportJob): Html {
  const css = job.state === 'done' ? 'status-active' : job.state === 'failed' ? 'status-disabled' : '';
  return html`<span class="${css}" data-testid="import-state">${STATE_TEXT[job.state]}</span>`;
}

function jobsTable(jobs: readonly ImportJob[]): Html {
  return html`<div class="table-wrap" role="region" aria-label="Imports table" tabindex="0"><table data-testid="imports">
  <thead><tr><th scope="col">Import</th><th scope="col">File</th><th scope="col" class="num">Size</th><th scope="col">Source</th><th scope="col">Started by</th><th scope="col">State</th><th scope="col" class="num">Imported</th><th scope="col" class="num">Invalid lines</th><th scope="col">Created</th></tr></thead>
  <tbody>${
    jobs.length === 0
      ? html`<tr><td colspan="9" class="muted">No imports yet.</td></tr>`
      : jobs.map(
          (j) =>
            html`<tr><td><a href="${importPath(j.id)}">#${j.id}</a></td><td>${j.fileName}</td><td class="num"><span title="${j.fileSize} bytes">${formatBytes(j.fileSize)}</span></td><td>${j.source}</td><td>${j.startedBy.kind} ${j.startedBy.name}</td><td>${stateBadge(j)}${finished(j) ? '' : html` <span class="muted">${percentDone(j)}%</span>`}</td><td class="num">${j.imported}</td><td class="num">${j.invalid}</td><td>${when(j.createdAt)}</td></tr>`,
        )
  }</tbody>
</table></div>`;
}

/**
 * The upload form. Without JavaScript it posts multipart/form-data here; console.js sends the
 * file to the admin API instead, with a progress bar. The file field comes last: the server reads
 * the CSRF token and the options before the file streams in (src/http/console/import.routes.ts).
 */
function uploadForm(viewer: Viewer, maxBytes: number, error: FormError | undefined): Html {
  return html`<section class="panel" aria-labelledby="upload"><h2 id="upload">Upload a JSON Lines file</h2>
<p class="muted">One record per line, in the format the CLI's <code>import</code> reads (docs/import-format.md), at most ${formatBytes(maxBytes)}. Re-importing a key replaces its record.</p>
<form method="post" action="${IMPORTS_PATH}" enctype="multipart/form-data" data-import-upload="/admin/api/imports" data-import-page="${IMPORTS_PATH}/" data-max-bytes="${maxBytes}">${csrfField(viewer)}${formMessage(error, 'import', ['source'])}
  <div class="row-fields">
  <div><label for="i-source">Source name (stored with every record)</label><input type="text" id="i-source" name="source" value="${typed(error, 'import', 'source', DEFAULT_SOURCE)}" required pattern="${HTML_SOURCE_PATTERN}" title="letters, digits and . _ -"${invalidAttrs(error, 'import', 'source', 'i-source', true)}>${hint('i-source', `letters, digits and . _ -; ${atMost(SOURCE_MAX)}`)}${fieldMessage(error, 'import', 'source', 'i-source')}</div>
  <div class="check"><input type="checkbox" id="i-skip" name="skipInvalid" value="true"><label for="i-skip">Import the valid lines even if some lines are invalid</label></div>
  <div><label for="i-file">File (.jsonl)</label><input type="file" id="i-file" name="file" required accept=".jsonl,.ndjson,.json,.txt,${IMPORT_MEDIA_TYPES.join(',')}"></div>
  </div>
  <p><button type="submit">Upload and import</button></p>
  <div class="upload-progress" hidden><label for="i-progress">Upload</label><progress id="i-progress" max="100" value="0"></progress></div>
  <p class="muted" role="status" aria-live="polite" data-upload-status></p>
</form></section>`;
}

/** The Imports page; `error` is an upload form that came back (a bad source name), its values kept. */
export function importsPage(viewer: Viewer, input: { jobs: readonly ImportJob[]; maxBytes: number; error?: FormError | undefined }): string {
  return page(
    'Imports',
    html`${viewer.canWrite ? uploadForm(viewer, input.maxBytes, input.error) : ''}
<section aria-labelledby="recent"><h2 id="recent">Recent imports</h2>
${jobsTable(input.jobs)}</section>`,
    viewer,
  );
}

function progressSection(job: ImportJob): Html {
  const percent = percentDone(job);
  const pass = job.skipInvalid ? 'one pass: every valid line is written as it is read' : 'two passes: every line is checked first, and nothing is written if one is invalid';
  return html`<section aria-labelledby="progress"><h2 id="progress">Progress</h2>
<div data-import-job="/admin/api/imports/${job.id}" data-state="${job.state}" data-finished="${finished(job) ? 'true' : 'false'}">
<p>State: ${stateBadge(job)} <span class="muted">(${pass})</span></p>
<label for="job-progress">Done</label>
<progress id="job-progress" max="100" value="${percent}">${percent}%</progress> <span data-import-percent>${percent}%</span>
<p class="muted"><span data-import-lines>${job.linesRead}</span> ${finished(job) ? 'lines read' : html`lines read in this pass; last heard from ${when(job.heartbeatAt)}`}.</p>
${finished(job) ? '' : html`<p data-refresh-hint><a href="${importPath(job.id)}">Refresh</a> to see how far it got.</p>`}
</div></section>`;
}

function operationsTable(job: ImportJob): Html {
  const rows = Object.entries(job.byOperation).sort(([a], [b]) => a.localeCompare(b));
  return html`<section aria-labelledby="by-op"><h2 id="by-op">Imported by operation</h2>
<div class="table-wrap" role="region" aria-label="Records by operation table" tabindex="0"><table data-testid="import-operations"><thead><tr><th scope="col">Operation</th><th scope="col" class="num">Records</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="2" class="muted">Nothing imported.</td></tr>` : rows.map(([op, n]) => html`<tr><td>${op}</td><td class="num">${n}</td></tr>`)}</tbody></table></div></section>`;
}

function invalidTable(job: ImportJob): Html {
  const omitted = job.invalid - job.invalidLines.length;
  return html`<section aria-labelledby="invalid"><h2 id="invalid">Invalid lines (${job.invalid})</h2>
${
  job.invalid === 0
    ? html`<p class="muted">${finished(job) ? 'Every line is valid.' : 'None so far.'}</p>`
    : html`<div class="table-wrap" role="region" aria-label="Invalid lines table" tabindex="0"><table data-testid="import-invalid"><thead><tr><th scope="col" class="num">Line</th><th scope="col">Reason</th></tr></thead>
<tbody>${job.invalidLines.map((l) => html`<tr><td class="num">${l.line}</td><td>${l.reason}</td></tr>`)}</tbody></table></div>
${omitted > 0 ? html`<p class="muted">And ${omitted} more, not kept. The CLI lists every one: <code>vehicle-lookup import FILE --json</code>.</p>` : ''}`
}</section>`;
}

export function importPage(viewer: Viewer, job: ImportJob): string {
  return page(
    `Import #${job.id}: ${job.fileName}`,
    html`${job.state === 'done' ? message('notice', html`Imported ${job.imported} record${job.imported === 1 ? '' : 's'}${job.invalid > 0 ? html`, skipped ${job.invalid} invalid line${job.invalid === 1 ? '' : 's'}` : ''}.`) : ''}
${job.error === null ? '' : message('error', job.error)}
<div class="figures">
<div class="figure"><div class="muted">File</div><div class="value-small">${job.fileName}</div><div class="muted" title="${job.fileSize} bytes">${formatBytes(job.fileSize)}</div></div>
<div class="figure"><div class="muted">Imported</div><div class="value" data-testid="import-imported">${job.imported}</div></div>
<div class="figure"><div class="muted">Invalid lines</div><div class="value" data-testid="import-invalid-count">${job.invalid}</div></div>
${finished(job) ? html`<div class="figure"><div class="muted">Lines read</div><div class="value">${job.linesRead}</div></div>` : ''}
</div>
${progressSection(job)}
<ul><li>Source: <strong>${job.source}</strong>; ${job.skipInvalid ? 'valid lines imported even if some are invalid' : 'all or nothing'}</li>
<li>Started by ${job.startedBy.kind} ${job.startedBy.name}; uploaded ${when(job.createdAt)}${job.startedAt === null ? '' : html`, started ${when(job.startedAt)}`}${job.finishedAt === null ? '' : html`, finished ${when(job.finishedAt)}`}</li>
<li class="muted">Run by ${job.instance}</li></ul>
${operationsTable(job)}
${invalidTable(job)}
<p><a href="${IMPORTS_PATH}">All imports</a> · <a href="/console/admin/audit?target=${job.id}">Its audit rows</a></p>`,
    viewer,
  );
}

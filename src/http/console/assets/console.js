// Progressive enhancement only: every page works without this file.
/* global document, navigator, window, location, history, setTimeout, fetch, URL, URLSearchParams, XMLHttpRequest, DOMParser, HTMLElement, HTMLFormElement, HTMLInputElement, HTMLButtonElement, HTMLProgressElement, HTMLSelectElement, ResizeObserver */
'use strict';
document.addEventListener('click', (event) => {
  const target = event.target;
  if (!(target instanceof HTMLElement)) return;
  const copy = target.closest('[data-copy]');
  if (copy) {
    const source = document.getElementById(copy.getAttribute('data-copy') || '');
    if (source && navigator.clipboard) {
      void navigator.clipboard.writeText(source.textContent || '').then(() => { copy.textContent = 'Copied'; });
    }
  }
});
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault();
});
// Invite links carry their token in the fragment (never sent to a server or a log); put it in the
// form and send it (a POST, so the code stays out of every URL): the next page names the account
// and the user the invitation is for.
const token = document.getElementById('invite-token');
if (token instanceof HTMLInputElement && token.value === '' && location.hash.length > 1) {
  token.value = decodeURIComponent(location.hash.slice(1));
  history.replaceState(null, '', location.pathname);
  if (token.form && token.form.hasAttribute('data-invite-open')) token.form.requestSubmit();
}
document.querySelectorAll('button[data-copy]').forEach((button) => { button.hidden = false; });

// Try it and Test plates (issue 26 item 6): the form follows its operation select at once; without
// script the "Choose" button beside it does the same.
document.querySelectorAll('button[data-follows]').forEach((button) => {
  const select = document.getElementById(button instanceof HTMLButtonElement ? button.dataset.follows || '' : '');
  if (!(button instanceof HTMLButtonElement) || !(select instanceof HTMLSelectElement) || !button.form) return;
  const form = button.form;
  button.hidden = true;
  select.addEventListener('change', () => { form.requestSubmit(button); });
});

// A table wider than the screen scrolls in its own box (.table-wrap, a labelled region). Where it
// does, say so above it and keep the box in the tab order so the keyboard can scroll it; where it
// fits, the box is no tab stop. Boxes are measured again when they change size (a rotated phone,
// an opened <details>).
const measureBox = (box) => {
  const scrolls = box.scrollWidth > box.clientWidth + 1;
  box.toggleAttribute('data-scrolls', scrolls);
  if (scrolls) box.setAttribute('tabindex', '0'); else box.removeAttribute('tabindex');
  let hint = box.previousElementSibling;
  if (!(hint instanceof HTMLElement && hint.classList.contains('scroll-hint'))) {
    if (!scrolls) return;
    hint = document.createElement('p');
    hint.className = 'scroll-hint';
    hint.setAttribute('aria-hidden', 'true');
    hint.textContent = 'Scroll sideways for more columns →';
    box.before(hint);
  }
  hint.hidden = !scrolls;
};
const boxes = document.querySelectorAll('.table-wrap');
if (typeof ResizeObserver === 'function') {
  const observer = new ResizeObserver((entries) => { entries.forEach((entry) => measureBox(entry.target)); });
  boxes.forEach((box) => observer.observe(box));
} else {
  boxes.forEach(measureBox);
}

// Imports (src/http/console/import-pages.ts): upload the file to the admin API with a progress bar,
// then go to its job page. Without this, the form posts multipart/form-data to the console.
const uploadForm = document.querySelector('form[data-import-upload]');
if (uploadForm instanceof HTMLFormElement) {
  uploadForm.addEventListener('submit', (event) => {
    const fileInput = uploadForm.elements.namedItem('file');
    const file = fileInput instanceof HTMLInputElement && fileInput.files ? fileInput.files[0] : undefined;
    if (!file || event.defaultPrevented) return;
    event.preventDefault();
    const status = uploadForm.querySelector('[data-upload-status]');
    const box = uploadForm.querySelector('.upload-progress');
    const bar = uploadForm.querySelector('progress');
    const button = uploadForm.querySelector('button[type=submit]');
    const say = (text) => { if (status) status.textContent = text; };
    const field = (name) => { const input = uploadForm.elements.namedItem(name); return input instanceof HTMLInputElement ? input : undefined; };
    if (file.size > Number(uploadForm.dataset.maxBytes)) { say(`The file is larger than the limit of ${uploadForm.dataset.maxBytes} bytes.`); return; }
    const params = new URLSearchParams({ source: field('source')?.value || 'import', skipInvalid: field('skipInvalid')?.checked ? 'true' : 'false', fileName: file.name.slice(0, 255) || 'upload.jsonl' });
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${uploadForm.dataset.importUpload}?${params.toString()}`);
    xhr.setRequestHeader('Content-Type', 'application/x-ndjson');
    xhr.setRequestHeader('X-CSRF-Token', field('_csrf')?.value || '');
    if (box instanceof HTMLElement) box.hidden = false;
    if (button instanceof HTMLButtonElement) button.disabled = true;
    xhr.upload.addEventListener('progress', (e) => {
      if (!e.lengthComputable || !(bar instanceof HTMLProgressElement)) return;
      bar.max = e.total;
      bar.value = e.loaded;
      say(`Uploading: ${Math.floor((100 * e.loaded) / e.total)}% of ${e.total} bytes`);
    });
    const failed = (text) => {
      say(text);
      if (button instanceof HTMLButtonElement) button.disabled = false;
    };
    xhr.addEventListener('load', () => {
      let answer;
      try { answer = JSON.parse(xhr.responseText); } catch { answer = undefined; }
      if (xhr.status === 202 && answer && answer.import) {
        say('Uploaded. Opening the import…');
        location.assign(`${uploadForm.dataset.importPage}${answer.import.id}`);
      } else {
        failed(`Not imported: ${answer && answer.message ? answer.message : `the server answered ${xhr.status}`}`);
      }
    });
    xhr.addEventListener('error', () => { failed('The upload failed: the connection was lost.'); });
    say('Uploading…');
    xhr.send(file);
  });
}

// A running import's page follows the job's progress through the admin API, and reloads when its
// state changes (for the finished job: the summary and the validation report).
const job = document.querySelector('[data-import-job]');
if (job instanceof HTMLElement && job.dataset.finished === 'false') {
  const hint = job.querySelector('[data-refresh-hint]');
  if (hint instanceof HTMLElement) hint.hidden = true;
  const poll = (delay) => {
    setTimeout(() => {
      fetch(job.dataset.importJob || '', { headers: { accept: 'application/json' } })
        .then((res) => (res.ok ? res.json() : Promise.reject(new Error(String(res.status)))))
        .then((body) => {
          const current = body.import;
          // A new state (checking, importing, finished) is rendered by the server: its words and its report.
          if (current.state !== job.dataset.state) { location.reload(); return; }
          const bar = job.querySelector('progress');
          if (bar instanceof HTMLProgressElement) { bar.value = current.percent; bar.textContent = `${current.percent}%`; }
          const set = (selector, text) => { const el = job.querySelector(selector); if (el) el.textContent = text; };
          set('[data-import-percent]', `${current.percent}%`);
          set('[data-import-lines]', String(current.linesRead));
          poll(1000);
        })
        .catch(() => { poll(5000); });
    }, delay);
  };
  poll(500);
}

// A webhook endpoint's delivery log (src/http/console/delivery-log.ts) follows a pending message:
// while the server marks the log pending, the page is fetched again and its log swapped in place
// (open payloads stay open); once nothing is pending, the server's log says so and polling stops.
// Every poll-ms while an attempt is due; a retry due later is asked about shortly after it is due (at most a minute apart).
const logDelay = (log) => {
  const poll = Number(log.dataset.pollMs) || 2000;
  const due = Date.parse(log.dataset.nextAttempt || '') - Date.now();
  return Number.isFinite(due) ? Math.min(Math.max(due + 500, poll), 60000) : poll;
};
const followLog = (log) => {
  setTimeout(() => {
    fetch(location.pathname + location.search, { headers: { accept: 'text/html' } })
      .then((res) => {
        // Sent to the login page (the session ended): show it.
        if (new URL(res.url).pathname !== location.pathname) { location.reload(); return undefined; }
        return res.ok ? res.text() : Promise.reject(new Error(String(res.status)));
      })
      .then((text) => {
        if (text === undefined) return;
        const next = new DOMParser().parseFromString(text, 'text/html').querySelector('[data-delivery-log]');
        if (!(next instanceof HTMLElement)) { location.reload(); return; }
        log.querySelectorAll('details[open][data-keep]').forEach((open) => {
          next.querySelectorAll('details[data-keep]').forEach((twin) => { if (twin.getAttribute('data-keep') === open.getAttribute('data-keep')) twin.open = true; });
        });
        log.replaceWith(next);
        if (next.dataset.pending === 'true') followLog(next);
      })
      .catch(() => { followLog(log); });
  }, logDelay(log));
};
const deliveryLog = document.querySelector('[data-delivery-log]');
if (deliveryLog instanceof HTMLElement && deliveryLog.dataset.pending === 'true') followLog(deliveryLog);

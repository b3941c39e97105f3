// Progressive enhancement only: every page works without this file.
/* global document, navigator, window, location, history, HTMLElement, HTMLFormElement, HTMLInputElement */
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
// Invite links carry their token in the fragment (never sent to a server or a log); put it in the form.
const token = document.getElementById('invite-token');
if (token instanceof HTMLInputElement && token.value === '' && location.hash.length > 1) {
  token.value = decodeURIComponent(location.hash.slice(1));
  history.replaceState(null, '', location.pathname);
}
document.querySelectorAll('button[data-copy]').forEach((button) => { button.hidden = false; });

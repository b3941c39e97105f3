import type { UsageRow } from '../accounts/ledger-queries.js';
import { html, unsafeRaw, type Html } from './html.js';

/** Distinguishable on white and for the common colour-vision deficiencies (Okabe-Ito). */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'] as const;

const WIDTH = 720;
const HEIGHT = 200;
const LEFT = 40;
const BOTTOM = 24;

/** The UTC days from `from` (inclusive) to `to` (exclusive), as YYYY-MM-DD. */
export function daysBetween(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); t < to.getTime(); t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

/**
 * Lookups per day and operation as stacked bars in server-rendered SVG: no script, so it works
 * under the strict CSP and without JavaScript, and the same figures follow as a table for screen
 * readers. `metric` picks lookups or credits.
 */
export function usageChart(rows: readonly UsageRow[], days: readonly string[], metric: 'lookups' | 'credits', title: string): Html {
  const operations = [...new Set(rows.map((r) => r.operation))].sort();
  const colour = new Map(operations.map((op, i) => [op, PALETTE[i % PALETTE.length] ?? '#000000']));
  const byDay = new Map<string, UsageRow[]>();
  for (const row of rows) byDay.set(row.day, [...(byDay.get(row.day) ?? []), row]);
  const totals = days.map((d) => (byDay.get(d) ?? []).reduce((sum, r) => sum + r[metric], 0));
  const max = Math.max(1, ...totals);
  const plotWidth = WIDTH - LEFT - 8;
  const plotHeight = HEIGHT - BOTTOM - 8;
  const slot = plotWidth / Math.max(1, days.length);
  const bar = Math.max(1, slot * 0.7);
  let shapes = '';
  days.forEach((day, i) => {
    let y = 8 + plotHeight;
    for (const row of (byDay.get(day) ?? []).sort((a, b) => a.operation.localeCompare(b.operation))) {
      const h = (row[metric] / max) * plotHeight;
      y -= h;
      // Every value here is a number we computed or a colour from PALETTE; the tooltip text is escaped.
      shapes += `<rect x="${(LEFT + i * slot + (slot - bar) / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${bar.toFixed(1)}" height="${h.toFixed(1)}" fill="${colour.get(row.operation) ?? '#000000'}">${html`<title>${day} ${row.operation}: ${row[metric]}</title>`.text}</rect>`;
    }
  });
  const axis = `<line x1="${LEFT}" y1="${8 + plotHeight}" x2="${WIDTH - 8}" y2="${8 + plotHeight}" stroke="#4a5260"/>`;
  const labels =
    `<text x="${LEFT - 4}" y="14" text-anchor="end" font-size="11" fill="#4a5260">${max}</text>` +
    `<text x="${LEFT - 4}" y="${8 + plotHeight}" text-anchor="end" font-size="11" fill="#4a5260">0</text>` +
    (days.length > 0
      ? `<text x="${LEFT}" y="${HEIGHT - 6}" font-size="11" fill="#4a5260">${days[0] ?? ''}</text><text x="${WIDTH - 8}" y="${HEIGHT - 6}" text-anchor="end" font-size="11" fill="#4a5260">${days.at(-1) ?? ''}</text>`
      : '');
  const total = totals.reduce((a, b) => a + b, 0);
  const id = `chart-${metric}`;
  return html`<figure class="chart">
  <figcaption id="${id}-title">${title}: ${total} in ${days.length} days</figcaption>
  <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title" data-total="${total}">${unsafeRaw(axis + shapes + labels)}</svg>
  ${operations.length > 0 ? html`<ul class="legend">${operations.map((op) => html`<li><span class="swatch" data-colour="${colour.get(op) ?? ''}">${unsafeRaw(`<svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour.get(op) ?? '#000'}"/></svg>`)}</span>${op}</li>`)}</ul>` : html`<p class="muted">No charged lookups in this period.</p>`}
  <details><summary>The figures as a table</summary><div class="table-wrap"><table>
    <thead><tr><th scope="col">Day (UTC)</th><th scope="col">Operation</th><th scope="col" class="num">Lookups</th><th scope="col" class="num">Credits</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr><td>${r.day}</td><td>${r.operation}</td><td class="num">${r.lookups}</td><td class="num">${r.credits}</td></tr>`)}</tbody>
  </table></div></details>
</figure>`;
}

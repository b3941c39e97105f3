import type { UsageRow } from '../../accounts/ledger-queries.js';
import { html, unsafeRaw, type Html } from './html.js';

/** Distinguishable on white and for the common colour-vision deficiencies (Okabe-Ito). */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'] as const;

/**
 * The plot's own coordinates. The SVG stretches to its box (preserveAspectRatio="none") and holds
 * only bars and the baseline; the axis labels are HTML beside it, so their size is the page's and
 * does not shrink with the chart: scaled text in a 720-wide viewBox was 5.7 px on a 390 px phone.
 */
const WIDTH = 720;
const HEIGHT = 200;

/** The UTC days from `from` (inclusive) to `to` (exclusive), as YYYY-MM-DD. */
export function daysBetween(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); t < to.getTime(); t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

/** Free lookups' segment: a neutral grey, 3.5:1 on white (WCAG's 3:1 for graphics), apart from the operations' colours. */
const FREE_COLOUR = '#888888';
const FREE_LABEL = 'free (no credits)';

/** One stacked segment of a day's bar. */
interface Segment {
  readonly label: string;
  readonly value: number;
  readonly colour: string;
}

/**
 * Lookups per day and operation as stacked bars in server-rendered SVG: no script, so it works
 * under the strict CSP and without JavaScript, and the same figures follow as a table for screen
 * readers. `metric` picks lookups or credits. For lookups, each operation's segment counts its
 * charged lookups, and one grey segment on top the day's free ones (test plates, results with
 * nothing to charge, Idempotency-Key replays), so a bar's height is every lookup of the day and
 * what was paid for stands out; the table gives the free ones per operation.
 */
export function usageChart(rows: readonly UsageRow[], days: readonly string[], metric: 'lookups' | 'credits', title: string): Html {
  const charged = (r: UsageRow) => (metric === 'lookups' ? r.lookups - r.freeLookups : r.credits);
  const operations = [...new Set(rows.filter((r) => charged(r) > 0).map((r) => r.operation))].sort();
  const colour = new Map(operations.map((op, i) => [op, PALETTE[i % PALETTE.length] ?? '#000000']));
  const byDay = new Map<string, UsageRow[]>();
  for (const row of rows) byDay.set(row.day, [...(byDay.get(row.day) ?? []), row]);
  const segmentsOf = (day: string): Segment[] => {
    const dayRows = [...(byDay.get(day) ?? [])].sort((a, b) => a.operation.localeCompare(b.operation));
    const segments: Segment[] = dayRows.filter((r) => charged(r) > 0).map((r) => ({ label: r.operation, value: charged(r), colour: colour.get(r.operation) ?? '#000000' }));
    const free = metric === 'lookups' ? dayRows.reduce((sum, r) => sum + r.freeLookups, 0) : 0;
    if (free > 0) segments.push({ label: FREE_LABEL, value: free, colour: FREE_COLOUR });
    return segments;
  };
  const stacks = days.map(segmentsOf);
  const totals = stacks.map((segments) => segments.reduce((sum, s) => sum + s.value, 0));
  const anyFree = stacks.some((segments) => segments.some((s) => s.colour === FREE_COLOUR));
  const max = Math.max(1, ...totals);
  const slot = WIDTH / Math.max(1, days.length);
  const bar = Math.max(1, slot * 0.7);
  let shapes = '';
  days.forEach((day, i) => {
    let y = HEIGHT;
    for (const segment of stacks[i] ?? []) {
      const h = (segment.value / max) * HEIGHT;
      y -= h;
      // Every value here is a number we computed or a colour of ours; the tooltip text is escaped.
      shapes += `<rect x="${(i * slot + (slot - bar) / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${bar.toFixed(1)}" height="${h.toFixed(1)}" fill="${segment.colour}">${html`<title>${day} ${segment.label}: ${segment.value}</title>`.text}</rect>`;
    }
  });
  // The baseline keeps its 2 px however far the plot is stretched.
  const axis = `<line x1="0" y1="${HEIGHT}" x2="${WIDTH}" y2="${HEIGHT}" stroke="#4a5260" stroke-width="2" vector-effect="non-scaling-stroke"/>`;
  const total = totals.reduce((a, b) => a + b, 0);
  const id = `chart-${metric}`;
  // The labels repeat what the caption and the table say, so assistive technology skips them.
  return html`<figure class="chart">
  <figcaption id="${id}-title">${title}: ${total} in ${days.length} days</figcaption>
  <div class="plot">
  <div class="axis y-axis" aria-hidden="true"><span>${max}</span><span>0</span></div>
  <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-labelledby="${id}-title" data-total="${total}">${unsafeRaw(axis + shapes)}</svg>
  ${days.length > 0 ? html`<div class="axis x-axis" aria-hidden="true"><span>${days[0]}</span><span>${days.at(-1)}</span></div>` : ''}
  </div>
  ${legend([...operations.map((op) => ({ label: op, colour: colour.get(op) ?? '#000000' })), ...(anyFree ? [{ label: FREE_LABEL, colour: FREE_COLOUR }] : [])])}
  <details><summary>The figures as a table</summary><div class="table-wrap" role="region" aria-label="${title}: the figures table" tabindex="0"><table>
    <thead><tr><th scope="col">Day (UTC)</th><th scope="col">Operation</th><th scope="col" class="num">Lookups</th><th scope="col" class="num">Of which free</th><th scope="col" class="num">Credits</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr><td>${r.day}</td><td>${r.operation}</td><td class="num">${r.lookups}</td><td class="num">${r.freeLookups}</td><td class="num">${r.credits}</td></tr>`)}</tbody>
  </table></div></details>
</figure>`;
}

/** The chart's key: a swatch and a name per segment kind; a note when the period has no lookups. */
function legend(entries: ReadonlyArray<{ readonly label: string; readonly colour: string }>): Html {
  if (entries.length === 0) return html`<p class="muted">No lookups in this period.</p>`;
  return html`<ul class="legend">${entries.map(
    (e) => html`<li><span class="swatch" data-colour="${e.colour}">${unsafeRaw(`<svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${e.colour}"/></svg>`)}</span>${e.label}</li>`,
  )}</ul>`;
}

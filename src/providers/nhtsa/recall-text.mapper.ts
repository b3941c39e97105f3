import { asObject, stringField, type JsonObject } from '../upstream/json-reader.js';

/** One recall campaign of an NHTSA Recalls API answer (upstream-sources.md §10.4), as we use it. */
export interface RecallCampaign {
  /** `NHTSACampaignNumber`, e.g. `23V704000`. */
  readonly campaign: string;
  /** `ReportReceivedDate` as `YYYY-MM-DD` (NHTSA writes `DD/MM/YYYY`), when readable. */
  readonly reported?: string;
  /** `Component`, e.g. `STEERING:RACK AND PINION`. */
  readonly component?: string;
  /** `Summary`, on one line. */
  readonly summary?: string;
}

/** Free text on one line: every run of white space (line breaks included) becomes one space. */
function oneLine(text: string | undefined): string | undefined {
  const line = text?.replace(/\s+/gu, ' ').trim();
  return line === '' ? undefined : line;
}

/** `19/10/2023` -> `2023-10-19`; anything else is left out. */
function isoDate(text: string | undefined): string | undefined {
  const m = text === undefined ? null : /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text);
  return m ? `${m[3]}-${m[2]}-${m[1]}` : undefined;
}

function campaignOf(row: JsonObject): RecallCampaign | undefined {
  const campaign = stringField(row, 'NHTSACampaignNumber');
  if (campaign === undefined) return undefined;
  const reported = isoDate(stringField(row, 'ReportReceivedDate'));
  const component = oneLine(stringField(row, 'Component'));
  const summary = oneLine(stringField(row, 'Summary'));
  return { campaign, ...(reported ? { reported } : {}), ...(component ? { component } : {}), ...(summary ? { summary } : {}) };
}

/**
 * The campaigns of a `results` array: rows without a campaign number are skipped, a campaign
 * listed twice is kept once, newest report first (then by campaign number), so an answer reads
 * the same whatever order NHTSA sends.
 */
export function readRecallCampaigns(results: unknown): RecallCampaign[] {
  const seen = new Map<string, RecallCampaign>();
  for (const item of Array.isArray(results) ? (results as unknown[]) : []) {
    const row = asObject(item);
    const campaign = row ? campaignOf(row) : undefined;
    if (campaign && !seen.has(campaign.campaign)) seen.set(campaign.campaign, campaign);
  }
  return [...seen.values()].sort((a, b) => (b.reported ?? '').localeCompare(a.reported ?? '') || b.campaign.localeCompare(a.campaign));
}

/**
 * The CheckRecalledVIN answer text: one line per campaign, `NHTSA {campaign}: {component}: {summary}`
 * (a part NHTSA left empty is left out with its separator), lines joined with `\n`; no recalls is
 * the empty string. Plain lines rather than a JSON text: the original declares a bare `string`,
 * the answer is read by people as often as by programs, and a program still splits it safely,
 * because each campaign number starts its own line and free text is folded onto that line.
 */
export function recallText(campaigns: readonly RecallCampaign[]): string {
  return campaigns.map((c) => [`NHTSA ${c.campaign}`, c.component, c.summary].filter((p) => p !== undefined).join(': ')).join('\n');
}

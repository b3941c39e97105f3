/** Escapes text for XML/SVG content and attribute values. */
const XML_ENTITIES: Readonly<Record<string, string>> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => XML_ENTITIES[c] ?? c);
}

/** Splits "Make Model words" into the make (first word) and the rest. */
function split(makeModel: string): { make: string; model: string } {
  const [make = '', ...rest] = makeModel.trim().split(/\s+/u);
  return { make, model: rest.join(' ') };
}

/**
 * A generated picture for a make and model without an operator-supplied photo: an SVG card with
 * a car silhouette and the names, so ImageUrl always resolves to a real image.
 */
export function renderVehicleCard(makeModel: string): string {
  const { make, model } = split(makeModel);
  const title = escapeXml(makeModel);
  const fit = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}\u2026` : text);
  return `<?xml version="1.0" encoding="utf-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360" viewBox="0 0 640 360" role="img" aria-label="${title}">
  <title>${title}</title>
  <rect width="640" height="360" fill="#f3f5f8"/>
  <path d="M120 250 L150 190 Q165 165 200 160 L300 150 Q340 148 370 165 L430 200 L520 215 Q545 222 548 245 L550 262 L120 262 Z" fill="#3b5b82"/>
  <path d="M205 172 L300 162 Q330 161 352 175 L388 198 L190 200 Z" fill="#cfe0f2"/>
  <circle cx="205" cy="262" r="30" fill="#222"/><circle cx="205" cy="262" r="13" fill="#bbb"/>
  <circle cx="465" cy="262" r="30" fill="#222"/><circle cx="465" cy="262" r="13" fill="#bbb"/>
  <text x="320" y="70" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-size="40" font-weight="bold" fill="#1d2b3a">${escapeXml(fit(make, 24))}</text>
  <text x="320" y="115" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-size="28" fill="#3d4f63">${escapeXml(fit(model, 36))}</text>
  <text x="320" y="335" text-anchor="middle" font-family="Helvetica, Arial, sans-serif" font-size="14" fill="#7a8796">Illustration, not a photograph of the vehicle</text>
</svg>
`;
}

/** File-name stem of an operator picture: "Land Rover Defender" -> "land-rover-defender". */
export function imageSlug(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

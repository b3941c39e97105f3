import type { VehicleDocument } from './result-documents.js';

/**
 * How a Vehicle result gets its ImageUrl when the record has none (compat-notes "Wire differences"
 * 6; issue 24 "Fidelity" 2): `make-model` (the default) encodes "Make Model"; `uk` appends `|motorcycle` to the encoded text when the record
 * is a motorbike (live reg.asmx/Check answers do); `uk-motorbike` always appends it (a motorbike
 * lookup); `none` adds none (live answers of these countries carry only the record's own);
 * `australia` follows the record's `State` as live answers do: Queensland encodes the Description,
 * the ACT names the member `Image`, the other states encode "Make Model".
 */
export type ImageUrlRule = 'make-model' | 'uk' | 'uk-motorbike' | 'none' | 'australia';

/** Reads a member that may be plain or wrapped as `{"CurrentTextValue": ...}` (compat-notes). */
export function textValue(doc: VehicleDocument, member: string): string | undefined {
  const v = doc[member];
  if (typeof v === 'string' || typeof v === 'number') return String(v).trim() || undefined;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const inner = (v as Record<string, unknown>).CurrentTextValue;
    if (typeof inner === 'string' || typeof inner === 'number') return String(inner).trim() || undefined;
  }
  return undefined;
}

/** A member's text exactly as the document has it (untrimmed), when it is not blank. */
function untrimmedText(doc: VehicleDocument, member: string): string | undefined {
  if (textValue(doc, member) === undefined) return undefined;
  const v = doc[member];
  const inner = v !== null && typeof v === 'object' ? (v as Record<string, unknown>).CurrentTextValue : v;
  return typeof inner === 'string' || typeof inner === 'number' ? String(inner) : undefined;
}

/**
 * "Make Model" of a vehicle document, from CarMake/CarModel or the Make/ModelDescription, as the
 * live service encodes it: the untrimmed texts joined by one space, an absent model as "" (live
 * answers encode "MITSUBISHI " and "BMW  SERIJA 3, 316I"; compat-notes "Wire differences" 6).
 */
export function makeAndModel(doc: VehicleDocument): string | undefined {
  const make = untrimmedText(doc, 'CarMake') ?? untrimmedText(doc, 'MakeDescription');
  if (make === undefined) return undefined;
  const model = untrimmedText(doc, 'CarModel') ?? untrimmedText(doc, 'ModelDescription') ?? '';
  return `${make} ${model}`;
}

/** What the live service appends to the encoded name of a UK motorbike (compat-notes "Wire differences" 6). */
export const MOTORCYCLE_SUFFIX = '|motorcycle';

/** Path of the image of a make and model: `/image.aspx/@{base64 of UTF-8 "Make Model"}` (compat-notes). */
export function imagePath(makeModel: string): string {
  return `/image.aspx/@${Buffer.from(makeModel, 'utf8').toString('base64')}`;
}

/** Decodes the make and model from an image path segment (`@...`), or undefined when malformed. */
export function decodeImageSegment(segment: string): string | undefined {
  if (!segment.startsWith('@')) return undefined;
  // Links we gave out before issue 24 carry a motorbike's suffix after the encoded name (raw or
  // percent-encoded by the router); the original's, and ours since, carry it inside.
  const b64 = segment.endsWith(MOTORCYCLE_SUFFIX) ? segment.slice(1, -MOTORCYCLE_SUFFIX.length) : segment.slice(1);
  if (b64.length === 0 || b64.length > 400 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return undefined;
  const decoded = Buffer.from(b64, 'base64').toString('utf8');
  // A motorbike's picture is looked up by its make and model like a car's.
  const text = decoded.endsWith(MOTORCYCLE_SUFFIX) ? decoded.slice(0, -MOTORCYCLE_SUFFIX.length) : decoded;
  // Reject what did not round-trip (invalid UTF-8 becomes U+FFFD) and control characters.
  if (text.includes('\uFFFD') || /\p{Cc}/u.test(text) || text.trim() === '') return undefined;
  return text;
}

/**
 * Adds an absolute ImageUrl when the document has none, of "Make Model" and `suffix`, both inside
 * the encoded text as the original writes them (a live UK answer encodes
 * "PEUGEOT 307 X-LINE|motorcycle": issue 24 "Fidelity" 2); the stored document is left untouched.
 */
export function withImageUrl(doc: VehicleDocument, baseUrl: string, suffix = ''): VehicleDocument {
  if (typeof doc.ImageUrl === 'string' && doc.ImageUrl !== '') return doc;
  const makeModel = makeAndModel(doc);
  if (makeModel === undefined) return doc;
  return { ...doc, ImageUrl: `${baseUrl}${imagePath(`${makeModel}${suffix}`)}` };
}

/**
 * An Australian record's picture as live CheckAustralia answers give it (issue 24 "Fidelity" 2):
 * by its `State`, Queensland encodes the Description, the ACT names the member `Image`, the other
 * states encode "Make Model". A record that has its own `ImageUrl` or `Image` keeps it.
 */
export function withAustralianImage(doc: VehicleDocument, baseUrl: string): VehicleDocument {
  for (const member of ['ImageUrl', 'Image']) if (typeof doc[member] === 'string' && doc[member] !== '') return doc;
  const state = textValue(doc, 'State')?.toUpperCase();
  const name = state === 'QLD' ? untrimmedText(doc, 'Description') : makeAndModel(doc);
  if (name === undefined) return doc;
  return { ...doc, [state === 'ACT' ? 'Image' : 'ImageUrl']: `${baseUrl}${imagePath(name)}` };
}

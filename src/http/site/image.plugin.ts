import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { decodeImageSegment } from '../../results/image-url.js';
import { imageSlug, renderVehicleCard } from './image-card.js';

export interface ImagePluginOptions {
  /** Operator pictures: `{make-model}.{png,jpg,jpeg,webp,svg}`, or `{make}.{ext}` for a whole make. */
  readonly imagesDir: string;
}

const TYPES: ReadonlyArray<readonly [string, string]> = [
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['webp', 'image/webp'],
  ['svg', 'image/svg+xml'],
];

/**
 * Candidate file stems, most specific first: "Land Rover Defender" -> land-rover-defender,
 * land-rover, land. The make/model boundary is not in the URL, so every word prefix is tried.
 */
function candidateStems(makeModel: string): string[] {
  const words = makeModel.trim().split(/\s+/u);
  const stems: string[] = [];
  for (let n = words.length; n >= 1; n -= 1) stems.push(imageSlug(words.slice(0, n).join(' ')));
  return [...new Set(stems)];
}

async function operatorPicture(dir: string, makeModel: string): Promise<{ data: Buffer; type: string } | undefined> {
  for (const stem of candidateStems(makeModel)) {
    if (stem === '') continue;
    for (const [ext, type] of TYPES) {
      try {
        return { data: await readFile(join(dir, `${stem}.${ext}`)), type };
      } catch {
        // Not there: try the next name.
      }
    }
  }
  return undefined;
}

/** `GET /image.aspx/@{base64 of "Make Model"}`: the picture behind every ImageUrl we hand out. */
export const imagePlugin: FastifyPluginAsync<ImagePluginOptions> = (app, options) => {
  // A wildcard, not a parameter: standard base64 contains "/", which splits the path.
  app.get<{ Params: { '*': string } }>('/image.aspx/*', async (request, reply) => {
    const makeModel = decodeImageSegment(request.params['*']);
    if (makeModel === undefined) {
      return reply.code(404).type('text/plain; charset=utf-8').send('No such image: expected /image.aspx/@{base64 of "Make Model"}');
    }
    const picture = await operatorPicture(options.imagesDir, makeModel);
    void reply
      .header('cache-control', 'public, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      // SVG can carry script; this makes any SVG we serve inert when opened directly.
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
    if (picture) return reply.type(picture.type).send(picture.data);
    return reply.type('image/svg+xml; charset=utf-8').send(renderVehicleCard(makeModel));
  });
  return Promise.resolve();
};

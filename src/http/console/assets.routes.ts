import type { FastifyPluginAsync } from 'fastify';
import { ASSETS, ASSETS_PREFIX } from './console-assets.js';

/** The console's stylesheet and script, under ASSETS_PREFIX, at content-hashed paths cached for a year. */
export const assetRoutes: FastifyPluginAsync = (app) => {
  for (const asset of Object.values(ASSETS)) {
    app.get(asset.path.slice(ASSETS_PREFIX.length), (_request, reply) => reply.type(asset.type).header('cache-control', 'public, max-age=31536000, immutable').send(asset.body));
  }
  return Promise.resolve();
};

import type { FastifyPluginAsync } from 'fastify';
import type { SignupConfig } from '../../config/config.js';
import { VERSION } from '../console/console-assets.js';
import type { ConsolePageOptions } from '../console/console-context.js';
import { frontPage, type ServiceLink } from './front-page.js';

export interface FrontPageOptions extends ConsolePageOptions {
  /** The SOAP services the front page links to. */
  readonly services: readonly ServiceLink[];
  readonly signup: SignupConfig;
}

/**
 * `/`: what this is and where everything lives. Registered in the console's scope, as a page of
 * the console's layout with its security headers and error page (the only page cached publicly).
 */
export const frontPageRoutes: FastifyPluginAsync<FrontPageOptions> = (app, options) => {
  const { ctx } = options;
  app.get('/', (request, reply) => ctx.render(reply, frontPage({ version: VERSION, baseUrl: ctx.baseUrl(request), services: options.services, signupEnabled: options.signup.enabled })));
  return Promise.resolve();
};

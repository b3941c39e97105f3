import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/api-auth.js';
import type { Schema } from '../api/api-schemas.js';
import type { Viewer } from './layout.js';

/** Who a console page is for: operators (no account) or a customer account's users. */
export type Audience = 'operator' | 'customer';

/**
 * What console.plugin.ts lends every page plugin it registers (one per resource: accounts, keys,
 * credits, alerts, test plates, tokens, sessions...): the one login check, rendering and form
 * schema, so each resource adds routes without a second copy of the session, CSRF and role handling.
 */
export interface ConsoleContext {
  /** The session's user through the API's own authenticate(): session, CSRF field, role; throws to refuse. */
  signIn(request: FastifyRequest, audience: Audience): Promise<{ principal: Principal; viewer: Viewer }>;
  /** Sends a page (text/html) with a status, 200 by default. */
  render(reply: FastifyReply, body: string, status?: number): FastifyReply;
  /** A redirect to the password page while the user must still change a one-time password. */
  passwordFirst(viewer: Viewer, reply: FastifyReply): FastifyReply | undefined;
  /** The schema of a posted form: its own fields and the CSRF field, nothing else. */
  form(properties: Record<string, Schema>, required?: readonly string[]): Schema;
  /** The form of a write the API makes too: the API's body schema (api-schemas.ts) and the CSRF field. */
  formOf(body: Schema): Schema;
  /** The public base URL (BASE_URL, or from the request behind a trusted proxy). */
  baseUrl(request: FastifyRequest): string;
}

/**
 * The options every console page plugin is registered with, as `app.register(plugin, { prefix,
 * ctx, ...services })`: the console's context, then the services of its resource.
 */
export interface ConsolePageOptions {
  readonly ctx: ConsoleContext;
}

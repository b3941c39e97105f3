import type { FastifyPluginAsync } from 'fastify';
import type { AccountService } from '../../accounts/account.service.js';

export interface CreditsPluginOptions {
  readonly accounts: AccountService;
}

/**
 * `GET /ajax/getcredits.aspx?username=NAME`: the balance as a plain integer, 0 for an unknown user,
 * as the original answered (compat-notes "Credit balance"). Operators can switch it off.
 */
export const creditsPlugin: FastifyPluginAsync<CreditsPluginOptions> = (app, options) => {
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/ajax/getcredits.aspx', async (request, reply) => {
    // Parameter names are case-insensitive, as in ASP.NET's Request.QueryString.
    const entry = Object.entries(request.query).find(([k]) => k.toLowerCase() === 'username');
    const value = entry?.[1];
    const username = (Array.isArray(value) ? value[0] : value)?.trim() ?? '';
    const balance = username === '' ? 0 : await options.accounts.balance(username);
    return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(String(balance));
  });
  return Promise.resolve();
};

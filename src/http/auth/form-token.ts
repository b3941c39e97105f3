import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, readCookie } from './api-auth.js';
import { html, type Html } from '../console/html.js';
import { CSRF_FIELD } from '../console/layout.js';

/** How long a form page stays good to post. */
const MAX_AGE_S = 3600;

/**
 * The anti-forgery token of a console form that is posted before there is a session: log in,
 * accept an invite, sign up. A double submit: a random value in a cookie (HttpOnly,
 * SameSite=Strict, sent only to the form's own path) and in the form's hidden field. A post from
 * another site can carry neither the cookie (Strict) nor the value (it cannot read our page).
 * Without it, a hostile page could log a visitor in to an account whose password its author
 * holds (login CSRF) and watch what they do there, or sign them up to one.
 */
export class FormToken {
  /**
   * @param cookie the cookie's name, one per form
   * @param path the path the form posts to: the cookie is sent there only
   */
  constructor(
    private readonly cookie: string,
    private readonly path: string,
  ) {}

  /** A fresh token for a page that shows the form; its cookie is set on `reply`. */
  issue(request: FastifyRequest, reply: FastifyReply): string {
    const token = randomBytes(32).toString('base64url');
    void reply.header('set-cookie', this.setCookie(request, token, MAX_AGE_S));
    return token;
  }

  /**
   * The token of a posted form, when the field matches the cookie; otherwise a 403 that tells the
   * person to open the page again. Answers the token, to show the form again after a mistake.
   */
  check(request: FastifyRequest, presented: string | undefined): string {
    const token = readCookie(request, this.cookie);
    if (!same(token, presented) || token === undefined) {
      throw new ApiError(403, 'csrf', 'This form has expired or was not sent from this site. Open the page again.');
    }
    return token;
  }

  /** The Set-Cookie value that removes the cookie (after the form has done its work). */
  cleared(request: FastifyRequest): string {
    return this.setCookie(request, '', 0);
  }

  private setCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
    const secure = request.protocol === 'https' ? '; Secure' : '';
    return `${this.cookie}=${value}; Path=${this.path}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
  }
}

function same(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined || a === '') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The hidden field that carries a form token. */
export function formTokenField(token: string): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}">`;
}

export const LOGIN_FORM = new FormToken('vl_login_form', '/console/login');
export const INVITE_FORM = new FormToken('vl_invite_form', '/console/invite');

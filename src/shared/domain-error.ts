/**
 * The stable codes of the services' errors (STYLE.md 4: domain errors have stable codes and no
 * HTTP in them). Each adapter maps a code to its wire form in one table: the admin and account
 * APIs and the console in src/admin/api-auth.ts (DOMAIN_ERRORS), the CLI by printing the message.
 * A new code is a compile error in every such table until it is mapped.
 */
export type DomainErrorCode =
  /** The named thing does not exist (or is not the caller's to see). */
  | 'NOT_FOUND'
  /** A create or rename that would take a name (or key) already taken, a race lost included. */
  | 'ALREADY_EXISTS'
  /** A delete (or change) refused because other rows still refer to the thing. */
  | 'IN_USE'
  /** The request itself is wrong: a bad name, an amount out of range, a rule broken. */
  | 'INVALID'
  /** A removal or charge larger than the balance. */
  | 'INSUFFICIENT_CREDITS'
  /** The caller may not do this (a wrong current password...). */
  | 'FORBIDDEN';

/**
 * The base class of every service error (accounts, users, webhooks, credit alerts, test plates,
 * and the store's constraint violations): `instanceof DomainError` is how adapters tell a
 * request that cannot be carried out from a fault. `C` narrows the codes a service uses.
 */
export abstract class DomainError<C extends DomainErrorCode = DomainErrorCode> extends Error {
  constructor(
    readonly code: C,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

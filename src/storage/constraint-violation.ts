import { DomainError } from '../shared/domain-error.js';
import type { Engine } from './engine.js';

/** The constraints the store enforces that a request can run into (a race lost, a row in use). */
export type ConstraintKind = 'unique' | 'foreign-key';

/**
 * The engines' codes for the constraint kinds: better-sqlite3's extended result codes, and
 * PostgreSQL's SQLSTATE (pg's DatabaseError.code). The one place the difference is named.
 */
const CONSTRAINT_CODES: Readonly<Record<Engine, Readonly<Record<string, ConstraintKind>>>> = {
  sqlite: { SQLITE_CONSTRAINT_UNIQUE: 'unique', SQLITE_CONSTRAINT_PRIMARYKEY: 'unique', SQLITE_CONSTRAINT_FOREIGNKEY: 'foreign-key' },
  postgres: { '23505': 'unique', '23503': 'foreign-key' },
};

export function constraintRecogniser(engine: Engine): (error: unknown) => ConstraintKind | undefined {
  const codes = CONSTRAINT_CODES[engine];
  return (error) => {
    const code = (error as { code?: unknown } | null)?.code;
    return typeof code === 'string' && Object.hasOwn(codes, code) ? codes[code] : undefined;
  };
}

/**
 * A write the store refused for a constraint, as Storage.transaction rethrows it: a domain error
 * (ALREADY_EXISTS for a unique index, IN_USE for a foreign key), so that whichever of two racing
 * requests loses the check-then-insert is answered like a request that found the row at its
 * check, not with an internal error (issue 28). Services catch it where they can say more
 * (`account X already exists`); the driver's error is the cause, never shown to a client.
 */
export class ConstraintViolation extends DomainError<'ALREADY_EXISTS' | 'IN_USE'> {
  override readonly name = 'ConstraintViolation';
  constructor(
    readonly kind: ConstraintKind,
    cause: unknown,
  ) {
    super(
      kind === 'unique' ? 'ALREADY_EXISTS' : 'IN_USE',
      kind === 'unique' ? 'it already exists (another request may have created it at the same moment)' : 'other records still refer to it',
      { cause },
    );
  }
}

/** A ConstraintViolation for an error the engine raised for a constraint, else the error itself. */
export function translateConstraint(recognise: (error: unknown) => ConstraintKind | undefined, error: unknown): unknown {
  const kind = recognise(error);
  return kind === undefined ? error : new ConstraintViolation(kind, error);
}

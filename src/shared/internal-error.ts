/** The part of a Fastify request the internal-error answer uses. */
export interface RequestForErrors {
  readonly id: string;
  readonly log: { error(details: object, message: string): void };
}

/**
 * The answer to a failure nobody foresaw (a bug, a lost store): logs the error with the request id
 * and returns the message the client gets, which carries the id and nothing else, so no stack trace
 * or internal message leaves the process (issue 2 "Bad input ... never a stack trace"). Each
 * interface wraps it in its own form (a SOAP fault, ASMX's text + ".", plain text).
 */
export function internalError(request: RequestForErrors, error: unknown, context: string): string {
  request.log.error({ err: error }, context);
  return `Internal error; quote request id ${request.id} to the operator`;
}

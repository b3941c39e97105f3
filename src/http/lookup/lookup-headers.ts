import type { FastifyReply } from 'fastify';
import type { LookupOutcome } from '../../lookup/lookup-request.js';

/** The response header naming the source that answered (issue 32; docs/providers.md "Routing"). */
export const LOOKUP_SOURCE_HEADER = 'x-lookup-source';

/**
 * The headers every lookup binding adds to an answer, whatever its wire format: `Idempotent-Replayed`
 * on a stored answer, and `X-Lookup-Source` (`store`, a register, a paid upstream, `cache`) on
 * any other: provenance travels beside the document, never in it, so the original's wire is kept.
 */
export function setOutcomeHeaders(reply: FastifyReply, outcome: LookupOutcome): void {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  if (outcome.source !== undefined) reply.header(LOOKUP_SOURCE_HEADER, outcome.source);
}

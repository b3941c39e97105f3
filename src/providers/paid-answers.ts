import type { CachedAnswerReader } from '../datasets/export/answer-lines.js';
import type { PaidUpstreamName } from '../datasets/kept-per-operation.js';
import { carsxeAnswers } from './carsxe/carsxe-answers.js';
import { regcheckAnswers } from './regcheck/regcheck-answers.js';
import { ukvdAnswers } from './ukvd/ukvd-answers.js';
import { vincarioAnswers } from './vincario/vincario-answers.js';

/**
 * How each paid upstream's cached payload reads as the answers it gave, by provider name: what its
 * record file (`<NAME>_RECORD_FILE`, answer-recording.ts) appends and `vehicle-lookup export
 * --source <name>` writes from its upstream cache. Pure functions, so the CLI uses them without
 * starting a provider; the mapped type asks one of every paid upstream (PAID_UPSTREAM_NAMES).
 */
export const PAID_ANSWER_READERS: Readonly<Record<PaidUpstreamName, CachedAnswerReader>> = Object.freeze({
  regcheck: regcheckAnswers,
  ukvd: ukvdAnswers,
  vincario: vincarioAnswers,
  carsxe: carsxeAnswers,
});

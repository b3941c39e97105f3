// A child process for test/gateway/record-replay.slow.test.ts: appends the import line in
// RECORD_LINE to RECORD_FILE through AnswerRecorder, as fast as it can, until it is killed.
import { AnswerRecorder } from '../../src/providers/upstream/answer-recorder.js';

const file = process.env.RECORD_FILE ?? '';
const line = JSON.parse(process.env.RECORD_LINE ?? 'null') as Record<string, unknown>;
const recorder = new AnswerRecorder(file);
process.stdout.write(`ready ${recorder.path}\n`);
let n = 0;
for (;;) {
  n += 1;
  // Big lines (over a page) so a kill can land inside one write; every one a valid import line.
  recorder.append({ ...line, fetchedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n % 1000)).toISOString() });
  if (n % 200 === 0) await new Promise((resolve) => setImmediate(resolve));
}

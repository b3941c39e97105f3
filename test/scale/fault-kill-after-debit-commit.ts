/**
 * A fault for test/scale/idempotency-crash.test.ts, loaded into a real server process with
 * `--import` (spawnServer's `preload`), so the service itself carries no fault hook: once a debit
 * batch that carries an Idempotency-Key has COMMITTED, the process kills itself with SIGKILL,
 * before the lookup's answer is written. Node loads this module before src/main.ts, and both
 * import the same debit-writer module, so the prototype patched here is the one the server uses.
 */
import { DebitWriter } from '../../src/credits/debit-writer.js';

// eslint-disable-next-line @typescript-eslint/unbound-method -- called below with its own `this` (write.call)
const write = DebitWriter.prototype.write;
DebitWriter.prototype.write = async function writeThenDie(this: DebitWriter, batch) {
  const results = await write.call(this, batch);
  if (batch.some((request) => request.details.idempotency !== undefined)) process.kill(process.pid, 'SIGKILL');
  return results;
};

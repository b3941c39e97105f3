import { parentPort, workerData } from 'node:worker_threads';
import { Catalogue } from '../../catalogue/catalogue.js';
import { InFlightLimit, type RdwReaderAck, type RdwReaderData, type RdwReaderMessage } from './rdw-reader.protocol.js';
import { rdwTarget, RdwRowSource } from './rdw-row-source.js';

/**
 * The RDW reader thread: reads and maps the CSV files (RdwRowSource) and posts the rows to the
 * importer, which writes them on its own thread meanwhile. At most BATCHES_IN_FLIGHT batches are
 * unacknowledged at a time. Its last message, `done` or `failed`, comes after RdwRowSource has
 * cleaned up (closed the files, deleted the fuel index).
 */
const port = parentPort;
if (!port) throw new Error('the RDW reader started outside a worker thread');
const options = workerData as RdwReaderData;
const send = (message: RdwReaderMessage): void => {
  port.postMessage(message);
};

const limit = new InFlightLimit();
port.on('message', (message: RdwReaderAck) => {
  if (message.type === 'taken') limit.release();
  else limit.stop(new Error('the RDW import stopped'));
});

try {
  const summary = await new RdwRowSource(rdwTarget(new Catalogue()).plateRule, options).run({
    invalid: (file, line, reason) => {
      limit.check();
      send({ type: 'invalid', file, line, reason });
    },
    progress: (progress) => {
      limit.check();
      send({ type: 'progress', progress });
    },
    async rows(keys, documents) {
      await limit.acquire();
      send({ type: 'rows', keys: keys.join('\n'), documents: documents.join('\n') });
    },
  });
  send({ type: 'done', summary });
} catch (error) {
  const e: Error & { code?: unknown; path?: unknown } = error instanceof Error ? error : new Error(String(error));
  send({
    type: 'failed',
    name: e.name,
    message: e.message,
    code: typeof e.code === 'string' ? e.code : undefined,
    path: typeof e.path === 'string' ? e.path : undefined,
  });
}
// The importer ends this thread once it has the last message.

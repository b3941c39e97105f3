// Entry of worker threads: the service runs its TypeScript through tsx, and a worker thread does
// not inherit the loader, so it registers it and then imports the real entry (workerData.entry).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);

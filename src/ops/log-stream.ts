import { PinoPretty } from 'pino-pretty';
import type { DestinationStream } from 'pino';
import type { LogFormat } from '../config/config.js';

/**
 * Where the service's log lines go. JSON lines on stdout (pino's own default, undefined here) are
 * for machines: a container runtime, journald, a log shipper. A person at a terminal gets one
 * readable line an event instead (`LOG_FORMAT=pretty`, or `auto` with stdout a TTY): time, level,
 * message, then the event's fields inline. Written synchronously on this thread, not through a
 * transport's worker, so the last lines before an exit (a SIGTERM's "shutting down") are never
 * lost and the order matches the JSON form.
 */
export function logStream(format: LogFormat, stdoutIsTty: boolean = process.stdout.isTTY, destination: number | NodeJS.WritableStream = 1): DestinationStream | undefined {
  const pretty = format === 'pretty' || (format === 'auto' && stdoutIsTty);
  if (!pretty) return undefined;
  return PinoPretty({
    destination,
    sync: true,
    singleLine: true,
    colorize: stdoutIsTty,
    translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
}

import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/** A received file in a private temporary directory; `discard` removes both. */
export interface Upload {
  readonly path: string;
  readonly bytes: number;
  discard(): Promise<void>;
}

/** Why an upload was not kept (the temporary file is already removed). */
export class UploadError extends Error {
  constructor(
    readonly code: 'TOO_LARGE' | 'EMPTY' | 'ABORTED',
    message: string,
  ) {
    super(message);
  }
}

/** Temporary directories of uploads start with this (docs/import-format.md names it). */
export const UPLOAD_DIR_PREFIX = 'vehicle-lookup-import-';

/**
 * Streams `source` to a new file in its own temporary directory under `parent` (TMPDIR by
 * default), never holding more than the stream's own buffers in memory, and refuses it as soon as
 * it passes `limit` bytes. Whatever goes wrong, nothing is left on disk.
 *
 * The source is not destroyed on refusal: it is the request itself (or a multipart part of it),
 * and destroying a request destroys its socket before the 413 can be written. It is resumed
 * instead, so the rest of the body is read and dropped until the adapter's answer closes the
 * connection.
 */
export async function receiveUpload(source: Readable, limit: number, parent: string = tmpdir()): Promise<Upload> {
  const dir = await mkdtemp(join(parent, UPLOAD_DIR_PREFIX));
  const path = join(dir, 'upload.jsonl');
  const discard = () => rm(dir, { recursive: true, force: true });
  try {
    const bytes = await copyBounded(source, path, limit);
    if (bytes === 0) throw new UploadError('EMPTY', 'the file is empty');
    return { path, bytes, discard };
  } catch (error) {
    await discard();
    throw error;
  }
}

function copyBounded(source: Readable, path: string, limit: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const out = createWriteStream(path, { flags: 'wx' });
    let bytes = 0;
    let settled = false;
    const finish = (error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      source.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted).off('close', onClose);
      out.off('drain', onDrain);
      if (error === undefined) {
        out.end(() => {
          resolve(bytes);
        });
        return;
      }
      // Drop the rest of the body; see receiveUpload.
      source.on('error', () => undefined);
      source.resume();
      out.destroy();
      // Wait for the file to be closed before the caller removes its directory.
      out.once('close', () => {
        reject(error);
      });
    };
    const onData = (chunk: Buffer | string): void => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buffer.length;
      if (bytes > limit) {
        finish(new UploadError('TOO_LARGE', `the file is larger than the limit of ${limit} bytes (IMPORT_MAX_BYTES)`));
        return;
      }
      if (!out.write(buffer)) source.pause();
    };
    const onDrain = (): void => {
      source.resume();
    };
    const onEnd = (): void => {
      finish(undefined);
    };
    const onError = (error: Error): void => {
      finish(new UploadError('ABORTED', `the upload was interrupted (${error.message})`));
    };
    const onAborted = (): void => {
      finish(new UploadError('ABORTED', 'the client closed the connection before the file was complete'));
    };
    // A request whose connection closes before its end emits 'close' without 'end' (Node 20).
    const onClose = (): void => {
      if (!source.readableEnded) onAborted();
    };
    out.on('error', (error) => {
      if (!settled) {
        settled = true;
        source.off('data', onData);
        source.resume();
        reject(error);
      }
    });
    out.on('drain', onDrain);
    source.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted).on('close', onClose);
    if (source.readableEnded) finish(undefined);
    // Closed before we listened (the client left while the temporary directory was being made):
    // no event will come any more, so without this the upload would wait forever and keep its directory.
    else if (source.destroyed) onAborted();
  });
}

import { open as openFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { CsvInput } from './csv-reader.js';
import { RegisterFileError } from './staged-register-importer.js';

/** The four bytes a ZIP file starts with (a local file header). */
const ZIP_MAGIC = 0x04034b50;

/** True when the file starts as a ZIP archive does. */
export async function isZipFile(path: string): Promise<boolean> {
  const handle = await openFile(path, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    return bytesRead === 4 && head.readUInt32LE(0) === ZIP_MAGIC;
  } finally {
    await handle.close();
  }
}

/** A stream as a CsvInput, counting the bytes that pass. */
export function streamInput(name: string, stream: Readable, size: number, onClose: () => void = () => undefined): CsvInput {
  let read = 0;
  async function* bytes(): AsyncGenerator<Buffer> {
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      read += buffer.length;
      yield buffer;
    }
  }
  return {
    name,
    bytes: bytes(),
    size,
    bytesRead: () => read,
    close: () => {
      stream.destroy();
      onClose();
    },
  };
}

/**
 * The entries of a ZIP file whose names `wanted` accepts, each opened as a stream in turn (never
 * unpacked to disk), with yauzl: it reads the central directory (ZIP64 included, which a 130 GB
 * entry needs) and inflates an entry as it is read. A file that is not a sound ZIP gives a
 * RegisterFileError naming it.
 */
export async function* zipEntryInputs(path: string, wanted: (name: string) => boolean): AsyncGenerator<CsvInput> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false });
  } catch (error) {
    throw new RegisterFileError(`${path}: not a readable ZIP file (${error instanceof Error ? error.message : 'unknown error'})`);
  }
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/') || !wanted(entry.fileName)) continue;
      let stream: Readable;
      try {
        stream = await zip.openReadStreamPromise(entry);
      } catch (error) {
        throw new RegisterFileError(`${path}: cannot read ${entry.fileName} (${error instanceof Error ? error.message : 'unknown error'})`);
      }
      yield streamInput(`${path}:${entry.fileName}`, stream, entry.uncompressedSize);
    }
  } catch (error) {
    if (error instanceof RegisterFileError) throw error;
    throw new RegisterFileError(`${path}: the ZIP file is damaged (${error instanceof Error ? error.message : 'unknown error'})`);
  } finally {
    zip.close();
  }
}

import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, readSync, unlinkSync, writeSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/** Where a recorder reports a line it could not write (the server's logger). */
export interface RecorderLog {
  warn(message: string, error?: unknown): void;
}

/** How far back from the end a torn last line is looked for at start (a line longer than this is cut at its last newline all the same). */
const TAIL_CHUNK = 64 * 1024;

/** Whether the process of `pid` still runs (on this machine). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `dir/name.jsonl` -> `dir/name.4242.jsonl`: the file of a process that found the named one taken. */
export function perProcessPath(path: string, pid: number): string {
  const ext = extname(path);
  return join(dirname(path), `${basename(path, ext)}.${pid}${ext}`);
}

/**
 * Takes `path` for this process: a lock file `path.lock` holding the pid, created exclusively.
 * A lock left by a process that no longer runs (killed) is taken over. Answers whether it was taken.
 */
function claim(path: string, pid: number): boolean {
  const lock = `${path}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, `${pid}\n`, { flag: 'wx' });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(readFileSync(lock, 'utf8'), 10);
    if (Number.isInteger(holder) && holder !== pid && alive(holder)) return false;
    // Left by a killed process: remove it and try once more (a process starting at the same
    // moment may win the new one; then this one writes its own file).
    try {
      unlinkSync(lock);
    } catch {
      // Removed by the other process first.
    }
  }
  return false;
}

/**
 * Cuts a torn last line (a writer killed in the middle of a write that spans pages can leave
 * part of a line without its newline): the file then ends at its last newline. Answers how many
 * bytes were cut.
 */
function cutTornTail(fd: number): number {
  const size = fstatSync(fd).size;
  if (size === 0) return 0;
  let end = size;
  const buffer = Buffer.alloc(TAIL_CHUNK);
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const read = readSync(fd, buffer, 0, end - start, start);
    const at = buffer.subarray(0, read).lastIndexOf(0x0a);
    if (at >= 0) {
      const keep = start + at + 1;
      if (keep < size) ftruncateSync(fd, keep);
      return size - keep;
    }
    end = start;
  }
  ftruncateSync(fd, 0);
  return size;
}

/**
 * An append-only JSON Lines file of upstream answers (`<NAME>_RECORD_FILE`), written so that a
 * crash never leaves a half line in what is imported later:
 * - each line is one `write` on a descriptor opened with O_APPEND, the line and its newline in
 *   one buffer, written synchronously when the answer arrives (nothing waits in memory to be lost;
 *   a few kilobytes to the page cache, next to the upstream round trip that produced them);
 * - one process writes a file: it takes the file with a lock file (`<file>.lock`, its pid), and
 *   a process that finds it held by a running one writes `<name>.<pid>.jsonl` beside it instead
 *   (the cluster mode's workers, a second instance on the machine). Lines of several writers are
 *   therefore never interleaved, and a torn line is always the last of its file;
 * - on start the writer cuts a torn last line left by a killed writer (everything after the last
 *   newline), so the file imports cleanly and the next line starts on its own.
 * Several files are imported one after the other (or concatenated first: each is whole lines).
 */
export class AnswerRecorder {
  private fd: number | undefined;
  private locked = false;
  /** The file this process writes (the configured one, or its per-process neighbour). */
  readonly path: string;
  /** Bytes of a torn last line cut at start. */
  readonly cutBytes: number;

  constructor(
    configured: string,
    private readonly log?: RecorderLog,
    pid: number = process.pid,
  ) {
    this.locked = claim(configured, pid);
    if (!this.locked) {
      this.path = perProcessPath(configured, pid);
      this.locked = claim(this.path, pid);
    } else {
      this.path = configured;
    }
    this.fd = openSync(this.path, 'a+');
    this.cutBytes = cutTornTail(this.fd);
  }

  /** Appends one line (one JSON value, no newline in it). Never throws: a failed write is logged. */
  append(line: unknown): void {
    if (this.fd === undefined) return;
    try {
      const bytes = Buffer.from(`${JSON.stringify(line)}\n`, 'utf8');
      // One write for the whole line; a short write (a full disk) is finished by the next ones,
      // still at the end of this process's own file.
      let written = writeSync(this.fd, bytes);
      while (written < bytes.length) written += writeSync(this.fd, bytes, written);
    } catch (error) {
      this.log?.warn(`an answer could not be appended to ${this.path}`, error);
    }
  }

  /** Closes the file and gives it up (removes the lock). */
  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    if (this.locked) {
      try {
        unlinkSync(`${this.path}.lock`);
      } catch {
        // Already gone.
      }
    }
  }
}

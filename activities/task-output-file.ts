// Opens a file a task wrote into its results directory, safely: a task controls that directory, so
// it may leave a FIFO, a device or a link to any host file where result.json or records.jsonl belongs.

import { closeSync, constants, createReadStream, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import path from 'node:path';

export type OpenedTaskOutput = { kind: 'opened'; fd: number; size: number } | { kind: 'missing' } | { kind: 'refused'; problem: string };

/**
 * O_NOFOLLOW refuses a link in the final component; O_NONBLOCK keeps a FIFO or device from blocking
 * the open (and with it the worker's event loop); O_NOCTTY keeps a terminal device from becoming ours.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Opens `resultsDir/name` for reading only when it is a regular file inside that directory. The
 * caller owns the returned fd. `name` is a plain file name: the contract's outputs sit at the top of
 * the results directory. A refusal's problem names what the task left there, e.g.
 * `result.json is a FIFO, not a regular file`.
 */
export function openTaskOutputFile(resultsDir: string, name: string): OpenedTaskOutput {
  if (!name || name.includes('/') || name === '.' || name === '..') throw new Error(`openTaskOutputFile: expected a plain file name, got "${name}"`);
  // The results directory itself is the container's mount point, made by the worker; the task can
  // change what is inside it, never the directory. A link here would be the host's own doing, but it
  // would still lead reads out of the job, so it is refused too.
  for (const dir of [path.dirname(resultsDir), resultsDir]) {
    let stat: Stats;
    try {
      stat = lstatSync(dir);
    } catch {
      return { kind: 'missing' };
    }
    if (stat.isSymbolicLink()) return { kind: 'refused', problem: `${path.basename(dir)}/ is a symbolic link; links are not followed` };
    if (!stat.isDirectory()) return { kind: 'refused', problem: `${path.basename(dir)}/ is ${kindOf(stat)}, not a directory` };
  }
  const file = path.join(resultsDir, name);
  let before: Stats | undefined;
  try {
    // No error (and its stack) for the usual miss: most tasks write no records.jsonl.
    before = lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return { kind: 'missing' };
  }
  if (!before) return { kind: 'missing' };
  // Checked before opening, so a device node is never opened at all; checked again on the fd below,
  // since the task may swap the entry in between.
  if (!before.isFile()) return { kind: 'refused', problem: refusal(name, before) };
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'refused', problem: `${name} is a symbolic link; links are not followed` };
    return { kind: 'refused', problem: `${name} could not be opened (${code ?? 'unknown error'})` };
  }
  const stat = fstatSync(fd);
  if (!stat.isFile() || stat.ino !== before.ino || stat.dev !== before.dev) {
    closeSync(fd);
    return { kind: 'refused', problem: stat.isFile() ? `${name} was replaced while it was being opened` : refusal(name, stat) };
  }
  return { kind: 'opened', fd, size: stat.size };
}

export type TaskOutputText = { kind: 'text'; text: string } | { kind: 'missing' } | { kind: 'refused'; problem: string };

/**
 * All of an open file's bytes, or undefined when there are more than `capBytes`. The buffer is sized
 * by `sizeHint` (fstat's size), not by the cap: a zeroed cap-sized buffer per job was most of a
 * worker's garbage. It grows for a file still growing, never past one byte over the cap: that byte
 * tells a file that grew past the cap from one that fits. Only the bytes read are ever exposed.
 */
export function readCapped(fd: number, sizeHint: number, capBytes: number): Buffer | undefined {
  let buffer = Buffer.allocUnsafe(Math.min(sizeHint, capBytes) + 1);
  let read = 0;
  for (let n = 1; n > 0 && read <= capBytes; read += n) {
    if (read === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(Math.min(buffer.length, capBytes + 1 - read))]);
    n = readSync(fd, buffer, read, buffer.length - read, read);
  }
  return read > capBytes ? undefined : buffer.subarray(0, read);
}

/** The whole of a small task output file as UTF-8, refused when it is over `capBytes`. */
export function readTaskOutputText(resultsDir: string, name: string, capBytes: number): TaskOutputText {
  const opened = openTaskOutputFile(resultsDir, name);
  if (opened.kind !== 'opened') return opened;
  try {
    if (opened.size > capBytes) return { kind: 'refused', problem: `${name} is ${opened.size} bytes; expected at most ${capBytes}` };
    const bytes = readCapped(opened.fd, opened.size, capBytes);
    if (bytes === undefined) return { kind: 'refused', problem: `${name} grew past ${capBytes} bytes while it was being read` };
    return { kind: 'text', text: bytes.toString('utf8') };
  } finally {
    closeSync(opened.fd);
  }
}

export interface TaskOutputLine {
  /** 1-based, counting blank lines. */
  line: number;
  /** The line without its `\n` (or `\r\n`); undefined when it was longer than the cap and skipped. */
  text: string | undefined;
}

/**
 * The lines of an opened task output file, streamed: memory stays flat whatever its size. A line
 * longer than `maxLineBytes` is skipped (its text undefined) rather than buffered; reading stops
 * after `capBytes`. Closes the fd when done.
 */
export async function* linesOfTaskOutput(fd: number, maxLineBytes: number, capBytes: number): AsyncGenerator<TaskOutputLine> {
  const stream = createReadStream('', { fd, autoClose: true, end: capBytes - 1, highWaterMark: 256 * 1024 });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let tooLong = false;
  let line = 0;
  const finish = (): TaskOutputLine => {
    line += 1;
    let text: string | undefined;
    if (!tooLong) {
      // A line inside one read chunk (nearly all of them) is decoded where it lies, not copied first.
      text = (pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes)).toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (line === 1) text = text.replace(/^\uFEFF/, '');
    }
    pending = [];
    pendingBytes = 0;
    tooLong = false;
    return { line, text };
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
        keep(chunk.subarray(start, at));
        yield finish();
        start = at + 1;
      }
      keep(chunk.subarray(start));
    }
    if (pendingBytes > 0 || tooLong) yield finish();
  } finally {
    stream.destroy();
  }

  function keep(part: Buffer): void {
    if (tooLong || part.length === 0) return;
    if (pendingBytes + part.length > maxLineBytes) {
      tooLong = true;
      pending = [];
      pendingBytes = 0;
      return;
    }
    pending.push(part);
    pendingBytes += part.length;
  }
}

function refusal(name: string, stat: Stats): string {
  if (stat.isSymbolicLink()) return `${name} is a symbolic link; links are not followed`;
  return `${name} is ${kindOf(stat)}, not a regular file`;
}

function kindOf(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

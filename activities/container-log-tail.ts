// The end of a job's container.log, kept as an artifact (container-tail.log beside it) and shown, as
// one redacted line, in the job's message: workflow history gets no more of what a task printed.

import { closeSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { JOB_FILES } from '../runs/job-artifacts.js';
import path from 'node:path';
import { redactSecrets } from './redact-secrets.js';

const TAIL_LINES = 20;
/** Lines the DinD runtime's entrypoint prints about itself (runtime/dind/entrypoint.sh). */
const DIND_RUNTIME_PREFIX = '[dind] ';
/** Only the end of the log is read: a task may print gigabytes. */
const TAIL_READ_BYTES = 64 * 1024;
/** The most of the last log line a job's message shows. */
export const SHOWN_LINE_CHARS = 300;

/**
 * Writes the last lines of the job's container.log, redacted, to container-tail.log, and returns
 * the last non-empty one, redacted and cut to SHOWN_LINE_CHARS, for the job's message ('' if none).
 */
export function keepLogTail(jobDir: string, secrets: readonly string[]): string {
  // Docker stamps each line as it reads it; stdout and stderr are read apart, so lines printed within
  // a moment of each other on the two streams may be saved in either order.
  const lines = redactSecrets(endOf(path.join(jobDir, JOB_FILES.containerLog)), secrets)
    .split('\n')
    .map((l) => l.replace(/\r$/, '').replace(/^\S+Z /, ''));
  const tail = lines.slice(-TAIL_LINES);
  writeFileSync(path.join(jobDir, JOB_FILES.containerTail), tail.length && tail.join('').trim() ? `${tail.join('\n')}\n` : '');
  // The DinD runtime's own closing lines ("[dind] task exited ...") follow the task's: the task's last
  // word is what explains a failure, the runtime's only when the task said nothing.
  const said = lines.filter((l) => l.trim());
  return shownLine(said.filter((l) => !l.startsWith(DIND_RUNTIME_PREFIX)).at(-1) ?? said.at(-1) ?? '');
}

/** One log line as a job message may show it; secrets must already be gone (a cut could split one). */
export function shownLine(line: string): string {
  const trimmed = line.trim();
  return trimmed.length > SHOWN_LINE_CHARS ? `${trimmed.slice(0, SHOWN_LINE_CHARS - 3)}...` : trimmed;
}

/** The file's last TAIL_READ_BYTES, starting at a line boundary when the cut falls inside a line. */
function endOf(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - TAIL_READ_BYTES);
    const buffer = Buffer.alloc(size - start);
    let read = 0;
    for (let n = 1; n > 0 && read < buffer.length; read += n) n = readSync(fd, buffer, read, buffer.length - read, start + read);
    const text = buffer.subarray(0, read).toString('utf8').trimEnd();
    if (start === 0) return text;
    // The window's first line is cut: it is dropped, since a secret in it would be cut too and so escape redaction.
    const firstBreak = text.indexOf('\n');
    return firstBreak === -1 ? `[last log line longer than ${TAIL_READ_BYTES} bytes; see ${JOB_FILES.containerLog}]` : text.slice(firstBreak + 1);
  } finally {
    closeSync(fd);
  }
}

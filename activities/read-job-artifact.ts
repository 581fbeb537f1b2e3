// listJobArtifacts / readJobArtifact: a job's artifact files, served by the host that ran the job,
// so a client on another machine reads them through Temporal (client/remote-artifacts.ts) instead
// of a shared mount. Reads are paged and bounded: one page fits well inside a Temporal payload.

import { ApplicationFailure } from '@temporalio/activity';
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { jobArtifactsDir } from '../runs/job-artifacts.js';

/** Raw bytes per page; base64 makes it ~683 KiB, under Temporal's 2 MiB payload limit with room for a codec. */
export const ARTIFACT_PAGE_BYTES = 512 * 1024;

export interface JobArtifactRef {
  runId: string;
  jobId: string;
}

export interface ArtifactFile {
  /** Relative to the job's artifact directory, with `/` separators. */
  file: string;
  bytes: number;
}

export interface ArtifactPageRequest extends JobArtifactRef {
  file: string;
  offset: number;
}

export interface ArtifactPage {
  /** The page's bytes, base64: a JSON payload carries a string compactly, a Buffer not. */
  base64: string;
  offset: number;
  /** The file's size when read: the client knows how many pages remain. */
  totalBytes: number;
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/;

function jobDirOf(artifactsRoot: string, ref: JobArtifactRef): string {
  for (const [field, value] of [
    ['runId', ref.runId],
    ['jobId', ref.jobId],
  ] as const) {
    if (!SAFE_ID.test(value)) throw ApplicationFailure.nonRetryable(`${field}: expected a run or job id, got ${JSON.stringify(value)}`, 'BadArtifactRequest');
  }
  return path.resolve(jobArtifactsDir(artifactsRoot, ref));
}

export function listJobArtifacts(artifactsRoot: string, ref: JobArtifactRef): ArtifactFile[] {
  const root = jobDirOf(artifactsRoot, ref);
  if (!existsSync(root))
    throw ApplicationFailure.nonRetryable(`no artifacts of job ${ref.jobId} of run ${ref.runId} on this host (${root})`, 'ArtifactNotFound');
  const files: ArtifactFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      // Symlinks are skipped: a benchmark could point one anywhere on the host.
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files.push({ file: path.relative(root, full).split(path.sep).join('/'), bytes: statSync(full).size });
    }
  };
  walk(root);
  return files;
}

export function readJobArtifact(artifactsRoot: string, request: ArtifactPageRequest): ArtifactPage {
  const root = jobDirOf(artifactsRoot, request);
  const file = path.resolve(root, request.file);
  if (!file.startsWith(root + path.sep))
    throw ApplicationFailure.nonRetryable(
      `file: expected a path inside job ${request.jobId}'s artifacts, got ${JSON.stringify(request.file)}`,
      'BadArtifactRequest',
    );
  if (!Number.isInteger(request.offset) || request.offset < 0)
    throw ApplicationFailure.nonRetryable(`offset: expected a non-negative integer, got ${request.offset}`, 'BadArtifactRequest');
  const { fd, size } = openArtifactFile(root, file, request);
  try {
    const buffer = Buffer.alloc(Math.min(ARTIFACT_PAGE_BYTES, Math.max(0, size - request.offset)));
    const read = buffer.length ? readSync(fd, buffer, 0, buffer.length, request.offset) : 0;
    return { base64: buffer.subarray(0, read).toString('base64'), offset: request.offset, totalBytes: size };
  } finally {
    closeSync(fd);
  }
}

/**
 * O_NOFOLLOW refuses a link as the file itself; O_NONBLOCK keeps a FIFO swapped in after the checks
 * from blocking the worker's event loop on open.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Opens an artifact only as a regular file reached through no link: a task controls its results/
 * directory and may leave there a link to any host file (the worker's /proc/self/environ holds API
 * keys) or a FIFO, and the lexical check above does not see through either.
 */
function openArtifactFile(root: string, file: string, request: ArtifactPageRequest): { fd: number; size: number } {
  const notFound = () =>
    ApplicationFailure.nonRetryable(`${request.file}: no such artifact of job ${request.jobId} of run ${request.runId} on this host`, 'ArtifactNotFound');
  const refused = (why: string) =>
    ApplicationFailure.nonRetryable(
      `file: expected a regular file inside job ${request.jobId}'s artifacts, got ${JSON.stringify(request.file)} (${why})`,
      'BadArtifactRequest',
    );
  const parts = path.relative(root, file).split(path.sep);
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    let stats;
    try {
      stats = lstatSync(dir);
    } catch {
      throw notFound();
    }
    if (stats.isSymbolicLink()) throw refused(`${path.relative(root, dir)} is a symbolic link; links are not followed`);
    if (!stats.isDirectory()) throw notFound();
  }
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound();
    if (code === 'ELOOP') throw refused('a symbolic link; links are not followed');
    throw refused(`cannot be opened: ${code ?? (error as Error).message}`);
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw refused(stats.isDirectory() ? 'a directory' : 'not a regular file');
  }
  return { fd, size: stats.size };
}

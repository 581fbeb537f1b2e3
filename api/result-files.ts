// The files a job's task wrote (its results/ directory) as the API and the dashboard read them: listed
// under a prefix, and one read whole, from this host's artifact root when the job's directory is here,
// else from the host that ran the job through Temporal. Both go through activities/read-job-artifact.ts,
// whose checks (inside the job's directory, no link followed, regular files only) apply either way; the
// caller's path is checked here first (runs/instance-list.ts resultsPath), so a bad one is a 400.

import { ApplicationFailure } from '@temporalio/common';
import path from 'node:path';
import { listJobArtifacts, readJobArtifact, type ArtifactFile } from '../activities/read-job-artifact.js';
import { listRemoteArtifacts, readRemoteArtifact, RemoteArtifactError, REMOTE_ARTIFACT_MAX_BYTES } from '../client/remote-artifacts.js';
import { JOB_FILES } from '../runs/job-artifacts.js';
import { resultsPath } from '../runs/instance-list.js';
import type { JobResult } from '../runs/run-spec.js';
import { ApiError } from './api-error.js';
import type { ApiContext } from './api-context.js';
import { jobFilesHere } from './job-files.js';

/** A file is read whole, at most this long: the same bound as a read through Temporal. */
export const RESULT_FILE_MAX_BYTES = REMOTE_ARTIFACT_MAX_BYTES;

/** The results/ directory as listings and reads name it inside the job's directory. */
const RESULTS = `${JOB_FILES.results}/`;

/** The caller's path inside the job's results, canonical, or a 400 naming the field. */
export function resultsPathOr400(text: string, field: string): string {
  const checked = resultsPath(text);
  if ('problem' in checked) throw new ApiError(400, `${field.replace(/^\w+\./, '')}: ${checked.problem}`, field);
  return checked.path;
}

/** Where the job's files are read: its run (a carried job's files stay under the run that made them) and, when not here, its host. */
function jobPlace(context: ApiContext, runId: string, job: JobResult): { runId: string; jobId: string; host?: string } {
  const ref = { runId: job.carriedFrom ?? runId, jobId: job.jobId };
  return jobFilesHere(context, runId, job) ? ref : { ...ref, host: job.host! };
}

/** The read layers' failures as the API's: no such file 404, a refused path or file 400, a host that does not answer 503. */
function apiErrorOf(error: unknown, field: string): unknown {
  const type = error instanceof RemoteArtifactError ? error.type : error instanceof ApplicationFailure ? error.type : undefined;
  if (type === 'ArtifactNotFound') return new ApiError(404, (error as Error).message, field);
  if (type === 'BadArtifactRequest') return new ApiError(400, (error as Error).message, field);
  if (error instanceof RemoteArtifactError) return new ApiError(503, (error as Error).message);
  if (error instanceof Error && /byte limit/.test(error.message)) return new ApiError(413, error.message, field);
  return error;
}

/** The files under `prefix` of the job's results (the file itself when it names one), relative to results/, in path order. */
export async function listResultFiles(context: ApiContext, runId: string, job: JobResult, prefix: string): Promise<ArtifactFile[]> {
  const place = jobPlace(context, runId, job);
  let files: ArtifactFile[];
  try {
    files = place.host
      ? await listRemoteArtifacts(context.client, context.settings, { ...place, host: place.host })
      : listJobArtifacts(context.settings.artifactsRoot, place);
  } catch (error) {
    throw apiErrorOf(error, 'path.job');
  }
  const under = RESULTS + prefix;
  return files
    .filter((f) => f.file.startsWith(RESULTS) && (!prefix || f.file === under || f.file.startsWith(`${under}/`)))
    .map((f) => ({ file: f.file.slice(RESULTS.length), bytes: f.bytes }));
}

/** One file of the job's results, whole; a 404 when there is none, a 413 past `maxBytes`. */
export async function readResultFile(context: ApiContext, runId: string, job: JobResult, file: string, maxBytes = RESULT_FILE_MAX_BYTES): Promise<Buffer> {
  const place = jobPlace(context, runId, job);
  try {
    if (place.host) return await readRemoteArtifact(context.client, context.settings, { ...place, host: place.host }, RESULTS + file, maxBytes);
    return readHere(context.settings.artifactsRoot, { runId: place.runId, jobId: place.jobId, file: RESULTS + file }, maxBytes);
  } catch (error) {
    throw apiErrorOf(error, 'query.path');
  }
}

/** A file of this host's artifacts through the host activity's own reader, page by page, as a remote read pages it. */
function readHere(artifactsRoot: string, request: { runId: string; jobId: string; file: string }, maxBytes: number): Buffer {
  const pages: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const page = readJobArtifact(artifactsRoot, { ...request, offset });
    if (page.totalBytes > maxBytes)
      throw new ApiError(413, `${request.file} of job ${request.jobId}: ${page.totalBytes} bytes exceeds the ${maxBytes}-byte limit`);
    const bytes = Buffer.from(page.base64, 'base64');
    pages.push(bytes);
    offset += bytes.length;
    // A file that shrank while read ends at its new end; one that grew is read as far as it was.
    if (!bytes.length || offset >= page.totalBytes) return Buffer.concat(pages);
  }
}

/** How many leading bytes decide whether a file is text. */
const SNIFF_BYTES = 8192;

/** UTF-8 text without NUL bytes: what is shown as text rather than offered as a download. */
export function isText(bytes: Buffer): boolean {
  if (bytes.subarray(0, SNIFF_BYTES).includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * The type a result file is served as: JSON for `.json`, plain text for any other text, bytes otherwise.
 * Never HTML, SVG or a script by their names: a task writes these files, and its page must not run on this site.
 */
export function resultFileType(file: string, bytes: Buffer): string {
  if (!isText(bytes)) return 'application/octet-stream';
  return path.posix.extname(file).toLowerCase() === '.json' ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8';
}

/** The headers a result file is served with: its type, no sniffing, no script, and a download unless text. */
export function resultFileHeaders(file: string, bytes: Buffer): Record<string, string> {
  const type = resultFileType(file, bytes);
  // RFC 5987's filename*: every byte but letters, digits and a few marks percent-encoded, so no quote or line break reaches the header.
  const name = encodeURIComponent(path.posix.basename(file)).replace(/['()*!]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return {
    'content-type': type,
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'content-disposition': `${type.startsWith('application/octet-stream') ? 'attachment' : 'inline'}; filename*=UTF-8''${name}`,
  };
}

// What a run's jobs left under the artifact root (result.json, normalized.json, records.jsonl,
// container.log and its tail, usage-*.json): the jobs and their files, on this host, or on the host
// that ran each job, read through Temporal (client/remote-artifacts.ts). `br artifacts`, `br logs`
// and `br records` read through this.

import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RemoteJob } from '../client/remote-artifacts.js';
import type { JobWhere } from '../client/job-hosts.js';
import { InputError } from '../contract/problems.js';
import { jobArtifactsDir, jobFile, jobFilePath, RUN_DIRS, type JobFile } from '../runs/job-artifacts.js';
import { jobIdPart } from '../runs/job-specs.js';

/** Artifacts on other hosts, through Temporal. */
export interface RemoteArtifactAccess {
  /** The run's jobs with a result and the host each ran on; undefined when Temporal does not know the run. */
  jobsOf(runId: string): Promise<JobWhere[] | undefined>;
  list(job: RemoteJob): Promise<Array<{ file: string; bytes: number }>>;
  /** One file, whole; undefined when the host has no such file. */
  read(job: RemoteJob, file: string): Promise<Buffer | undefined>;
}

export interface ArtifactCommandDeps {
  /** The artifact root on this host (BENCHROUTER_ARTIFACTS). */
  artifactsRoot: () => string;
  /** Where output goes (default: process.stdout, waiting when the pipe is full). */
  stdout?: (text: string) => void | Promise<void>;
  /** Notes, bad lines and summaries, one line each (default: process.stderr). */
  stderr?: (line: string) => void;
  /** Without it (or when Temporal cannot be reached), only this host's artifacts are read. */
  remote?: () => Promise<RemoteArtifactAccess | undefined>;
}

export interface ArtifactFile {
  /** Relative to the job's directory, `/`-separated: `results/result.json`. */
  name: string;
  /** Its path on this host; null for a file on another host. */
  path: string | null;
  bytes: number;
}

export interface JobArtifacts {
  jobId: string;
  /** The job's directory on this host; null when its files are on another host. */
  dir: string | null;
  /** The host that holds the files, when it is not this one. */
  host?: string;
  files: ArtifactFile[];
}

/** A job of a run and where its files are: a directory on this host, or another host's. */
export type LocatedJob = { jobId: string; dir: string } | { jobId: string; remote: RemoteJob };

/** Run-level directories beside the job directories (the gateway's answer cache). */
const RUN_LEVEL_DIRS = new Set<string>(Object.values(RUN_DIRS));

function checkRunId(runId: string): void {
  if (!runId || runId.includes('/') || runId.includes('\\') || runId === '.' || runId === '..') {
    throw new InputError([{ file: '<run>', field: '', message: `expected a run id, got "${runId}"` }]);
  }
}

/** The job ids of a run with a directory on this host. */
function localJobIds(root: string, runId: string): string[] {
  const runDir = path.join(root, runId);
  return existsSync(runDir)
    ? readdirSync(runDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !RUN_LEVEL_DIRS.has(e.name))
        .map((e) => e.name)
    : [];
}

/**
 * The jobs of a run, each where its files are: this host's directories, then (when Temporal knows the
 * run) every job that ran on another host and left nothing here. `jobArg` picks one job, or a task's.
 */
export async function locateJobs(deps: ArtifactCommandDeps, runId: string, jobArg: string | undefined): Promise<LocatedJob[]> {
  checkRunId(runId);
  const root = deps.artifactsRoot();
  const located = new Map<string, LocatedJob>(localJobIds(root, runId).map((jobId) => [jobId, { jobId, dir: jobArtifactsDir(root, { runId, jobId }) }]));
  const remote = await deps.remote?.();
  for (const job of (await remote?.jobsOf(runId)) ?? []) {
    if (located.has(job.jobId)) continue;
    const dir = jobArtifactsDir(root, { runId, ...job });
    if (existsSync(dir)) located.set(job.jobId, { jobId: job.jobId, dir });
    else if (job.host) located.set(job.jobId, { jobId: job.jobId, remote: { runId: job.carriedFrom ?? runId, jobId: job.jobId, host: job.host } });
  }
  // In job order whichever run a job came from (a retry's carried jobs keep their original run's ids): a task's
  // shards then come in shard order, and their records in instance order.
  const inRun = (jobId: string) => jobId.slice(jobId.indexOf('.') + 1);
  const ordered = [...located.keys()].sort((a, b) => inRun(a).localeCompare(inRun(b)) || a.localeCompare(b));
  const ids = matchJobs(root, runId, ordered, jobArg, remote !== undefined);
  return ids.map((jobId) => located.get(jobId)!);
}

function matchJobs(root: string, runId: string, jobs: string[], jobArg: string | undefined, askedTemporal: boolean): string[] {
  const runDir = path.join(root, runId);
  if (!jobs.length) {
    throw new InputError([
      {
        file: runDir,
        field: '',
        message: askedTemporal
          ? `no artifacts of run ${runId} on this host, and Temporal names no other host that ran a job of it (an unknown run, or none of its jobs finished yet)`
          : `no artifacts of run ${runId} on this host: artifacts stay on the host that ran each job, unless BENCHROUTER_ARTIFACTS points every host at a shared mount`,
      },
    ]);
  }
  if (jobArg === undefined) return jobs;
  const matching = jobs.filter((jobId) => jobId === jobArg || jobId === `${runId}.${jobArg}` || taskOf(runId, jobId) === jobIdPart(jobArg));
  if (!matching.length) {
    throw new InputError([
      { file: runDir, field: '', message: `no job "${jobArg}" in run ${runId} (have ${jobs.map((j) => shortJobId(runId, j)).join(', ')})` },
    ]);
  }
  return matching;
}

/** A job's container-tail.log (its last log lines, secrets redacted) on this host; undefined before the job finished here. */
export function jobLogTail(root: string, runId: string, jobId: string): string | undefined {
  const file = jobFile(root, { runId, jobId }, 'containerTail');
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** One file of a located job, whole, wherever it is; undefined when the job has no such file. */
export async function readJobFile(deps: ArtifactCommandDeps, job: LocatedJob, file: JobFile): Promise<Buffer | undefined> {
  if ('dir' in job) {
    const local = path.join(job.dir, ...jobFilePath(file).split('/'));
    return existsSync(local) ? readFileSync(local) : undefined;
  }
  const remote = await deps.remote?.();
  if (!remote) throw new Error(`job ${job.jobId} ran on host ${job.remote.host}: its files are read through Temporal, which cannot be reached`);
  return remote.read(job.remote, jobFilePath(file));
}

/** Where a located job's files are, for people: `this host` or `host <id>`. */
export function whereIs(job: LocatedJob): string {
  return 'dir' in job ? 'this host' : `host ${job.remote.host}`;
}

/** A job id without its run's prefix: `br-…-a1b2c3.000-addition` → `000-addition`. */
export function shortJobId(runId: string, jobId: string): string {
  return jobId.startsWith(`${runId}.`) ? jobId.slice(runId.length + 1) : jobId;
}

/** The task name inside a job id (`<run>.<NNN>-<task>[.r<repeat>]`). */
function taskOf(runId: string, jobId: string): string | undefined {
  return /^\d+-(.+?)(\.r\d+)?$/.exec(shortJobId(runId, jobId))?.[1];
}

/** A located job's files, listed on this host or by the host that holds them. */
export async function jobArtifacts(deps: ArtifactCommandDeps, job: LocatedJob): Promise<JobArtifacts> {
  if ('remote' in job) {
    const remote = await deps.remote?.();
    if (!remote) throw new Error(`job ${job.jobId} ran on host ${job.remote.host}: its files are read through Temporal, which cannot be reached`);
    const files = (await remote.list(job.remote)).map((f): ArtifactFile => ({ name: f.file, path: null, bytes: f.bytes }));
    return { jobId: job.jobId, dir: null, host: job.remote.host, files: files.sort((a, b) => a.name.localeCompare(b.name)) };
  }
  const { dir } = job;
  const files: ArtifactFile[] = [];
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const name = sub ? `${sub}/${entry.name}` : entry.name;
      const full = path.join(dir, name);
      if (entry.isDirectory()) walk(name);
      else files.push({ name, path: full, bytes: lstatSync(full).size });
    }
  };
  walk('');
  files.sort((a, b) => a.name.localeCompare(b.name));
  return { jobId: job.jobId, dir, files };
}

export function directorySize(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = directorySize(full);
      files += inner.files;
      bytes += inner.bytes;
    } else {
      files += 1;
      bytes += lstatSync(full).size;
    }
  }
  return { files, bytes };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

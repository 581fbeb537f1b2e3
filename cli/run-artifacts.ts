// What a run's jobs left under the artifact root on this host (result.json, normalized.json,
// records.jsonl, container.log and its tail, usage-*.json): the jobs and their files. `br artifacts`,
// `br logs` and `br records` read through this.

import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../contract/problems.js';
import { jobArtifactsDir, jobFile, RUN_DIRS } from '../runs/job-artifacts.js';

export interface ArtifactCommandDeps {
  /** The artifact root on this host (BENCHROUTER_ARTIFACTS). */
  artifactsRoot: () => string;
  /** Where output goes (default: process.stdout, waiting when the pipe is full). */
  stdout?: (text: string) => void | Promise<void>;
  /** Notes, bad lines and summaries, one line each (default: process.stderr). */
  stderr?: (line: string) => void;
}

export interface ArtifactFile {
  /** Relative to the job's directory, `/`-separated: `results/result.json`. */
  name: string;
  path: string;
  bytes: number;
}

export interface JobArtifacts {
  jobId: string;
  dir: string;
  files: ArtifactFile[];
}

/** Run-level directories beside the job directories (the gateway's answer cache). */
const RUN_LEVEL_DIRS = new Set<string>(Object.values(RUN_DIRS));

/** The job ids of a run with artifacts on this host, or the ones `jobArg` names; bad input otherwise. */
export function selectJobs(root: string, runId: string, jobArg: string | undefined): string[] {
  if (!runId || runId.includes('/') || runId.includes('\\') || runId === '.' || runId === '..') {
    throw new InputError([{ file: '<run>', field: '', message: `expected a run id, got "${runId}"` }]);
  }
  const runDir = path.join(root, runId);
  const jobs = existsSync(runDir)
    ? readdirSync(runDir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !RUN_LEVEL_DIRS.has(e.name))
        .map((e) => e.name)
        .sort()
    : [];
  if (!jobs.length) {
    throw new InputError([
      {
        file: runDir,
        field: '',
        message: `no artifacts of run ${runId} on this host: artifacts stay on the host that ran each job, unless BENCHROUTER_ARTIFACTS points every host at a shared mount`,
      },
    ]);
  }
  if (jobArg === undefined) return jobs;
  const matching = jobs.filter((jobId) => jobId === jobArg || jobId === `${runId}.${jobArg}` || taskOf(runId, jobId) === jobArg);
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

/** A job id without its run's prefix: `br-…-a1b2c3.000-addition` → `000-addition`. */
export function shortJobId(runId: string, jobId: string): string {
  return jobId.startsWith(`${runId}.`) ? jobId.slice(runId.length + 1) : jobId;
}

/** The task name inside a job id (`<run>.<NNN>-<task>[.r<repeat>]`). */
function taskOf(runId: string, jobId: string): string | undefined {
  return /^\d+-(.+?)(\.r\d+)?$/.exec(shortJobId(runId, jobId))?.[1];
}

export function jobArtifacts(root: string, runId: string, jobId: string): JobArtifacts {
  const dir = jobArtifactsDir(root, { runId, jobId });
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
  return { jobId, dir, files };
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

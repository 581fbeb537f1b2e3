// `br artifacts`, `br logs` and `br records`: what a run's jobs left under the artifact root on this
// host (result.json, normalized.json, records.jsonl, container.log and its tail, usage-*.json), and
// the benchmark's per-instance records streamed from it, with bad lines reported rather than dropped.

import type { Command } from 'commander';
import { once } from 'node:events';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CONTAINER_TAIL_FILE } from '../activities/container-log-tail.js';
import { readRecordsFile } from '../activities/records-file.js';
import { InputError } from '../contract/problems.js';
import { renderView, type TableCell } from './table-export.js';

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
const RUN_LEVEL_DIRS = new Set(['gateway-cache']);
const RECORDS_FILE = path.join('results', 'records.jsonl');
const CELL_TEXT_MAX = 60;

const example = (...lines: string[]) => `\nExample:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

export function registerArtifactCommands(program: Command, deps: ArtifactCommandDeps): void {
  const stdout = deps.stdout ?? writeStdout;
  const stderr = deps.stderr ?? ((line: string) => void process.stderr.write(`${line}\n`));

  program
    .command('artifacts')
    .description("list a run's artifact files on this host, job by job, with their paths and sizes")
    .argument('<run>', 'run id')
    .argument('[job]', 'only this job: its id, the part after "<run>.", or its task name')
    .option('--json', 'print as JSON')
    .addHelpText('after', example('$ br artifacts br-20261129-120000-a1b2c3', '$ br artifacts br-20261129-120000-a1b2c3 addition --json'))
    .action(async (runId: string, jobArg: string | undefined, flags: { json?: boolean }) => {
      const root = deps.artifactsRoot();
      const jobs = selectJobs(root, runId, jobArg).map((jobId) => jobArtifacts(root, runId, jobId));
      const cacheDir = path.join(root, runId, 'gateway-cache');
      const cache = existsSync(cacheDir) ? { path: cacheDir, ...directorySize(cacheDir) } : null;
      if (flags.json) {
        await stdout(`${JSON.stringify({ runId, dir: path.join(root, runId), jobs, gatewayCache: cache }, null, 2)}\n`);
        return;
      }
      const rows: TableCell[][] = jobs.flatMap((job) =>
        job.files.length ? job.files.map((f): TableCell[] => [shortJobId(runId, job.jobId), f.name, formatBytes(f.bytes), f.path]) : [[shortJobId(runId, job.jobId), '(no files)', null, job.dir]],
      );
      const lines = [`run ${runId}: ${jobs.length} job${jobs.length === 1 ? '' : 's'} under ${path.join(root, runId)}`, '', renderView({ name: 'artifacts', columns: ['JOB', 'FILE', 'SIZE', 'PATH'], rows }, 'table')];
      if (cache && !jobArg) lines.push(`gateway cache: ${cache.path} (${cache.files} file${cache.files === 1 ? '' : 's'}, ${formatBytes(cache.bytes)})\n`);
      await stdout(lines.join('\n'));
    });

  program
    .command('logs')
    .description("print the last lines each job of a run printed (container-tail.log on this host, secrets redacted)")
    .argument('<run>', 'run id')
    .argument('[job]', 'only this job: its id, the part after "<run>.", or its task name')
    .addHelpText('after', `${example('$ br logs br-20261129-120000-a1b2c3 exits-nonzero')}
A job's result shows only its last log line; this prints the last lines kept beside its
container.log. The whole log is container.log itself (see br artifacts).
`)
    .action(async (runId: string, jobArg: string | undefined) => {
      const root = deps.artifactsRoot();
      const jobs = selectJobs(root, runId, jobArg);
      for (const jobId of jobs) {
        const file = path.join(root, runId, jobId, CONTAINER_TAIL_FILE);
        const tail = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
        await stdout(`${jobs.length > 1 ? `== ${shortJobId(runId, jobId)}\n` : ''}${tail ?? `(no ${CONTAINER_TAIL_FILE}: the job has not finished on this host)\n`}`);
      }
    });

  program
    .command('records')
    .description("stream a run's per-instance records (each job's records.jsonl), reporting bad lines on stderr")
    .argument('<run>', 'run id')
    .option('--job <job>', 'only this job: its id, the part after "<run>.", or its task name')
    .option('--json', 'print JSON Lines, one record per line with its "job" added')
    .addHelpText(
      'after',
      `${example('$ br records br-20261129-120000-a1b2c3 --job addition', '$ br records br-20261129-120000-a1b2c3 --json | jq -c \'select(.score < 1)\'')}
Bad lines (not JSON, or a field of the wrong kind) are reported on stderr with their job and line
number and counted in the summary line; they are never printed as records.
`,
    )
    .action(async (runId: string, flags: { job?: string; json?: boolean }) => {
      const root = deps.artifactsRoot();
      const runDir = path.join(root, runId);
      const jobs = selectJobs(root, runId, flags.job);
      const withRecords = jobs.filter((jobId) => existsSync(path.join(runDir, jobId, RECORDS_FILE)));
      if (!withRecords.length) {
        throw new InputError([{ file: runDir, field: '', message: `no job${flags.job ? ` matching "${flags.job}"` : ''} of run ${runId} wrote ${RECORDS_FILE.replace(/\\/g, '/')} (${jobs.length} job${jobs.length === 1 ? '' : 's'} looked at)` }]);
      }
      const showJob = jobs.length > 1;
      const rows: TableCell[][] = [];
      let count = 0;
      let bad = 0;
      for (const jobId of withRecords) {
        const file = path.join(runDir, jobId, RECORDS_FILE);
        const where = path.relative(runDir, file).split(path.sep).join('/');
        const read = await readRecordsFile(path.dirname(file), async (outcome) => {
          if ('problem' in outcome) {
            bad += 1;
            stderr(`${where}: ${outcome.problem}`);
            return;
          }
          count += 1;
          if (flags.json) {
            const line: Record<string, unknown> = { job: jobId, ...outcome.record };
            line.job = jobId;
            await stdout(`${JSON.stringify(line)}\n`);
          } else {
            const { record } = outcome;
            rows.push([...(showJob ? [shortJobId(runId, jobId)] : []), record.index, record.score, showText(record.prediction), showText(record.ground_truth)]);
          }
        });
        // A FIFO or a link where records.jsonl belongs is reported, never read or followed.
        if (read.kind === 'refused') {
          bad += 1;
          stderr(`${where}: ${read.problem}; not read`);
        } else if (read.kind === 'read' && read.notRead) stderr(`${where}: ${read.notRead}`);
      }
      if (!flags.json) await stdout(renderView({ name: 'records', columns: [...(showJob ? ['JOB'] : []), 'INDEX', 'SCORE', 'PREDICTION', 'GROUND_TRUTH'], rows }, 'table'));
      const skipped = jobs.length - withRecords.length;
      stderr(
        `run ${runId}: ${count} record${count === 1 ? '' : 's'} from ${withRecords.length} job${withRecords.length === 1 ? '' : 's'}, ${bad} bad line${bad === 1 ? '' : 's'} skipped` +
          (skipped ? `; ${skipped} job${skipped === 1 ? '' : 's'} wrote no records.jsonl` : ''),
      );
    });
}

/** The job ids of a run with artifacts on this host, or the ones `jobArg` names; bad input otherwise. */
function selectJobs(root: string, runId: string, jobArg: string | undefined): string[] {
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
    throw new InputError([{ file: runDir, field: '', message: `no job "${jobArg}" in run ${runId} (have ${jobs.map((j) => shortJobId(runId, j)).join(', ')})` }]);
  }
  return matching;
}

/** A job id without its run's prefix: `br-…-a1b2c3.000-addition` → `000-addition`. */
function shortJobId(runId: string, jobId: string): string {
  return jobId.startsWith(`${runId}.`) ? jobId.slice(runId.length + 1) : jobId;
}

/** The task name inside a job id (`<run>.<NNN>-<task>[.r<repeat>]`). */
function taskOf(runId: string, jobId: string): string | undefined {
  return /^\d+-(.+?)(\.r\d+)?$/.exec(shortJobId(runId, jobId))?.[1];
}

function jobArtifacts(root: string, runId: string, jobId: string): JobArtifacts {
  const dir = path.join(root, runId, jobId);
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

function directorySize(dir: string): { files: number; bytes: number } {
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

function showText(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = (typeof value === 'string' ? value : JSON.stringify(value)).replace(/\s+/g, ' ').trim();
  return text.length > CELL_TEXT_MAX ? `${text.slice(0, CELL_TEXT_MAX - 3)}...` : text;
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

let stdoutGuarded = false;

/** Writes to stdout, waiting while the pipe is full; a reader that went away (`| head`) ends `br` quietly. */
async function writeStdout(text: string): Promise<void> {
  if (!stdoutGuarded) {
    stdoutGuarded = true;
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

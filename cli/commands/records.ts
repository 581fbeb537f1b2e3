// `br records`: stream a run's per-instance records (each job's records.jsonl), reporting bad lines
// on stderr rather than dropping them silently. A job that ran on another host has its file fetched
// through Temporal into a scratch folder first, then read by the same reader as a local one.

import type { Command } from 'commander';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InputError } from '../../contract/problems.js';
import { writeStdout } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, formatOf, type OutputFlags } from '../output-flags.js';
import { readRecordsFile } from '../../activities/records-file.js';
import { RemoteArtifactError } from '../../client/remote-artifacts.js';
import { jobFilePath, JOB_FILES } from '../../runs/job-artifacts.js';
import { locateJobs, readJobFile, shortJobId, type ArtifactCommandDeps, type LocatedJob } from '../run-artifacts.js';
import type { TableCell } from '../../runs/table-view.js';

/** Prediction and ground truth are cut to this in the table for people; exports keep them whole. */
const CELL_TEXT_MAX = 60;

export function registerRecordsCommand(program: Command, deps: ArtifactCommandDeps): Command {
  const stdout = deps.stdout ?? writeStdout;
  const stderr = deps.stderr ?? ((line: string) => void process.stderr.write(`${line}\n`));
  return addOutputFlags(
    program
      .command('records')
      .description("stream a run's per-instance records (each job's records.jsonl), reporting bad lines on stderr")
      .argument('<run>', 'run id')
      .option('--job <job>', 'only this job: its id, the part after "<run>.", or its task name'),
    '<run>-records',
  )
    .addHelpText(
      'after',
      `${example('$ br records br-20261129-120000-a1b2c3 --job addition', "$ br records br-20261129-120000-a1b2c3 --json | jq -c 'select(.score < 1)'")}
JSON output is JSON Lines: one record per line with its "job" added, streamed as it is read.
Bad lines (not JSON, or a field of the wrong kind) are reported on stderr with their job and line
number and counted in the summary line; they are never printed as records.
`,
    )
    .action(async (runId: string, flags: OutputFlags & { job?: string }) => {
      const format = formatOf(flags);
      const root = deps.artifactsRoot();
      const runDir = path.join(root, runId);
      const jobs = await locateJobs(deps, runId, flags.job);
      const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-records-'));
      try {
        const sources = await recordsSources(deps, jobs, scratch);
        const withRecords = sources.filter((source) => source.resultsDir !== undefined || source.refused !== undefined);
        if (!withRecords.length) {
          throw new InputError([
            {
              file: runDir,
              field: '',
              message: `no job${flags.job ? ` matching "${flags.job}"` : ''} of run ${runId} wrote ${jobFilePath('records')} (${jobs.length} job${jobs.length === 1 ? '' : 's'} looked at)`,
            },
          ]);
        }
        const jsonLines = format === 'json' ? lineSink(flags.out, stdout) : undefined;
        const showJob = jobs.length > 1;
        const text = format === 'table' ? showText : wholeText;
        const rows: TableCell[][] = [];
        let count = 0;
        let bad = 0;
        for (const { jobId, resultsDir, refused } of withRecords) {
          const where = `${jobId}/${jobFilePath('records')}`;
          if (refused !== undefined) {
            bad += 1;
            stderr(`${where}: ${refused}; not read`);
            continue;
          }
          const read = await readRecordsFile(resultsDir!, async (outcome) => {
            if ('problem' in outcome) {
              bad += 1;
              stderr(`${where}: ${outcome.problem}`);
              return;
            }
            count += 1;
            const { record } = outcome;
            if (jsonLines) {
              const line: Record<string, unknown> = { job: jobId, ...record };
              line.job = jobId;
              await jsonLines.write(`${JSON.stringify(line)}\n`);
            } else rows.push([...(showJob ? [shortJobId(runId, jobId)] : []), record.index, record.score, text(record.prediction), text(record.ground_truth)]);
          });
          // A FIFO or a link where records.jsonl belongs is reported, never read or followed.
          if (read.kind === 'refused') {
            bad += 1;
            stderr(`${where}: ${read.problem}; not read`);
          } else if (read.kind === 'read' && read.notRead) stderr(`${where}: ${read.notRead}`);
        }
        if (jsonLines) {
          const written = await jsonLines.close();
          if (written) stderr(`wrote ${written}`);
        } else {
          const table = { name: 'records', columns: [...(showJob ? ['JOB'] : []), 'INDEX', 'SCORE', 'PREDICTION', 'GROUND_TRUTH'], rows };
          await emitOutput({ tables: [table] }, flags, `${runId}-records`, { stdout, say: stderr });
        }
        const skipped = jobs.length - withRecords.length;
        stderr(
          `run ${runId}: ${count} record${count === 1 ? '' : 's'} from ${withRecords.length} job${withRecords.length === 1 ? '' : 's'}, ${bad} bad line${bad === 1 ? '' : 's'} skipped` +
            (skipped ? `; ${skipped} job${skipped === 1 ? '' : 's'} wrote no ${JOB_FILES.records}` : ''),
        );
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    });
}

/** Where each job's records.jsonl can be read on this host (undefined: it wrote none), or why another host refused it. */
export async function recordsSources(
  deps: ArtifactCommandDeps,
  jobs: LocatedJob[],
  scratch: string,
): Promise<Array<{ jobId: string; resultsDir?: string; refused?: string }>> {
  const sources = [];
  for (const job of jobs) {
    if ('dir' in job) {
      const resultsDir = path.join(job.dir, JOB_FILES.results);
      sources.push({ jobId: job.jobId, ...(existsSync(path.join(resultsDir, JOB_FILES.records)) ? { resultsDir } : {}) });
      continue;
    }
    let bytes: Buffer | undefined;
    try {
      bytes = await readJobFile(deps, job, 'records');
    } catch (error) {
      // The host refuses a link or a FIFO where records.jsonl belongs, as a local read would.
      if (error instanceof RemoteArtifactError && error.type === 'BadArtifactRequest') {
        sources.push({ jobId: job.jobId, refused: error.message });
        continue;
      }
      throw error;
    }
    if (!bytes) {
      sources.push({ jobId: job.jobId });
      continue;
    }
    const resultsDir = path.join(scratch, job.jobId, JOB_FILES.results);
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(path.join(resultsDir, JOB_FILES.records), bytes);
    // The gateway's per-instance figures, which reading joins to the records, sit beside results/.
    const usage = await readJobFile(deps, job, 'modelUsage');
    if (usage) writeFileSync(path.join(scratch, job.jobId, JOB_FILES.modelUsage), usage);
    sources.push({ jobId: job.jobId, resultsDir });
  }
  return sources;
}

/** Where JSON Lines go as they are read: --out's file (waiting while its buffer is full), else stdout. */
function lineSink(
  out: string | undefined,
  stdout: (text: string) => void | Promise<void>,
): { write(text: string): Promise<void>; close(): Promise<string | undefined> } {
  if (!out) return { write: async (text) => stdout(text), close: async () => undefined };
  mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
  const file = createWriteStream(out);
  // A write error (disk full, no permission) ends the command with it, rather than waiting for a drain that never comes.
  let failed: Error | undefined;
  const failure = new Promise<never>((_, reject) => file.once('error', (error) => reject((failed = error))));
  failure.catch(() => undefined);
  return {
    async write(text) {
      if (failed) throw failed;
      if (!file.write(text)) await Promise.race([once(file, 'drain'), failure]);
    },
    async close() {
      await Promise.race([new Promise<void>((resolve) => file.end(resolve)), failure]);
      return path.resolve(out);
    },
  };
}

function wholeText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function showText(value: unknown): string {
  const text = wholeText(value).replace(/\s+/g, ' ').trim();
  return text.length > CELL_TEXT_MAX ? `${text.slice(0, CELL_TEXT_MAX - 3)}...` : text;
}

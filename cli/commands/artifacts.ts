// `br artifacts`: a run's artifact files, job by job, with their paths and sizes: on this host, or
// listed by the host that ran the job, through Temporal.

import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gatewayCacheDir } from '../../runs/job-artifacts.js';
import { writeStdout } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { directorySize, formatBytes, jobArtifacts, locateJobs, shortJobId, type ArtifactCommandDeps, type JobArtifacts } from '../run-artifacts.js';
import { renderView } from '../table-export.js';
import type { TableCell } from '../../runs/table-view.js';

export function registerArtifactsCommand(program: Command, deps: ArtifactCommandDeps): Command {
  const stdout = deps.stdout ?? writeStdout;
  const say = deps.stderr ?? ((line: string) => void process.stderr.write(`${line}\n`));
  return addOutputFlags(
    program
      .command('artifacts')
      .description("list a run's artifact files, job by job, with their paths and sizes (from the host that ran each job)")
      .argument('<run>', 'run id')
      .argument('[job]', 'only this job: its id, the part after "<run>.", or its task name'),
    '<run>-artifacts',
  )
    .addHelpText('after', example('$ br artifacts br-20261129-120000-a1b2c3', '$ br artifacts br-20261129-120000-a1b2c3 addition --json'))
    .action(async (runId: string, jobArg: string | undefined, flags: OutputFlags) => {
      const root = deps.artifactsRoot();
      const jobs: JobArtifacts[] = [];
      for (const job of await locateJobs(deps, runId, jobArg)) jobs.push(await jobArtifacts(deps, job));
      const elsewhere = jobs.filter((job) => job.host !== undefined).length;
      const cacheDir = gatewayCacheDir(root, runId);
      const cache = existsSync(cacheDir) ? { path: cacheDir, ...directorySize(cacheDir) } : null;
      // One row per file; a job that left nothing still gets a row, so it is not mistaken for a missing job.
      const files = (size: (bytes: number) => TableCell) =>
        jobs.flatMap((job) =>
          job.files.length
            ? job.files.map((f): TableCell[] => [shortJobId(runId, job.jobId), f.name, size(f.bytes), f.path ?? `(on host ${job.host})`])
            : [[shortJobId(runId, job.jobId), '(no files)', null, job.dir ?? `(on host ${job.host})`]],
        );
      const lines = [
        `run ${runId}: ${jobs.length} job${jobs.length === 1 ? '' : 's'} under ${path.join(root, runId)}` +
          (elsewhere ? ` (${elsewhere} of them on other hosts, listed through Temporal)` : ''),
        '',
        renderView({ name: 'artifacts', columns: ['JOB', 'FILE', 'SIZE', 'PATH'], rows: files(formatBytes) }, 'table'),
      ];
      if (cache && !jobArg) lines.push(`gateway cache: ${cache.path} (${cache.files} file${cache.files === 1 ? '' : 's'}, ${formatBytes(cache.bytes)})\n`);
      await emitOutput(
        {
          tables: [{ name: 'artifacts', columns: ['job', 'file', 'bytes', 'path'], rows: files((bytes) => bytes) }],
          json: { runId, dir: path.join(root, runId), jobs, gatewayCache: cache },
          text: lines.join('\n'),
        },
        flags,
        `${runId}-artifacts`,
        { stdout, say },
      );
    });
}

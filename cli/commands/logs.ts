// `br logs`: the last lines each job of a run printed, as the worker kept them beside container.log
// (secrets redacted). A job's result shows only its last log line; this shows the rest.

import type { Command } from 'commander';
import { writeStdout } from '../cli-deps.js';
import { example } from '../help-example.js';
import { JOB_FILES } from '../../runs/job-artifacts.js';
import { jobLogTail, selectJobs, shortJobId, type ArtifactCommandDeps } from '../run-artifacts.js';

export function registerLogsCommand(program: Command, deps: ArtifactCommandDeps): Command {
  const stdout = deps.stdout ?? writeStdout;
  return program
    .command('logs')
    .description('print the last lines each job of a run printed (container-tail.log on this host, secrets redacted)')
    .argument('<run>', 'run id')
    .argument('[job]', 'only this job: its id, the part after "<run>.", or its task name')
    .addHelpText(
      'after',
      `${example('$ br logs br-20261129-120000-a1b2c3 exits-nonzero')}
A job's result shows only its last log line; this prints the last lines kept beside its
container.log. The whole log is container.log itself (see br artifacts).
`,
    )
    .action(async (runId: string, jobArg: string | undefined) => {
      const root = deps.artifactsRoot();
      const jobs = selectJobs(root, runId, jobArg);
      for (const jobId of jobs) {
        const tail = jobLogTail(root, runId, jobId);
        await stdout(
          `${jobs.length > 1 ? `== ${shortJobId(runId, jobId)}\n` : ''}${tail ?? `(no ${JOB_FILES.containerTail}: the job has not finished on this host)\n`}`,
        );
      }
    });
}

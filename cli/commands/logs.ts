// `br logs`: the last lines each job of a run printed, as the worker kept them beside container.log
// (secrets redacted), read on this host or from the host that ran the job, through Temporal. A job's
// result shows only its last log line; this shows the rest.

import type { Command } from 'commander';
import { writeStdout } from '../cli-deps.js';
import { example } from '../help-example.js';
import { JOB_FILES } from '../../runs/job-artifacts.js';
import { locateJobs, readJobFile, shortJobId, whereIs, type ArtifactCommandDeps } from '../run-artifacts.js';

export function registerLogsCommand(program: Command, deps: ArtifactCommandDeps): Command {
  const stdout = deps.stdout ?? writeStdout;
  return program
    .command('logs')
    .description('print the last lines each job of a run printed (container-tail.log from the host that ran it, secrets redacted)')
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
      const jobs = await locateJobs(deps, runId, jobArg);
      for (const job of jobs) {
        const tail = (await readJobFile(deps, job, 'containerTail'))?.toString('utf8');
        await stdout(
          `${jobs.length > 1 ? `== ${shortJobId(runId, job.jobId)}\n` : ''}${tail ?? `(no ${JOB_FILES.containerTail}: the job has not finished on ${whereIs(job)})\n`}`,
        );
      }
    });
}

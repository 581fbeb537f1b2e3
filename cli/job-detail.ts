// One job of a run told in full (`br results RUN --task T`): its status, the whole failure reason and
// the last lines its container printed, where the table's DETAIL has room for one line only.

import { JOB_FILES } from '../runs/job-artifacts.js';
import type { JobResult } from '../runs/run-spec.js';
import { formatScore } from './run-text.js';

export function renderJobDetail(job: JobResult, logTail: string | undefined): string {
  const lines = [
    `Job ${job.jobId}  task ${job.task}${job.repeat ? ` #${job.repeat}` : ''}  ${job.status}${job.reason ? ` (${job.reason})` : ''}  overall ${formatScore(job.result?.overall)}`,
    ...(job.host ? [`host:    ${job.host}${job.hostsTried && job.hostsTried.length > 1 ? ` (tried ${job.hostsTried.join(', ')})` : ''}`] : []),
    ...(job.exitCode !== undefined ? [`exit:    ${job.exitCode}`] : []),
    ...(job.message ? ['reason:', ...job.message.split('\n').map((l) => `  ${l}`)] : []),
    '',
    logTail === undefined
      ? `(no ${JOB_FILES.containerTail} on this host: the job ran elsewhere, or has not finished)`
      : logTail.trim()
        ? `last log lines (${JOB_FILES.containerTail}, secrets redacted):\n${logTail.trimEnd()}`
        : '(the task printed nothing)',
  ];
  return `${lines.join('\n')}\n`;
}

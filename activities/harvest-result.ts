// harvestResult: turns a finished container into a job outcome. Reads result.json (size-capped),
// applies the task's result_mapping and stores the normalized result beside it.

import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { parseRecords, summarizeRecords, type RecordsSummary } from '../contract/records.js';
import path from 'node:path';
import type { FailureReason, JobSpec, JobStatus } from '../runs/run-spec.js';
import { normalizeResult, type NormalizedResult } from '../contract/result-mapping.js';
import type { ContainerOutcome } from './run-task-container.js';
import { jobArtifactsDir } from './run-task-container.js';

export const RESULT_SIZE_CAP_BYTES = 10 * 1024 * 1024;
/** The DinD entrypoint's exit code for "my daemon did not start" (runtime/dind/entrypoint.sh). */
const DIND_SETUP_FAILED = 125;

export interface HarvestInput {
  job: JobSpec;
  outcome: ContainerOutcome;
}

export interface HarvestOutput {
  status: JobStatus;
  reason?: FailureReason;
  message?: string;
  result?: NormalizedResult;
  records?: RecordsSummary;
}

/** records.jsonl larger than this is summarized as unread rather than loaded whole. */
export const RECORDS_SIZE_CAP_BYTES = 512 * 1024 * 1024;

/** The task's records.jsonl, validated line by line: bad lines are counted and named, never dropped. */
function recordsOf(resultsDir: string): RecordsSummary | undefined {
  const file = path.join(resultsDir, 'records.jsonl');
  if (!existsSync(file)) return undefined;
  const size = statSync(file).size;
  if (size > RECORDS_SIZE_CAP_BYTES) {
    return { ...summarizeRecords({ records: [], badLines: [] }), badLines: 1, badLineExamples: [`records.jsonl: ${size} bytes exceeds the ${RECORDS_SIZE_CAP_BYTES}-byte limit; not read`] };
  }
  return summarizeRecords(parseRecords(readFileSync(file, 'utf8')));
}

export function harvestResult(artifactsRoot: string, input: HarvestInput): HarvestOutput {
  const outcome = withOomReport(harvestOutcome(artifactsRoot, input), input);
  const records = recordsOf(path.join(jobArtifactsDir(artifactsRoot, input.job), 'results'));
  return records ? { ...outcome, records } : outcome;
}

function harvestOutcome(artifactsRoot: string, { job, outcome }: HarvestInput): HarvestOutput {
  const jobDir = jobArtifactsDir(artifactsRoot, job);
  if (outcome.kind === 'timed_out') {
    return { status: 'TIMED_OUT', message: `exceeded the task timeout of ${job.task.timeoutSeconds}s; container killed${withTail(outcome.logTail)}` };
  }
  if (outcome.exitCode === DIND_SETUP_FAILED && outcome.runtime.startsWith('dind')) {
    return { status: 'FAILED', reason: 'INFRASTRUCTURE', message: `the task's own Docker daemon could not start (${outcome.runtime})${withTail(outcome.logTail)}` };
  }
  if (outcome.exitCode !== 0) {
    return { status: 'FAILED', reason: 'NON_ZERO_EXIT', message: `command exited with code ${outcome.exitCode}${withTail(outcome.logTail)}` };
  }
  const file = path.join(jobDir, 'results', 'result.json');
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return { status: 'FAILED', reason: 'NO_RESULT', message: `no result.json: the command exited 0 but wrote nothing to $BENCHROUTER_OUTPUT_DIR/result.json${withTail(outcome.logTail)}` };
  }
  if (size > RESULT_SIZE_CAP_BYTES) {
    return { status: 'FAILED', reason: 'BAD_RESULT', message: `result.json: ${size} bytes exceeds the ${RESULT_SIZE_CAP_BYTES}-byte limit` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readCapped(file, RESULT_SIZE_CAP_BYTES));
  } catch (error) {
    return { status: 'FAILED', reason: 'BAD_RESULT', message: `result.json: not valid JSON: ${(error as Error).message}` };
  }
  const normalized = normalizeResult(parsed, job.task.resultMapping);
  if (!normalized.ok) return { status: 'FAILED', reason: 'BAD_RESULT', message: `result.json: ${normalized.error}` };
  writeFileSync(path.join(jobDir, 'normalized.json'), JSON.stringify(normalized.result, null, 2));
  return { status: 'SUCCEEDED', result: normalized.result };
}

/**
 * Out-of-memory kills lead the message whatever the status: a benchmark whose worker process was
 * killed may still exit 0 and write a result, one computed without the killed part.
 */
function withOomReport(harvested: HarvestOutput, { job, outcome }: HarvestInput): HarvestOutput {
  if (!outcome.oomKilled) return harvested;
  const kills = Math.max(1, outcome.oomKills ?? 0);
  const report = `out of memory: ${kills} ${kills === 1 ? 'process' : 'processes'} of the task killed for exceeding its ${job.task.resources.memory} memory limit`;
  return { ...harvested, message: harvested.message ? `${report}; ${harvested.message}` : report };
}

function readCapped(file: string, cap: number): string {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(cap);
    const read = readSync(fd, buffer, 0, cap, 0);
    return buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function withTail(tail: string): string {
  return tail ? `; last log lines:\n${tail}` : '';
}

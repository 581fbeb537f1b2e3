// harvestResult: turns a finished container into a job outcome. Reads result.json (opened safely,
// size-capped), applies the task's result_mapping and stores the normalized result beside it.

import { randomBytes } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseRecordLine } from '../contract/records.js';
import { carriedRecordLine } from './carried-instances.js';
import { RECORD_LINE_CAP_BYTES, RECORDS_SIZE_CAP_BYTES } from './records-file.js';
import type { RecordsSummary } from '../contract/records.js';
import { DEFAULT_RESOURCES } from '../contract/benchmark-schema.js';
import { withBudgetVerdict } from '../runs/budgets.js';
import type { FailureReason, JobSpec, JobStatus } from '../runs/run-spec.js';
import { normalizeResult, type NormalizedResult } from '../contract/result-mapping.js';
import { summarizeRecordsFile } from './records-file.js';
import { redactDeep } from './redact-secrets.js';
import type { ContainerOutcome } from './run-task-container.js';
import { JOB_FILES, jobArtifactsDir, jobResultsDir } from '../runs/job-artifacts.js';
import { linesOfTaskOutput, openTaskOutputFile, readTaskOutputText } from './task-output-file.js';

export const RESULT_SIZE_CAP_BYTES = 10 * 1024 * 1024;
const RESULT_FILE = JOB_FILES.result;
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
  /** For a shard of a task whose result combines over instances: each instance's score from its records (JobResult.instanceScores). */
  instanceScores?: Array<number | null>;
  /** Instances carried over from an earlier attempt or run, not evaluated again. */
  carried?: number;
  /** With carried instances that could not join the score (withCarriedInstances): the instances the score is over. */
  scored?: number;
}

/**
 * `secrets`: what the worker knows for this job (jobSecrets). The output goes into workflow
 * history, and a task with the key (--no-gateway) may have written it anywhere, so every string
 * in it is redacted.
 */
export async function harvestResult(artifactsRoot: string, input: HarvestInput, secrets: readonly string[] = []): Promise<HarvestOutput> {
  const resultsDir = jobResultsDir(artifactsRoot, input.job);
  const shard = input.job.shard?.aggregate ? input.job.shard : undefined;
  const carried = input.outcome.carried;
  // A resumed shard's records: the carried instances' first, then its container's (carried-instances.ts).
  const mergeNote = carried ? await mergeCarriedRecords(resultsDir, carried) : undefined;
  // With every instance carried no container ran: the result is what the carried records say.
  const own =
    carried && input.outcome.runtime === 'none'
      ? { status: 'SUCCEEDED' as const, result: { overall: 0, raw_metrics: {} } }
      : harvestOutcome(artifactsRoot, input);
  // A job whose calls the gateway refused for a spent budget fails with BUDGET, whatever its harness did.
  let outcome = withBudgetVerdict(withOomReport(own, input), input.outcome.usage);
  const records = await summarizeRecordsFile(resultsDir, shard?.instances);
  if (shard && carried) outcome = withCarriedInstances(outcome, shard, carried.rewards, records?.scores);
  if (mergeNote) outcome = { ...outcome, message: outcome.message ? `${outcome.message}; ${mergeNote}` : mergeNote };
  const shardFields = shard ? { ...(records?.scores ? { instanceScores: records.scores } : {}), ...(carried ? { carried: carried.rewards.length } : {}) } : {};
  if (!records) return redactDeep({ ...outcome, ...shardFields }, secrets);
  const note = records.refused ? `${records.refused}; not read` : undefined;
  return redactDeep(
    { ...outcome, ...(note ? { message: outcome.message ? `${outcome.message}; ${note}` : note } : {}), records: records.summary, ...shardFields },
    secrets,
  );
}

/** A shard's overall "is" the mean of its records' scores when they agree this closely (a harness's own rounding aside). */
const AGREEMENT = 1e-9;

/**
 * A resumed shard's result over all its instances: when the container's overall is the mean of the scores of the
 * instances it ran (its records), the mean over every instance's score, carried ones included, summed in the
 * shard's order. Otherwise (the overall on another scale, records missing) the carried instances cannot join its
 * score: it stays the container's, over the instances it ran (`scored`), and the message says so. The metrics
 * the task aggregates are left out either way: the container counted only what it ran.
 */
export function withCarriedInstances(
  harvested: HarvestOutput,
  shard: { instances: string[]; aggregate?: Record<string, string> },
  carried: ReadonlyArray<{ instance: string | number }>,
  scores: ReadonlyArray<number | null> | undefined,
): HarvestOutput {
  if (harvested.status !== 'SUCCEEDED' || !harvested.result || shard.instances.length === 0) return harvested;
  const raw_metrics = Object.fromEntries(Object.entries(harvested.result.raw_metrics).filter(([name]) => !(name in (shard.aggregate ?? {}))));
  const carriedIds = new Set(carried.map((reward) => String(reward.instance)));
  const own = (scores ?? []).filter((_, i) => !carriedIds.has(shard.instances[i]!));
  const complete = scores !== undefined && scores.length === shard.instances.length && scores.every((score) => score !== null);
  const ownMean = own.length ? (own as number[]).reduce((a, b) => a + b, 0) / own.length : undefined;
  // With every instance carried no container ran: its records are all there is of its score.
  const agrees = ownMean === undefined ? carriedIds.size === shard.instances.length : Math.abs(ownMean - harvested.result.overall) <= AGREEMENT;
  if (complete && agrees) {
    let sum = 0;
    for (const score of scores as number[]) sum += score;
    return { ...harvested, result: { overall: sum / shard.instances.length, raw_metrics } };
  }
  const note = `the ${carriedIds.size} instances carried over are not in its score: its overall ${harvested.result.overall} is not the mean of its records' scores${ownMean === undefined ? '' : ` (${ownMean})`}, which task.yaml's aggregate: mean needs`;
  return {
    ...harvested,
    result: { overall: harvested.result.overall, raw_metrics },
    scored: shard.instances.length - carriedIds.size,
    message: harvested.message ? `${harvested.message}; ${note}` : note,
  };
}

/**
 * Writes the shard's records.jsonl as the carried instances' lines followed by its container's, whose lines
 * for a carried instance are dropped (so that merging again, after a harvest that was retried, changes nothing).
 * The container may have left anything in its results directory: the file is read safely and the new one
 * made under a fresh name, never through a link; what the container left where records.jsonl belongs that is no
 * file is moved aside. Returns what could not be kept, for the job's message.
 */
export async function mergeCarriedRecords(resultsDir: string, carried: NonNullable<ContainerOutcome['carried']>): Promise<string | undefined> {
  const ids = new Set(carried.rewards.map((reward) => String(reward.instance)));
  const kept: string[] = carried.rewards.map((reward) => carriedRecordLine(reward, carried.from));
  const file = path.join(resultsDir, JOB_FILES.records);
  const opened = openTaskOutputFile(resultsDir, JOB_FILES.records);
  let lost: string | undefined;
  if (opened.kind === 'opened') {
    let long = 0;
    for await (const { text } of linesOfTaskOutput(opened.fd, RECORD_LINE_CAP_BYTES, RECORDS_SIZE_CAP_BYTES)) {
      if (text === undefined) long += 1;
      if (text === undefined || !text.trim()) continue;
      const parsed = parseRecordLine(text, 0);
      if (parsed && 'record' in parsed && ids.has(String(parsed.record.index))) continue;
      kept.push(text);
    }
    const cut = opened.size > RECORDS_SIZE_CAP_BYTES ? `the bytes past ${RECORDS_SIZE_CAP_BYTES}` : '';
    const parts = [long ? `${long} lines over ${RECORD_LINE_CAP_BYTES} bytes` : '', cut].filter(Boolean);
    if (parts.length) lost = `${JOB_FILES.records}: ${parts.join(' and ')} not kept when the carried instances were merged in`;
  } else if (opened.kind === 'refused') {
    // Not a file the worker reads (a directory, a link, a FIFO): set aside under a name of its own, not followed.
    renameSync(file, path.join(resultsDir, `.records-refused-${randomBytes(4).toString('hex')}`));
    lost = `${opened.problem}; set aside, and the carried instances' records written in its place`;
  }
  const temporary = path.join(resultsDir, `.records-${randomBytes(6).toString('hex')}.tmp`);
  // `wx`: created here, never opened through something the task left under that name.
  await writeFile(temporary, kept.map((line) => `${line}\n`).join(''), { flag: 'wx', mode: 0o644 });
  renameSync(temporary, file);
  return lost;
}

function harvestOutcome(artifactsRoot: string, { job, outcome }: HarvestInput): HarvestOutput {
  const jobDir = jobArtifactsDir(artifactsRoot, job);
  // Outcomes recorded before lastLogLine existed carry none.
  const lastLine = outcome.lastLogLine ?? '';
  if (outcome.kind === 'disk_limit') {
    const used = outcome.disk ? `${formatSize(outcome.disk.usedBytes)} measured` : 'over its limit';
    return {
      status: 'FAILED',
      reason: 'DISK_LIMIT',
      message: `wrote more than its disk limit of ${job.task.resources.disk ?? DEFAULT_RESOURCES.disk} (${used} across /app/results and its own filesystem); container killed${withLastLine(lastLine)}`,
    };
  }
  if (outcome.kind === 'timed_out') {
    return { status: 'TIMED_OUT', message: `exceeded the task timeout of ${job.task.timeoutSeconds}s; container killed${withLastLine(lastLine)}` };
  }
  if (outcome.exitCode === DIND_SETUP_FAILED && outcome.runtime.startsWith('dind')) {
    return {
      status: 'FAILED',
      reason: 'INFRASTRUCTURE',
      message: `the task's own Docker daemon could not start (${outcome.runtime})${withLastLine(lastLine)}`,
    };
  }
  if (outcome.exitCode !== 0) {
    return { status: 'FAILED', reason: 'NON_ZERO_EXIT', message: `command exited with code ${outcome.exitCode}${withLastLine(lastLine)}` };
  }
  const read = readTaskOutputText(jobResultsDir(artifactsRoot, job), RESULT_FILE, RESULT_SIZE_CAP_BYTES);
  if (read.kind === 'missing') {
    return {
      status: 'FAILED',
      reason: 'NO_RESULT',
      message: `no result.json: the command exited 0 but wrote nothing to $BENCHROUTER_OUTPUT_DIR/result.json${withLastLine(lastLine)}`,
    };
  }
  if (read.kind === 'refused') return { status: 'FAILED', reason: 'BAD_RESULT', message: `${read.problem}; not read` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.text);
  } catch (error) {
    // The parser's own message quotes the text, and the text is the task's: only where it broke is told.
    const at = /at position (\d+)/.exec((error as Error).message)?.[1];
    return {
      status: 'FAILED',
      reason: 'BAD_RESULT',
      message: `${RESULT_FILE}: not valid JSON${read.text.trim() ? (at ? ` (at character ${Number(at) + 1})` : '') : ' (empty)'}`,
    };
  }
  const normalized = normalizeResult(parsed, job.task.resultMapping);
  if (!normalized.ok) return { status: 'FAILED', reason: 'BAD_RESULT', message: `${RESULT_FILE}: ${normalized.error}` };
  writeFileSync(path.join(jobDir, JOB_FILES.normalized), JSON.stringify(normalized.result, null, 2));
  return { status: 'SUCCEEDED', result: normalized.result };
}

function withLastLine(line: string): string {
  return line ? `; last log line: ${line}` : '';
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

function formatSize(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

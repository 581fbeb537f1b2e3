// Talking to Temporal about runs: submit, follow, read, list and cancel. Used by `br` and tests.

import { Client, Connection, WorkflowNotFoundError, type WorkflowClient, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { optionalTsToDate } from '@temporalio/common';
import proto from '@temporalio/proto';
import path from 'node:path';
import { directoryDigest } from '../contract/benchmark-digest.js';
import type { Benchmark } from '../contract/benchmark.js';
import { InputError } from '../contract/problems.js';
import { runTasks } from '../contract/task-template.js';
import { BUILT_IN_PRICES } from '../gateway/price-table.js';
import { runOptions, type RunOptionsInput } from '../runs/run-options.js';
import type { CarriedInstances, JobResult, RunProgress, RunResult, RunSpec } from '../runs/run-spec.js';
import { jobSpecsOf, slotKeyOf } from '../runs/job-specs.js';
import { isFoldedShard } from '../runs/shard-fold.js';
import type { Reward } from '../runs/rewards.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { sortableId } from '../runs/sortable-id.js';
import { parseScoreStats, type ScoreStats } from '../runs/score-interval.js';
import { benchRouterVersion } from '../config/benchrouter-version.js';
import { payloadCodecsFromEnv } from './payload-codec.js';
import { withJobs } from './run-jobs.js';
import { pinDefinitions, storePages, withTaskDefinitions } from './task-definitions.js';
import { listInstancesOnWorker, planRun } from './run-plan.js';
import { jobRewardsOf } from './job-rewards.js';
import { preflightEndpoints } from './endpoint-preflight.js';
import type { Settings } from '../config/settings.js';
import { temporalConnectionOptions } from '../config/temporal-connection.js';
import type { runWorkflow } from '../workflows/run-workflow.js';

export type RunHandle = WorkflowHandle<typeof runWorkflow>;

export async function connectClient(settings: Settings): Promise<Client> {
  const connection = await Connection.connect({ ...temporalConnectionOptions(settings.temporalAddress, settings.temporalTls), connectTimeout: '5s' });
  return new Client({ connection, namespace: settings.temporalNamespace, dataConverter: { payloadCodecs: payloadCodecsFromEnv() } });
}

/** `<prefix>-20261129-120000-a1b2c3`: sortable by time, unique by its random tail. */
export function newWorkflowId(prefix: string, now = new Date()): string {
  return sortableId(prefix, now);
}

export function newRunId(now = new Date()): string {
  return newWorkflowId('br', now);
}

/**
 * The run definition pinned in the workflow input, history alone then saying what was run: the options with
 * every default (validated: an invalid one throws), the tasks they pick, the price table in effect, and the
 * tokenizer as submitting resolved it (client/run-request.ts checks and hashes the file).
 */
export function createRunSpec(
  benchmark: Benchmark,
  input: RunOptionsInput,
  tokenizer?: { path: string; sha256: string },
  /** Where the run's tasks were named, for the error when they name none the benchmark has (default: the flag). */
  tasksFrom?: { file: string; field: string },
): RunSpec {
  const options = runOptions(input);
  const selected = runTasks(benchmark, options.tasks, options.taskArgs);
  if (!selected.ok)
    throw new InputError([
      { ...(tasksFrom ?? { file: options.tasks?.length ? '--tasks' : path.join(benchmark.dir, 'benchmark.yaml'), field: '' }), message: selected.problem },
    ]);
  const tasks = selected.tasks;
  return {
    runId: newRunId(),
    benchmark: { name: benchmark.name, dir: benchmark.dir, digest: directoryDigest(benchmark.dir) },
    tasks,
    options,
    resolved: { prices: { ...BUILT_IN_PRICES, ...options.prices }, ...(tokenizer ? { tokenizer } : {}) },
    cacheFrom: [],
    submittedAt: new Date().toISOString(),
    benchrouter: benchRouterVersion(),
  };
}

/**
 * A new run that reruns only the jobs of `original` that did not succeed, carrying the succeeded
 * ones over, on the exact task definitions (and plan of shards) the original pinned. A task run in shards
 * reruns only its shards that did not succeed, each skipping the instances it had scored (`scored`: the
 * rewards of those jobs, by job id: jobRewardsOf).
 */
export function createRetrySpec(original: RunSpec, result: RunResult, scored: ReadonlyMap<string, Reward[]> = new Map()): RunSpec {
  // A task is carried over only when every one of its repeats succeeded; otherwise all its repeats run again. A
  // job of a task whose result folds over its instances (a shard, or a repeat of one) stands alone: it is carried
  // when it succeeded.
  const failedTasks = new Set(result.jobs.filter((job) => job.status !== 'SUCCEEDED' && !isFoldedShard(job)).map((job) => job.task));
  const carried: JobResult[] = result.jobs
    .filter((job) => (isFoldedShard(job) ? job.status === 'SUCCEEDED' : !failedTasks.has(job.task)))
    .map((job) => ({ ...job, carriedFrom: job.carriedFrom ?? original.runId }));
  const instances: Record<string, CarriedInstances> = {};
  // What the retry carries in its own input stays well under Temporal's limits: past it, shards rerun whole.
  let bytes = 0;
  for (const job of result.jobs) {
    const rewards = isFoldedShard(job) && job.status !== 'SUCCEEDED' ? scored.get(job.jobId) : undefined;
    if (!rewards?.length) continue;
    bytes += Buffer.byteLength(JSON.stringify(rewards));
    if (bytes > RETRY_CARRIED_MAX_BYTES) break;
    instances[slotKeyOf(job)] = { from: job.jobId, rewards };
  }
  // Tasks every job of which is carried over are left out (their plan with them).
  const spec = { ...original, retryOf: { runId: original.runId, carried } };
  const running = new Set(jobSpecsOf({ ...spec, tasks: original.tasks }).map((job) => job.task.name));
  const kept = original.tasks.flatMap((task, i) => (running.has(task.name) ? [i] : []));
  return {
    ...original,
    runId: newRunId(),
    tasks: kept.map((i) => original.tasks[i]!),
    ...(original.plan ? { plan: kept.map((i) => original.plan![i] ?? null) } : {}),
    // A retry reads the original's cached answers: what was answered once is not paid for again.
    cacheFrom: [...original.cacheFrom, original.runId],
    submittedAt: new Date().toISOString(),
    benchrouter: benchRouterVersion(),
    retryOf: { runId: original.runId, carried, ...(Object.keys(instances).length ? { instances } : {}) },
  };
}

/**
 * The instances a retry may carry in its input, in all (about 150 bytes each): a run's input goes to every
 * execution of it, and Temporal refuses a payload over 2 MB.
 */
export const RETRY_CARRIED_MAX_BYTES = 512 * 1024;

/**
 * The retry of a finished run: its definition read back, and the instances its unfinished shards had scored. A
 * shard stopped by a budget carries nothing: what it scored after the gateway refused its calls is no score.
 */
export async function retrySpecOf(handle: RunHandle, result: RunResult): Promise<RunSpec> {
  const unfinished = result.jobs
    .filter((job) => isFoldedShard(job) && job.status !== 'SUCCEEDED' && job.reason !== 'BUDGET' && !job.carriedFrom)
    .map((job) => job.jobId);
  return createRetrySpec(await runSpecOf(handle), result, await jobRewardsOf(handle.client, unfinished));
}

/** A new run of every task of `original`, on its pinned definitions, reading its cached answers. */
export function createRerunSpec(original: RunSpec): RunSpec {
  return {
    ...original,
    runId: newRunId(),
    submittedAt: new Date().toISOString(),
    benchrouter: benchRouterVersion(),
    retryOf: undefined,
    cacheFrom: [...original.cacheFrom, original.runId],
  };
}

/** The run definition pinned in a run's workflow input (the latest execution's, when it continued as new), its task definitions read back. */
export async function runSpecOf(handle: RunHandle): Promise<RunSpec> {
  return withTaskDefinitions(handle.client, await runInputOf(handle));
}

/** A run's workflow input as it is: a run that pins its task definitions by reference holds their names only (`definitions`). */
export async function runInputOf(handle: RunHandle): Promise<RunSpec> {
  // A later execution of a run that continues as new carries where it stood: not part of the definition.
  const { continuation: _continuation, ...spec } = await startInputOf<RunSpec>(handle.client, handle.workflowId, 'run');
  return spec;
}

/**
 * The input the latest execution of `workflowId` was started with: its history's first event, read
 * alone (a run's whole history can be thousands of events). `what` names the workflow in the error.
 */
export async function startInputOf<T>(workflows: WorkflowClient, workflowId: string, what = 'workflow'): Promise<T> {
  const { history } = await workflows.workflowService.getWorkflowExecutionHistory({
    namespace: workflows.options.namespace,
    execution: { workflowId },
    maximumPageSize: 1,
  });
  const payload = history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) throw new Error(`${what} ${workflowId} has no input in its history`);
  return fromStoredPayload<T>(payload);
}

/** A payload as a history holds it (encoded by this deployment's codecs), as a value. */
export async function fromStoredPayload<T>(payload: proto.temporal.api.common.v1.IPayload): Promise<T> {
  let payloads = [payload];
  // Codecs decode in the reverse of the order they encode.
  for (const codec of [...payloadCodecsFromEnv()].reverse()) payloads = await codec.decode(payloads);
  return defaultPayloadConverter.fromPayload(payloads[0]!) as T;
}

/**
 * Temporal refuses a payload over 2 MB, and a refused start can leave a run listed but never run.
 * `br validate` already holds task definitions to SUBMITTED_TASKS_LIMIT_BYTES; this catches the
 * rest of a run's definition (a retry's carried results, price tables) and a definition grown after
 * loading before any of it is sent.
 */
export const RUN_SPEC_LIMIT_BYTES = 1536 * 1024;

/** Throws an InputError naming `file` when `input` would be refused as a workflow input. */
export function refuseOversizedInput(input: unknown, file: string, what: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(input), 'utf8');
  if (bytes <= RUN_SPEC_LIMIT_BYTES) return;
  throw new InputError([
    {
      file,
      field: 'tasks',
      message: `expected ${what} to be at most ${RUN_SPEC_LIMIT_BYTES.toLocaleString('en-US')} bytes as submitted, got ${bytes.toLocaleString('en-US')} (Temporal limits one payload to 2 MB)`,
    },
  ]);
}

/**
 * `once`: the run id is derived from an idempotency key, and Temporal refuses a second start of it
 * (running or closed) with WorkflowExecutionAlreadyStartedError; `requestDigest` is kept in the memo
 * so that a key reused for a different request can be told apart.
 */
export interface SubmitOptions {
  once?: { requestDigest: string };
  /** Task definitions in page holders even when they are small enough to travel inline (recording fixtures). */
  definitionsByReference?: boolean;
  /** Told what submitting waits for besides Temporal: a task's instances listed in its image. */
  say?: (line: string) => void;
}

/** A started run, with its definition as submitted: its instances resolved and its plan of shards pinned. */
export type SubmittedRun = RunHandle & { spec: RunSpec };

export async function submitRun(client: Client, settings: Settings, unplanned: RunSpec, submit: SubmitOptions = {}): Promise<SubmittedRun> {
  // An endpoint that cannot serve is an error now, not a run whose every job fails (client/endpoint-preflight.ts).
  for (const note of await preflightEndpoints(client, settings, unplanned.runId, unplanned.options)) submit.say?.(note);
  // Instances a task lists by a command are listed on a worker first; the run pins the shards they make.
  const spec = await planRun(unplanned, listInstancesOnWorker(client, settings, unplanned.runId), submit.say);
  // Large definitions go in page holders first, so the run's input holds task names and digests only.
  const { input, pages } = pinDefinitions(spec, submit.definitionsByReference);
  const benchmarkFile = path.join(spec.benchmark.dir, 'benchmark.yaml');
  refuseOversizedInput(input, benchmarkFile, "the run's definition");
  // A definition bigger than a page has a page of its own, and each of its jobs carries it in its input.
  for (const [index, page] of pages.entries())
    refuseOversizedInput(page, benchmarkFile, `page ${index} of the run's task definitions (${page.map((task) => task.name).join(', ')})`);
  await storePages(client.workflow, settings.sharedQueue, spec.runId, pages);
  const handle = await client.workflow.start<typeof runWorkflow>('runWorkflow', {
    workflowId: spec.runId,
    taskQueue: settings.sharedQueue,
    args: [input],
    ...(submit.once ? { workflowIdReusePolicy: 'REJECT_DUPLICATE' as const } : {}),
    memo: {
      benchmark: spec.benchmark.name,
      model: spec.options.model,
      tasks: spec.tasks.length,
      ...(spec.retryOf ? { retryOf: spec.retryOf.runId } : {}),
      ...(submit.once ? { requestDigest: submit.once.requestDigest } : {}),
    },
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.model, value: spec.options.model },
      { key: SEARCH_ATTRIBUTES.benchmark, value: spec.benchmark.name },
      { key: SEARCH_ATTRIBUTES.status, value: 'RUNNING' },
    ],
  });
  return Object.assign(handle, { spec });
}

export function runHandle(client: Client, runId: string): RunHandle {
  return client.workflow.getHandle<typeof runWorkflow>(runId);
}

export async function queryProgress(handle: RunHandle): Promise<RunProgress> {
  return handle.query<RunProgress>('progress');
}

/**
 * Resolves with `result`, meanwhile calling `poll` every `intervalMs` and handing what it returns to
 * `onProgress`. A failed poll is skipped: the workflow may not have run its first task yet, or may
 * just have closed. The pause between polls ends with `result`: a timer left pending would keep the
 * process (`br run`) alive for up to `intervalMs` after the run's result is printed.
 */
export async function whilePolling<T, P>(result: Promise<T>, poll: () => Promise<P>, onProgress: ((p: P) => void) | undefined, intervalMs: number): Promise<T> {
  let done = false;
  let wake = () => {};
  const settled = result.finally(() => {
    done = true;
    wake();
  });
  if (onProgress) {
    void (async () => {
      while (!done) {
        try {
          const progress = await poll();
          // Progress read after the result would redraw a bar the waiting command has already closed.
          if (!done) onProgress(progress);
        } catch {
          // skipped
        }
        if (done) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, intervalMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    })();
  }
  return settled;
}

/** Waits for the run's result, calling onProgress as counts change (polling the progress query). */
export async function followRun(handle: RunHandle, onProgress?: (p: RunProgress) => void, intervalMs = 1000): Promise<RunResult> {
  return whilePolling(
    handle.result().then((result) => withJobs(handle.client, result)),
    () => queryProgress(handle),
    onProgress,
    intervalMs,
  );
}

export interface RunSummary {
  runId: string;
  status: string;
  benchmark: string;
  model: string;
  startTime: string;
  closeTime?: string;
  /** The run's overall score, once it has ended with one. */
  score?: number;
  /** A hash of the run's provenance, once it has ended (runs/provenance.ts provenanceHash). */
  provenance?: string;
  /** The score's n and 95% interval, once it has ended (runs/score-interval.ts). */
  scoreStats?: ScoreStats;
}

export interface RunFilter {
  model?: string;
  benchmark?: string;
  status?: string;
  /** Any of these statuses (the leaderboard: COMPLETED and PARTIAL). */
  statuses?: string[];
  /** Runs whose id starts with this: one schedule's (`br-schedule-<name>@`). */
  idPrefix?: string;
}

/** A visibility query for runs; values are quoted, so a filter can never change the query's shape. */
export function runsQuery(filter: RunFilter = {}): string {
  const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  // A run that continued as new has one execution per batch; only its latest speaks for the run.
  const clauses = [`WorkflowType = 'runWorkflow'`, `ExecutionStatus != 'ContinuedAsNew'`];
  if (filter.model) clauses.push(`${SEARCH_ATTRIBUTES.model.name} = ${quote(filter.model)}`);
  if (filter.benchmark) clauses.push(`${SEARCH_ATTRIBUTES.benchmark.name} = ${quote(filter.benchmark)}`);
  if (filter.status) clauses.push(statusClause(filter.status, quote));
  if (filter.statuses?.length) clauses.push(`${SEARCH_ATTRIBUTES.status.name} IN (${filter.statuses.map(quote).join(', ')})`);
  if (filter.idPrefix) clauses.push(`WorkflowId STARTS_WITH ${quote(filter.idPrefix)}`);
  return clauses.join(' AND ');
}

/** An execution's status as the SDK's enum names it, without its prefix: RUNNING, TERMINATED, TIMED_OUT... */
function executionStatusName(status: number | null | undefined): string {
  const name = proto.temporal.api.enums.v1.WorkflowExecutionStatus[status ?? 0] as string | undefined;
  return name ? name.replace(/^WORKFLOW_EXECUTION_STATUS_/, '') : 'UNKNOWN';
}

/** Visibility's own names for the execution statuses a run's status attribute cannot tell. */
const VISIBILITY_EXECUTION_STATUS: Record<string, string> = {
  RUNNING: 'Running',
  TERMINATED: 'Terminated',
  TIMED_OUT: 'TimedOut',
  FAILED: 'Failed',
  CANCELLED: 'Canceled',
};

/**
 * The status attribute says RUNNING until the run workflow itself sets the final one, so a run that
 * was terminated or timed out keeps RUNNING there forever: RUNNING, TERMINATED and TIMED_OUT are read
 * from the execution itself, and FAILED and CANCELLED from either.
 */
function statusClause(status: string, quote: (value: string) => string): string {
  const attribute = `${SEARCH_ATTRIBUTES.status.name} = ${quote(status)}`;
  const execution = VISIBILITY_EXECUTION_STATUS[status];
  if (!execution) return attribute;
  const byExecution = `ExecutionStatus = ${quote(execution)}`;
  return status === 'FAILED' || status === 'CANCELLED' ? `(${attribute} OR ${byExecution})` : byExecution;
}

/**
 * A run's status as `br list` shows it: the run's own (COMPLETED, PARTIAL, ...) while it runs or once
 * it completed, and the execution's when it closed any other way (TERMINATED, TIMED_OUT), whatever
 * the status attribute was left saying.
 */
export function shownRunStatus(executionStatus: string, attribute: string | undefined): string {
  if (executionStatus === 'RUNNING' || executionStatus === 'COMPLETED') return attribute ?? executionStatus;
  if (executionStatus === 'CANCELLED' && attribute === 'CANCELLED') return attribute;
  return executionStatus;
}

/** A Keyword search attribute's value from a raw listing (search attributes are never encrypted). */
/** Search attribute payloads through the SDK's own converter; a keyword list reads as its first entry. */
function keywordOf(fields: Record<string, proto.temporal.api.common.v1.IPayload> | null | undefined, name: string): string | undefined {
  const payload = fields?.[name];
  if (!payload?.data) return undefined;
  const value = defaultPayloadConverter.fromPayload<unknown>(payload);
  return Array.isArray(value) ? String(value[0]) : String(value);
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

function doubleOf(fields: Record<string, proto.temporal.api.common.v1.IPayload> | null | undefined, name: string): number | undefined {
  const payload = fields?.[name];
  return payload?.data ? Number(defaultPayloadConverter.fromPayload<unknown>(payload)) : undefined;
}

/**
 * Lists runs from visibility, newest first. It reads search attributes, not memos: memos may be
 * encrypted by a payload codec, and one run whose memo this process cannot decode must not hide
 * every other run.
 */
export async function listRuns(client: Client, limit = 50, filter: RunFilter = {}): Promise<RunSummary[]> {
  const runs: RunSummary[] = [];
  let pageToken: Uint8Array | undefined;
  do {
    const page = await listRunsPage(client, Math.min(limit - runs.length, 1000), filter, pageToken);
    for (const run of page.runs) runs.push(run);
    pageToken = page.nextPageToken;
  } while (pageToken && runs.length < limit);
  return runs.slice(0, limit);
}

/** One page of runs, and the token of the next page (absent on the last one). */
export async function listRunsPage(
  client: Client,
  pageSize: number,
  filter: RunFilter = {},
  pageToken?: Uint8Array,
): Promise<{ runs: RunSummary[]; nextPageToken?: Uint8Array }> {
  const page = await client.workflowService.listWorkflowExecutions({
    namespace: client.options.namespace,
    query: runsQuery(filter),
    pageSize,
    nextPageToken: pageToken,
  });
  const runs = (page.executions ?? []).map((execution): RunSummary => {
    const fields = execution.searchAttributes?.indexedFields;
    return {
      runId: execution.execution?.workflowId ?? '',
      status: shownRunStatus(executionStatusName(execution.status), keywordOf(fields, SEARCH_ATTRIBUTES.status.name)),
      benchmark: keywordOf(fields, SEARCH_ATTRIBUTES.benchmark.name) ?? '',
      model: keywordOf(fields, SEARCH_ATTRIBUTES.model.name) ?? '',
      ...(doubleOf(fields, SEARCH_ATTRIBUTES.score.name) !== undefined ? { score: doubleOf(fields, SEARCH_ATTRIBUTES.score.name) } : {}),
      ...optional('provenance', keywordOf(fields, SEARCH_ATTRIBUTES.provenance.name)),
      ...optional('scoreStats', parseScoreStats(keywordOf(fields, SEARCH_ATTRIBUTES.scoreStats.name))),
      startTime: optionalTsToDate(execution.startTime)?.toISOString() ?? '',
      closeTime: optionalTsToDate(execution.closeTime)?.toISOString(),
    };
  });
  return { runs, ...(page.nextPageToken?.length ? { nextPageToken: page.nextPageToken } : {}) };
}

export async function runExists(handle: RunHandle): Promise<boolean> {
  try {
    await handle.describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

// The run routes: submit (idempotent with a key), list, state and progress, results, records, cancel,
// retry and a job's log. Each is a thin layer over client/, the same code `br` runs.

import { jobCountOf } from '../runs/job-specs.js';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { withJobs } from '../client/run-jobs.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { readRecordsFile } from '../activities/records-file.js';
import { runSpecFromRequest } from '../client/run-request.js';
import { RunRequestSchema, type RunRequest } from '../runs/run-options.js';
import { retrySpecOf, listRunsPage, queryProgress, runHandle, runSpecOf, submitRun, type RunHandle } from '../client/runs.js';
import { JOB_FILES, jobFile, jobResultsDir } from '../runs/job-artifacts.js';
import { summarizeProgress } from '../runs/run-outcome.js';
import type { JobState, JobStatus, RunProgress, RunResult } from '../runs/run-spec.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { ApiError, ErrorBodySchema } from './api-error.js';
import { FinishedResults, SingleFlight } from './run-read-cache.js';
import type { LiveFigures } from '../runs/live-figures.js';
import type { TimedCall } from '../runs/run-timeline.js';
import { runLinks, type ApiContext } from './api-context.js';

const RunIdParams = z.object({ id: z.string().min(1).max(200) });
const LinksSchema = z.object({ api: z.string(), dashboard: z.string(), webUi: z.string() });
const SubmittedSchema = z.object({
  runId: z.string(),
  created: z.boolean().describe('false when an Idempotency-Key named a run submitted before'),
  jobs: z.number().int(),
  links: LinksSchema,
});
const ProgressSchema = z.object({
  total: z.number(),
  pending: z.number(),
  running: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  timedOut: z.number(),
  cancelled: z.number(),
  jobs: z.array(z.object({ jobId: z.string(), task: z.string(), state: z.string() })),
});
const RunSummarySchema = z.object({
  runId: z.string(),
  status: z.string(),
  benchmark: z.string(),
  model: z.string(),
  startTime: z.string(),
  closeTime: z.string().optional(),
  score: z.number().optional(),
  provenance: z.string().optional().describe("a hash of the run's provenance: runs with equal hashes were measured alike"),
  scoreStats: z
    .object({ n: z.number(), low: z.number().optional(), high: z.number().optional(), method: z.enum(['repeats', 'wilson', 'normal']).optional() })
    .optional()
    .describe("the score's n and 95% interval (docs/results.md)"),
});
const RunStateSchema = z.object({
  runId: z.string(),
  workflowStatus: z.string().describe("Temporal's execution status"),
  status: z.string().describe('RUNNING, or the run outcome: COMPLETED, PARTIAL, FAILED, CANCELLED (TERMINATED, TIMED_OUT when it closed without one)'),
  benchmark: z.string(),
  model: z.string(),
  progress: ProgressSchema.nullable(),
  overall: z.number().nullable().optional(),
  links: LinksSchema,
});
const RunResultSchema = z.looseObject({
  runId: z.string(),
  benchmark: z.string(),
  model: z.string(),
  status: z.string(),
  overall: z.number().nullable(),
  jobs: z.array(z.looseObject({ jobId: z.string(), task: z.string(), status: z.string() })),
});
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;
const errors = { 400: ErrorBodySchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 422: ErrorBodySchema, 503: ErrorBodySchema };

/** A run's handle, or 404 naming the id. */
export async function existingRunOr404(
  context: ApiContext,
  runId: string,
): Promise<{ handle: RunHandle; description: Awaited<ReturnType<RunHandle['describe']>> }> {
  const handle = runHandle(context.client, runId);
  try {
    return { handle, description: await handle.describe() };
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new ApiError(404, `run ${runId} not found in namespace ${context.settings.temporalNamespace}`, 'path.id');
    throw error;
  }
}

/** What one server keeps between requests. A state is reused for half a progress poll of the SSE stream: fresh enough for people, and one Temporal read for many callers. */
export function createRunReads(): {
  finished: FinishedResults<RunResult>;
  timelines: FinishedResults<TimedCall[]>;
  states: SingleFlight<RunState>;
  live: SingleFlight<LiveFigures>;
} {
  return {
    finished: new FinishedResults<RunResult>(),
    // A finished run's calls over time (every transcript read once, not on each view of its page), fewer: they are larger.
    timelines: new FinishedResults<TimedCall[]>(200),
    states: new SingleFlight<RunState>(250),
    // Live figures (a visibility query and the transcripts' tails) are read once per interval for every open stream of a run.
    live: new SingleFlight<LiveFigures>(1_000),
  };
}

/** The finished run's result, or 409 saying why there is none yet; `described`: the run as the caller already described it. */
export async function finishedResult(context: ApiContext, runId: string, described?: Awaited<ReturnType<typeof existingRunOr404>>): Promise<RunResult> {
  const cached = context.reads.finished.get(runId);
  if (cached) return cached;
  const { handle, description } = described ?? (await existingRunOr404(context, runId));
  if (description.status.name === 'RUNNING') throw new ApiError(409, `run ${runId} is still running: follow GET /runs/${runId}/events`);
  if (description.status.name !== 'COMPLETED') throw new ApiError(409, `run ${runId} ended as ${description.status.name} without a result`);
  const result = await withJobs(context.client.workflow, await handle.result());
  context.reads.finished.set(runId, result);
  return result;
}

export interface RunState {
  workflowStatus: string;
  benchmark: string;
  model: string;
  progress: RunProgress | null;
  result?: RunResult;
}

/** A run's state: from the kept result once it finished, else read from Temporal (once per interval, for every caller). */
export async function runState(context: ApiContext, runId: string): Promise<RunState> {
  const cached = context.reads.finished.get(runId);
  if (cached) return { workflowStatus: 'COMPLETED', benchmark: cached.benchmark, model: cached.model, progress: progressOfResult(cached), result: cached };
  return context.reads.states.read(runId, async () => {
    const { handle, description } = await existingRunOr404(context, runId);
    const workflowStatus = description.status.name;
    const result = workflowStatus === 'COMPLETED' ? await withJobs(context.client.workflow, await handle.result()) : undefined;
    if (result) context.reads.finished.set(runId, result);
    // A finished run's progress follows from its result: querying a closed workflow makes a worker replay it.
    const progress = result ? progressOfResult(result) : await queryProgress(handle).catch(() => null);
    return {
      workflowStatus,
      benchmark: result?.benchmark ?? description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.benchmark) ?? '',
      model: result?.model ?? description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.model) ?? '',
      progress,
      ...(result ? { result } : {}),
    };
  });
}

const JOB_STATE: Record<JobStatus, JobState> = { SUCCEEDED: 'succeeded', FAILED: 'failed', TIMED_OUT: 'timed_out', CANCELLED: 'cancelled' };

export function progressOfResult(result: RunResult): RunProgress {
  return summarizeProgress(result.jobs.map((job) => ({ jobId: job.jobId, task: job.task, state: JOB_STATE[job.status] })));
}

/** Run ids from an idempotency key: scoped per token, so two callers' keys never meet. */
function keyedRunId(caller: string, key: string): string {
  return `br-key-${createHash('sha256').update(`${caller}\0${key}`).digest('hex').slice(0, 32)}`;
}

function requestDigest(request: RunRequest): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

async function submitOnce(context: ApiContext, request: FastifyRequest, body: RunRequest, key: string) {
  const runId = keyedRunId(request.caller?.name ?? '', key);
  const digest = requestDigest(body);
  const spec = runSpecFromRequest(body, { file: 'body', runId });
  try {
    const submitted = await submitRun(context.client, context.settings, spec, { once: { requestDigest: digest } });
    return { runId, created: true, jobs: jobCountOf(submitted.spec) };
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    const described = await runHandle(context.client, runId).describe();
    if (described.memo?.requestDigest !== digest)
      throw new ApiError(422, `Idempotency-Key "${key}" was used before for a different request body`, 'header.idempotency-key');
    // The same body plans the same jobs (a command's list of instances aside, which the first submit pinned).
    return { runId, created: false, jobs: jobCountOf({ ...spec, plan: (await runSpecOf(runHandle(context.client, runId))).plan }) };
  }
}

export function registerRunRoutes(app: FastifyInstance, context: ApiContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.post(
    '/evals/submit',
    {
      schema: {
        summary: 'Start a run: the same run definition as `br submit`',
        tags: ['runs'],
        headers: z.looseObject({ 'idempotency-key': z.string().regex(IDEMPOTENCY_KEY, 'expected 1-200 printable ASCII characters').optional() }),
        body: RunRequestSchema,
        response: { 200: SubmittedSchema, 201: SubmittedSchema, ...errors },
      },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      if (typeof key === 'string') {
        const submitted = await submitOnce(context, request, request.body, key);
        return reply.status(submitted.created ? 201 : 200).send({ ...submitted, links: runLinks(request, context.settings, submitted.runId) });
      }
      const spec = runSpecFromRequest(request.body, { file: 'body' });
      const submitted = await submitRun(context.client, context.settings, spec);
      return reply
        .status(201)
        .send({ runId: spec.runId, created: true, jobs: jobCountOf(submitted.spec), links: runLinks(request, context.settings, spec.runId) });
    },
  );

  api.get(
    '/runs',
    {
      schema: {
        summary: 'Recent runs, newest first',
        tags: ['runs'],
        querystring: z.object({
          model: z.string().optional(),
          benchmark: z.string().optional(),
          status: z.string().optional(),
          limit: z.coerce.number().int().min(1).max(1000).default(50),
          pageToken: z.string().optional().describe('nextPageToken of the previous page'),
        }),
        response: { 200: z.object({ runs: z.array(RunSummarySchema), nextPageToken: z.string().optional() }), ...errors },
      },
    },
    async (request) => {
      const { model, benchmark, status, limit, pageToken } = request.query;
      const page = await listRunsPage(
        context.client,
        limit,
        { model, benchmark, status: status?.toUpperCase() },
        pageToken ? Buffer.from(pageToken, 'base64url') : undefined,
      );
      return { runs: page.runs, ...(page.nextPageToken ? { nextPageToken: Buffer.from(page.nextPageToken).toString('base64url') } : {}) };
    },
  );

  api.get(
    '/runs/:id',
    { schema: { summary: "A run's state and per-job progress", tags: ['runs'], params: RunIdParams, response: { 200: RunStateSchema, ...errors } } },
    async (request) => {
      const state = await runState(context, request.params.id);
      return {
        runId: request.params.id,
        workflowStatus: state.workflowStatus,
        status: state.result?.status ?? state.workflowStatus,
        benchmark: state.benchmark,
        model: state.model,
        progress: state.progress,
        ...(state.result ? { overall: state.result.overall } : {}),
        links: runLinks(request, context.settings, request.params.id),
      };
    },
  );

  api.get(
    '/runs/:id/results',
    { schema: { summary: "A finished run's results (409 while it runs)", tags: ['runs'], params: RunIdParams, response: { 200: RunResultSchema, ...errors } } },
    // RunResult as the loose schema sees it: extra fields pass through; interfaces lack its index signature.
    async (request) => (await finishedResult(context, request.params.id)) as unknown as z.infer<typeof RunResultSchema>,
  );

  api.get(
    '/runs/:id/records',
    {
      schema: {
        summary: "A finished run's per-instance records (records.jsonl of each job), paged",
        tags: ['runs'],
        params: RunIdParams,
        querystring: z.object({
          offset: z.coerce.number().int().min(0).default(0),
          limit: z.coerce.number().int().min(1).max(1000).default(100),
          job: z.string().optional(),
        }),
        response: {
          200: z.object({ records: z.array(z.looseObject({ jobId: z.string(), task: z.string() })), offset: z.number(), nextOffset: z.number().optional() }),
          ...errors,
        },
      },
    },
    async (request) => {
      const result = await finishedResult(context, request.params.id);
      const { offset, limit, job } = request.query;
      const records: Array<Record<string, unknown> & { jobId: string; task: string }> = [];
      let seen = 0;
      for (const j of result.jobs.filter((j) => !job || j.jobId === job)) {
        if (records.length > limit) break;
        await readRecordsFile(jobResultsDir(context.settings.artifactsRoot, { runId: result.runId, jobId: j.jobId, carriedFrom: j.carriedFrom }), (outcome) => {
          if (!('record' in outcome)) return;
          if (seen++ >= offset && records.length <= limit) records.push({ jobId: j.jobId, task: j.task, ...outcome.record });
        });
      }
      const more = records.length > limit;
      return { records: records.slice(0, limit), offset, ...(more ? { nextOffset: offset + limit } : {}) };
    },
  );

  api.post(
    '/runs/:id/cancel',
    {
      schema: {
        summary: 'Cancel a run: its containers stop, harvested results are kept',
        tags: ['runs'],
        params: RunIdParams,
        response: { 202: z.object({ runId: z.string(), status: z.literal('CANCELLING') }), ...errors },
      },
    },
    async (request, reply) => {
      const { handle, description } = await existingRunOr404(context, request.params.id);
      if (description.status.name !== 'RUNNING')
        throw new ApiError(409, `run ${request.params.id} is ${description.status.name}: only a running run can be cancelled`);
      await handle.cancel();
      return reply.status(202).send({ runId: request.params.id, status: 'CANCELLING' as const });
    },
  );

  api.post(
    '/runs/:id/retry',
    {
      schema: {
        summary: "A new run of a finished run's jobs that did not succeed; succeeded ones are carried over",
        tags: ['runs'],
        params: RunIdParams,
        response: { 201: SubmittedSchema.extend({ retryOf: z.string(), carried: z.number() }), ...errors },
      },
    },
    async (request, reply) => {
      const result = await finishedResult(context, request.params.id);
      const spec = await retrySpecOf(runHandle(context.client, request.params.id), result);
      if (jobCountOf(spec) === 0) throw new ApiError(409, `run ${request.params.id}: every job succeeded; nothing to retry`);
      const submitted = await submitRun(context.client, context.settings, spec);
      return reply.status(201).send({
        runId: spec.runId,
        created: true,
        jobs: jobCountOf(submitted.spec),
        retryOf: request.params.id,
        carried: spec.retryOf?.carried.length ?? 0,
        links: runLinks(request, context.settings, spec.runId),
      });
    },
  );

  api.get(
    '/runs/:id/jobs/:job/log',
    {
      schema: {
        summary: "The tail of a job's container output (container-tail.log), as text",
        tags: ['runs'],
        params: RunIdParams.extend({ job: z.string().regex(/^[\w.-]+$/, 'expected a job id') }),
        produces: ['text/plain'],
      },
    },
    async (request, reply) => {
      const { id, job } = request.params;
      if (!job.startsWith(id) || job.includes('..')) throw new ApiError(404, `run ${id} has no job ${job}`, 'path.job');
      const file = jobFile(context.settings.artifactsRoot, { runId: id, jobId: job }, 'containerTail');
      if (!existsSync(file))
        throw new ApiError(404, `no ${JOB_FILES.containerTail} for job ${job} on this server: the job has not finished, or ran on another host`, 'path.job');
      return reply.type('text/plain; charset=utf-8').send(readFileSync(file, 'utf8'));
    },
  );
}

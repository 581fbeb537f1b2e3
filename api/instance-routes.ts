// Per-instance routes of a finished run: its instances (records.jsonl of each job) paged, filtered to
// the failures and searchable, and a job's transcript (every model call, keys and tokens redacted),
// optionally only one instance's calls. The dashboard's instance and transcript pages read the same.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TranscriptLine } from '../gateway/transcript.js';
import { InstancePage, instanceRow, matchesFilter, type InstanceFilter } from '../runs/instance-list.js';
import type { JobResult, RunResult } from '../runs/run-spec.js';
import { linesOfInstance, parseTranscript } from '../gateway/transcript-chat.js';
import { ApiError, ErrorBodySchema } from './api-error.js';
import type { ApiContext } from './api-context.js';
import { jobFileBytes, visitJobRecords } from './job-files.js';
import { finishedResult } from './run-routes.js';

export const InstanceQuery = z.object({
  job: z.string().optional().describe('only this job'),
  failed: z
    .enum(['true', 'false', '1', '0', ''])
    .optional()
    .transform((v) => v === 'true' || v === '1')
    .describe('only instances that scored below 1'),
  q: z.string().max(200).optional().describe('text in the id, query, prompt, prediction or ground truth'),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(50),
});

const InstanceRowSchema = z.object({
  jobId: z.string(),
  task: z.string(),
  repeat: z.number(),
  id: z.string(),
  score: z.number(),
  promptTokens: z.number().nullable(),
  completionTokens: z.number().nullable(),
  cost: z.number().nullable(),
  calls: z.number().nullable().describe("the gateway's calls tagged with this instance"),
  latencyMs: z.number().nullable().describe('their latency, summed'),
  shard: z.string().nullable().describe("for a task run in shards, its job's shard: `2 of 8`"),
  host: z.string().nullable().describe('the host that ran its job'),
  carriedFrom: z
    .string()
    .nullable()
    .describe('when it was carried over rather than evaluated by its job: the job that scored it, or "an earlier attempt" of this one'),
  artifacts: z
    .string()
    .optional()
    .describe(
      "the instance's own files its record names (`artifacts`, or harbor's `trial`): a file or folder of its job's results, read with /runs/{id}/jobs/{job}/files?prefix=",
    ),
});
/** A run's job in a route's path: `/runs/{id}/jobs/{job}/...`. */
export const RunJobParams = z.object({ id: z.string().min(1).max(200), job: z.string().min(1).max(300) });
const errors = { 400: ErrorBodySchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 503: ErrorBodySchema };

/** One page of a finished run's instances: every job's records streamed past, the page kept. */
export async function instancesOf(
  context: ApiContext,
  result: RunResult,
  query: { job?: string; offset: number; limit: number } & InstanceFilter,
): Promise<InstancePage> {
  const page = new InstancePage(query.offset, query.limit);
  for (const job of result.jobs.filter((j) => !query.job || j.jobId === query.job))
    await visitJobRecords(context, result.runId, job, (outcome) => {
      if ('record' in outcome && matchesFilter(outcome.record, query)) page.offer(() => instanceRow(job, outcome.record));
    });
  return page;
}

/** The run's job, or 404 naming what the run has. */
export function jobOf(result: RunResult, jobId: string): JobResult {
  const job = result.jobs.find((j) => j.jobId === jobId || j.jobId === `${result.runId}.${jobId}`);
  if (!job) throw new ApiError(404, `run ${result.runId} has no job ${jobId}`, 'path.job');
  return job;
}

/** A job's transcript lines, only `instance`'s calls when given; undefined when the job has none. */
export async function transcriptOf(
  context: ApiContext,
  result: RunResult,
  job: JobResult,
  instance?: string,
): Promise<{ lines: TranscriptLine[]; unreadable: number } | undefined> {
  const bytes = await jobFileBytes(context, result.runId, job, 'transcript');
  if (!bytes) return undefined;
  const { lines, unreadable } = parseTranscript(bytes.toString('utf8'));
  return { lines: linesOfInstance(lines, instance), unreadable };
}

export function registerInstanceRoutes(app: FastifyInstance, context: ApiContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/runs/:id/instances',
    {
      schema: {
        summary: "A finished run's instances: score, tokens, cost and the gateway's calls and latency each, paged, filtered and searchable",
        tags: ['runs'],
        params: z.object({ id: z.string().min(1).max(200) }),
        querystring: InstanceQuery,
        response: {
          200: z.object({
            instances: z.array(InstanceRowSchema),
            total: z.number().describe('instances matching the filter'),
            offset: z.number(),
            nextOffset: z.number().optional(),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const result = await finishedResult(context, request.params.id);
      if (request.query.job) jobOf(result, request.query.job);
      const page = await instancesOf(context, result, { ...request.query, search: request.query.q });
      const next = page.nextOffset;
      return { instances: page.rows, total: page.total, offset: page.offset, ...(next !== undefined ? { nextOffset: next } : {}) };
    },
  );

  api.get(
    '/runs/:id/jobs/:job/transcript',
    {
      schema: {
        summary: "A finished job's model calls in order (transcript.jsonl, keys and tokens redacted), or one instance's",
        tags: ['runs'],
        params: RunJobParams,
        querystring: z.object({ instance: z.string().optional().describe('only the calls tagged with this instance') }),
        response: { 200: z.object({ jobId: z.string(), calls: z.array(z.looseObject({})), unreadable: z.number() }), ...errors },
      },
    },
    async (request) => {
      const result = await finishedResult(context, request.params.id);
      const job = jobOf(result, request.params.job);
      const transcript = await transcriptOf(context, result, job, request.query.instance);
      if (!transcript) throw new ApiError(404, `job ${job.jobId} has no transcript (transcripts off, or a run from before them)`, 'path.job');
      return { jobId: job.jobId, calls: transcript.lines as unknown as Array<Record<string, unknown>>, unreadable: transcript.unreadable };
    },
  );
}

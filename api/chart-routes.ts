// The dashboard's pictures from the API, each as SVG or PNG (resvg): a schedule's score against
// checkpoint, the leaderboard's heat map, two runs' agreement matrix and a finished run over time.

import type { FastifyInstance, FastifyReply } from 'fastify';
import pMap from 'p-map';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { instanceAgreement, RIGHT_AT, type InstanceAgreement } from '../analysis/instance-agreement.js';
import { renderPng } from '../analysis/plot-png.js';
import { finishedRuns } from '../client/leaderboard.js';
import { describeSchedule, scheduleBoard, ScheduleMissingError } from '../client/schedules.js';
import { buildLeaderboard } from '../runs/leaderboard.js';
import type { TimedCall } from '../runs/run-timeline.js';
import type { RunResult } from '../runs/run-spec.js';
import { timedCalls } from './live-figures.js';
import { ApiError, ErrorBodySchema } from './api-error.js';
import type { ApiContext } from './api-context.js';
import { runIdsOf } from './board-routes.js';
import { agreementSvg, checkpointSvg, leaderboardSvg, timelineSvg } from './chart-views.js';
import { jobFileBytes, jobFilesHere, visitJobRecords } from './job-files.js';
import { finishedResult } from './run-routes.js';

const FORMATS = ['svg', 'png'] as const;
const errors = { 400: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 422: ErrorBodySchema, 503: ErrorBodySchema };

function sendPicture(reply: FastifyReply, format: (typeof FORMATS)[number], svg: string) {
  return format === 'svg' ? reply.type('image/svg+xml').send(svg) : reply.type('image/png').send(renderPng(svg));
}

/** The finished runs named in `runs` (in order, each read once through the server's cache). */
export async function finishedResultsOf(context: ApiContext, ids: readonly string[]): Promise<RunResult[]> {
  const results: RunResult[] = [];
  for (const id of ids) results.push(await finishedResult(context, id));
  return results;
}

/** Two runs named in `runs`, finished, compared instance by instance. */
export async function agreementOfRuns(context: ApiContext, runs: string): Promise<{ runA: string; runB: string; agreement: InstanceAgreement }> {
  const ids = runIdsOf(runs);
  if (ids.length !== 2) throw new ApiError(400, `expected two run ids, got ${ids.length}`, 'query.runs');
  return agreementOf(context, await finishedResultsOf(context, ids));
}

/** A finished run's scores per `task/instance`, every repeat's kept, from its records wherever its jobs ran. */
async function scoresByInstance(context: ApiContext, result: RunResult): Promise<Map<string, number[]>> {
  const scores = new Map<string, number[]>();
  for (const job of result.jobs)
    await visitJobRecords(context, result.runId, job, (outcome) => {
      if (!('record' in outcome)) return;
      const id = `${job.task}/${outcome.record.index}`;
      scores.set(id, [...(scores.get(id) ?? []), outcome.record.score]);
    });
  return scores;
}

/** Two finished runs' instances compared (the results as finishedResult read them). */
export async function agreementOf(context: ApiContext, results: readonly RunResult[]): Promise<{ runA: string; runB: string; agreement: InstanceAgreement }> {
  if (results.length !== 2) throw new ApiError(400, `expected two run ids, got ${results.length}`, 'query.runs');
  const [runA, runB] = results.map((r) => r.runId) as [string, string];
  const [a, b] = await Promise.all(results.map((result) => scoresByInstance(context, result)));
  const agreement = instanceAgreement(a!, b!);
  if (agreement.shared === 0)
    throw new ApiError(422, `runs ${runA} and ${runB} share no instance in their records.jsonl: nothing to compare instance by instance`, 'query.runs');
  return { runA, runB, agreement };
}

/** Transcripts read at once from the hosts that ran a run's jobs: each remote read is a short workflow of ~0.1 s. */
const TRANSCRIPT_READS = 16;

/**
 * Every call of a finished run's transcripts: when it ended and its tokens. Kept once every job's transcript
 * was read (or found absent); a host that could not be reached is asked again on the next view.
 */
export async function callsOf(context: ApiContext, result: RunResult): Promise<TimedCall[]> {
  const kept = context.reads.timelines.get(result.runId);
  if (kept) return kept;
  let complete = true;
  const perJob = await pMap(
    result.jobs,
    async (job) => {
      const bytes = await jobFileBytes(context, result.runId, job, 'transcript').catch(() => {
        complete = false;
        return undefined;
      });
      return bytes ? timedCalls(bytes.toString('utf8')) : [];
    },
    { concurrency: TRANSCRIPT_READS },
  );
  const calls = perJob.flat();
  if (complete) context.reads.timelines.set(result.runId, calls);
  return calls;
}

/**
 * The calls when they are at hand: kept from an earlier read, or every job's transcript on this host's disk.
 * Undefined when some must be read from the hosts that ran them (for a run of thousands of jobs, minutes).
 */
export async function callsAtHand(context: ApiContext, result: RunResult): Promise<TimedCall[] | undefined> {
  const atHand = context.reads.timelines.get(result.runId) || result.jobs.every((job) => jobFilesHere(context, result.runId, job));
  return atHand ? callsOf(context, result) : undefined;
}

export function registerChartRoutes(app: FastifyInstance, context: ApiContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/compare/agreement',
    {
      schema: {
        summary: `Two finished runs instance by instance: both right, only A, only B, neither (right: mean score at least ${RIGHT_AT})`,
        tags: ['leaderboard'],
        querystring: z.object({ runs: z.string().min(1).describe('two comma-separated run ids: A,B') }),
        response: {
          200: z.object({
            runA: z.string(),
            runB: z.string(),
            bothRight: z.number(),
            onlyA: z.number(),
            onlyB: z.number(),
            neither: z.number(),
            shared: z.number(),
            onlyInA: z.number(),
            onlyInB: z.number(),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { runA, runB, agreement } = await agreementOfRuns(context, request.query.runs);
      return { runA, runB, ...agreement };
    },
  );

  for (const format of FORMATS) {
    const produces = [format === 'svg' ? 'image/svg+xml' : 'image/png'];
    api.get(
      `/schedules/:name/plot.${format}`,
      {
        schema: {
          summary: `A schedule's score against checkpoint, a line per benchmark, as ${format.toUpperCase()}`,
          tags: ['schedules'],
          params: z.object({ name: z.string() }),
          produces,
        },
      },
      async (request, reply) => {
        try {
          await describeSchedule(context.client, request.params.name);
        } catch (error) {
          if (error instanceof ScheduleMissingError) throw new ApiError(404, error.problems[0]!.message, 'path.name');
          throw error;
        }
        return sendPicture(reply, format, checkpointSvg(await scheduleBoard(context.client, request.params.name)));
      },
    );
    api.get(
      `/leaderboard/heatmap.${format}`,
      {
        schema: {
          summary: `The leaderboard as a heat map, each cell with its 95% interval and n, as ${format.toUpperCase()}`,
          tags: ['leaderboard'],
          querystring: z.object({ benchmark: z.string().optional(), model: z.string().optional(), pick: z.enum(['latest', 'best']).default('latest') }),
          produces,
        },
      },
      async (request, reply) => {
        const { benchmark, model, pick } = request.query;
        return sendPicture(reply, format, leaderboardSvg(buildLeaderboard(await finishedRuns(context.client, { benchmark, model }), pick)));
      },
    );
    api.get(
      `/compare/agreement.${format}`,
      {
        schema: {
          summary: `Two finished runs' agreement matrix as ${format.toUpperCase()}`,
          tags: ['leaderboard'],
          querystring: z.object({ runs: z.string().min(1).describe('two comma-separated run ids: A,B') }),
          produces,
        },
      },
      async (request, reply) => {
        const { runA, runB, agreement } = await agreementOfRuns(context, request.query.runs);
        return sendPicture(reply, format, agreementSvg(runA, runB, agreement));
      },
    );
    api.get(
      `/runs/:id/timeline.${format}`,
      {
        schema: {
          summary: `A finished run over time: jobs finished, and jobs, calls and tokens per minute, as ${format.toUpperCase()}`,
          tags: ['runs'],
          params: z.object({ id: z.string().min(1).max(200) }),
          produces,
        },
      },
      async (request, reply) => {
        const result = await finishedResult(context, request.params.id);
        const svg = timelineSvg(result.jobs, await callsOf(context, result));
        if (!svg) throw new ApiError(409, `run ${result.runId} has no job with timings`);
        return sendPicture(reply, format, svg);
      },
    );
  }
}

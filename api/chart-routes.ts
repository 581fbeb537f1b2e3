// The dashboard's pictures from the API, each as SVG or PNG (resvg): a schedule's score against
// checkpoint, the leaderboard's heat map, two runs' agreement matrix and a finished run over time.

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { instanceAgreement, pooledInstances, RIGHT_AT, type InstanceAgreement } from '../analysis/instance-agreement.js';
import { renderPng } from '../analysis/plot-png.js';
import { finishedRuns } from '../client/leaderboard.js';
import { instanceScoresByTask } from '../client/run-records.js';
import { describeSchedule, scheduleBoard, ScheduleMissingError } from '../client/schedules.js';
import { buildLeaderboard } from '../runs/leaderboard.js';
import type { TimedCall } from '../runs/run-timeline.js';
import type { RunResult } from '../runs/run-spec.js';
import { timedCalls } from './live-figures.js';
import { ApiError, ErrorBodySchema } from './api-error.js';
import type { ApiContext } from './api-context.js';
import { runIdsOf } from './board-routes.js';
import { agreementSvg, checkpointSvg, leaderboardSvg, timelineSvg } from './chart-views.js';
import { jobFileBytes } from './job-files.js';
import { finishedResult } from './run-routes.js';

const FORMATS = ['svg', 'png'] as const;
const errors = { 400: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 422: ErrorBodySchema, 503: ErrorBodySchema };

function sendPicture(reply: FastifyReply, format: (typeof FORMATS)[number], svg: string) {
  return format === 'svg' ? reply.type('image/svg+xml').send(svg) : reply.type('image/png').send(renderPng(svg));
}

/** Two finished runs' instances compared, from their records on this host. */
export async function agreementOf(context: ApiContext, runs: string): Promise<{ runA: string; runB: string; agreement: InstanceAgreement }> {
  const ids = runIdsOf(runs);
  if (ids.length !== 2) throw new ApiError(400, `expected two run ids, got ${ids.length}`, 'query.runs');
  const [runA, runB] = ids as [string, string];
  for (const id of ids) await finishedResult(context, id);
  const [a, b] = await Promise.all(ids.map((id) => instanceScoresByTask(context.client, context.settings.artifactsRoot, id)));
  const agreement = instanceAgreement(pooledInstances(a!), pooledInstances(b!));
  if (agreement.shared === 0)
    throw new ApiError(
      422,
      `runs ${runA} and ${runB} share no instance in their records.jsonl on this server: nothing to compare instance by instance`,
      'query.runs',
    );
  return { runA, runB, agreement };
}

/** Every call of a finished run's transcripts: when it ended and its tokens. */
export async function callsOf(context: ApiContext, result: RunResult): Promise<TimedCall[]> {
  const calls: TimedCall[] = [];
  for (const job of result.jobs) {
    const bytes = await jobFileBytes(context, result.runId, job, 'transcript').catch(() => undefined);
    if (bytes) calls.push(...timedCalls(bytes.toString('utf8')));
  }
  return calls;
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
      const { runA, runB, agreement } = await agreementOf(context, request.query.runs);
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
        const { runA, runB, agreement } = await agreementOf(context, request.query.runs);
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

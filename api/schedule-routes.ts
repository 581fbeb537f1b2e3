// The schedule routes: create, list, read (score against checkpoint, with each run), pause, unpause,
// trigger and delete evaluation schedules. A thin layer over client/schedules.ts, as `br schedule` is.

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { runSpecFromRequest } from '../client/run-request.js';
import { RunOptionFields, withRunOptionRules } from '../runs/run-options.js';
import {
  checkScheduleName,
  createSchedule,
  deleteSchedule,
  describeSchedule,
  listSchedules,
  parseEvery,
  pauseSchedule,
  runTemplate,
  scheduleBoard,
  ScheduleExistsError,
  ScheduleMissingError,
  triggerSchedule,
  unpauseSchedule,
} from '../client/schedules.js';
import { CHECKPOINT_PLACEHOLDER, SCHEDULE_NAME } from '../runs/schedule-spec.js';
import { ApiError, ErrorBodySchema } from './api-error.js';
import { baseUrl, type ApiContext } from './api-context.js';

/** A run's options but the model (the checkpoint the endpoint serves when the schedule fires), with the schedule's own fields. */
export const ScheduleRequestSchema = withRunOptionRules(
  RunOptionFields.omit({ model: true }).extend({
    benchmark: z.string().min(1).describe('a built-in benchmark name (see GET /benchmarks) or a benchmark directory on the server'),
    name: z.string().regex(SCHEDULE_NAME, 'expected 1-63 lowercase letters, digits, "-" or "_", starting with a letter or digit'),
    every: z.string().optional().describe('fire every interval: 30s, 15m, 2h, 1d, or a number of minutes; absent: only when triggered'),
    paused: z.boolean().optional(),
  }),
);

const ScheduleViewSchema = z.object({
  name: z.string(),
  scheduleId: z.string(),
  target: z.string().describe('the benchmark, or suite:<name>'),
  endpoint: z.string(),
  everySeconds: z.number().nullable(),
  paused: z.boolean(),
  recentFirings: z.array(z.string()),
  nextFiring: z.string().nullable(),
});
const CellSchema = z.object({ runId: z.string(), status: z.string(), score: z.number().optional(), link: z.string() });
const BoardSchema = z.object({
  schedule: ScheduleViewSchema,
  benchmarks: z.array(z.string()),
  rows: z.array(z.object({ checkpoint: z.string(), foundAt: z.string(), cells: z.record(z.string(), CellSchema) })),
});
const NameParams = z.object({ name: z.string().min(1).max(100) });
const errors = { 400: ErrorBodySchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 422: ErrorBodySchema, 503: ErrorBodySchema };

/** The client's "no such schedule" and "exists already" as 404 and 409; other input errors stay 422. */
async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ScheduleMissingError) throw new ApiError(404, error.problems[0]!.message, 'path.name');
    if (error instanceof ScheduleExistsError) throw new ApiError(409, error.problems[0]!.message, 'body.name');
    throw error;
  }
}

export function registerScheduleRoutes(app: FastifyInstance, context: ApiContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.post(
    '/schedules',
    {
      schema: {
        summary: "Create an evaluation schedule: each firing runs the benchmark against the endpoint's current checkpoint, once per checkpoint",
        tags: ['schedules'],
        body: ScheduleRequestSchema,
        response: { 201: ScheduleViewSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { name, every, paused, ...run } = request.body;
      checkScheduleName(name, 'body.name');
      const everySeconds = every === undefined ? undefined : parseEvery(every, 'body.every');
      const template = runTemplate(runSpecFromRequest({ ...run, model: CHECKPOINT_PLACEHOLDER }, { file: 'body' }));
      const view = await mapped(() =>
        createSchedule(context.client, context.settings, {
          spec: { name, endpoint: run.endpoint, ...(run.apiKeyEnv ? { apiKeyEnv: run.apiKeyEnv } : {}), target: { kind: 'run', run: template } },
          ...(everySeconds ? { everySeconds } : {}),
          paused: paused === true,
        }),
      );
      return reply.status(201).send(view);
    },
  );

  api.get(
    '/schedules',
    {
      schema: { summary: 'The evaluation schedules', tags: ['schedules'], response: { 200: z.object({ schedules: z.array(ScheduleViewSchema) }), ...errors } },
    },
    async () => ({ schedules: await listSchedules(context.client) }),
  );

  api.get(
    '/schedules/:name',
    {
      schema: {
        summary: "A schedule and its checkpoints, oldest first: each benchmark's run and score",
        tags: ['schedules'],
        params: NameParams,
        response: { 200: BoardSchema, ...errors },
      },
    },
    async (request) => {
      const schedule = await mapped(() => describeSchedule(context.client, request.params.name));
      const board = await scheduleBoard(context.client, request.params.name);
      const base = baseUrl(request);
      return {
        schedule,
        benchmarks: board.benchmarks,
        rows: board.rows.map((row) => ({
          ...row,
          cells: Object.fromEntries(Object.entries(row.cells).map(([b, cell]) => [b, { ...cell, link: `${base}/runs/${encodeURIComponent(cell.runId)}` }])),
        })),
      };
    },
  );

  const action = (verb: 'pause' | 'unpause', summary: string, act: typeof pauseSchedule) =>
    api.post(
      `/schedules/:name/${verb}`,
      { schema: { summary, tags: ['schedules'], params: NameParams, response: { 200: ScheduleViewSchema, ...errors } } },
      async (request) => mapped(() => act(context.client, request.params.name)),
    );
  action('pause', 'Stop firing until unpaused (a running evaluation goes on)', pauseSchedule);
  action('unpause', 'Fire on the interval again', unpauseSchedule);

  api.post(
    '/schedules/:name/trigger',
    {
      schema: {
        summary: "Fire now: evaluate the endpoint's current checkpoint unless this schedule has already",
        tags: ['schedules'],
        params: NameParams,
        response: { 202: z.object({ name: z.string(), triggered: z.literal(true) }), ...errors },
      },
    },
    async (request, reply) => {
      await mapped(() => triggerSchedule(context.client, request.params.name));
      return reply.status(202).send({ name: request.params.name, triggered: true as const });
    },
  );

  api.delete(
    '/schedules/:name',
    {
      schema: {
        summary: 'Delete a schedule; its runs stay',
        tags: ['schedules'],
        params: NameParams,
        response: { 200: z.object({ name: z.string(), deleted: z.literal(true) }), ...errors },
      },
    },
    async (request) => {
      await mapped(() => deleteSchedule(context.client, request.params.name));
      return { name: request.params.name, deleted: true as const };
    },
  );
}

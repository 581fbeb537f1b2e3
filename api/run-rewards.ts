// `GET /runs/{id}/rewards`: Server-Sent Events, one `reward` per instance as its task writes its
// records.jsonl line, from every job of the run on whichever host it runs. The rewards are read from
// the job workflows (a query, a page at a time: workflows/job-rewards.ts), so the API needs no disk of
// the hosts'. Each event's id is the stream's cursor (rewards-cursor.ts): a client that reconnects
// with Last-Event-ID (or ?after=) gets the rest, each reward once. Ends with `end` once every job has
// its result.

import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { runSpecOf } from '../client/runs.js';
import { jobSpecsOf } from '../runs/job-specs.js';
import { REWARDS_PAGE_MAX, REWARDS_QUERY, type RewardsPage } from '../runs/rewards.js';
import type { ApiContext } from './api-context.js';
import { ApiError, ErrorBodySchema } from './api-error.js';
import { RewardsCursor } from './rewards-cursor.js';
import { existingRunOr404 } from './run-routes.js';

const POLL_MS = 250;
/** A job with nothing new is asked again after twice as long as last time, up to this: quiet jobs cost little. */
const QUIET_POLL_MS = 1000;
const KEEPALIVE_MS = 15_000;
/** How often the run's own state is read, to notice it closed with jobs that never started. */
const RUN_STATE_MS = 2000;

export function registerRunRewards(app: FastifyInstance, context: ApiContext, options: { pollMs?: number } = {}): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/runs/:id/rewards',
    {
      schema: {
        summary: 'Server-Sent Events: one `reward` per instance as its task scores it (resume with Last-Event-ID), then `end`',
        tags: ['runs'],
        params: z.object({ id: z.string().min(1).max(200) }),
        querystring: z.object({ after: z.string().max(100_000).optional().describe('a cursor (an event id), when Last-Event-ID cannot be sent') }),
        headers: z.looseObject({ 'last-event-id': z.string().max(100_000).optional() }),
        produces: ['text/event-stream'],
        response: { 400: ErrorBodySchema, 404: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const runId = request.params.id;
      const from = request.headers['last-event-id'] ?? request.query.after ?? '';
      let cursor: RewardsCursor;
      try {
        cursor = RewardsCursor.parse(from);
      } catch (error) {
        throw new ApiError(
          400,
          `not a rewards cursor: ${(error as Error).message}`,
          request.headers['last-event-id'] ? 'headers.last-event-id' : 'query.after',
        );
      }
      const { handle, description } = await existingRunOr404(context, runId);
      if (description.type !== 'runWorkflow') throw new ApiError(400, `${runId} is a ${description.type}: rewards stream from one run, not a suite`, 'path.id');
      const jobs = jobSpecsOf(await runSpecOf(handle));

      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let open = true;
      request.raw.on('close', () => (open = false));
      out.write('retry: 1000\n\n');
      const keepalive = setInterval(() => open && out.write(': keepalive\n\n'), KEEPALIVE_MS);

      const pollMs = options.pollMs ?? POLL_MS;
      // When each job is next asked, and how long it waited last time.
      const due = new Map<number, { at: number; wait: number }>();
      const later = (position: number, gotSome: boolean) => {
        const last = due.get(position)?.wait ?? 0;
        const wait = gotSome ? pollMs : Math.min(QUIET_POLL_MS, 2 * (last > 0 ? last : pollMs / 2));
        due.set(position, { at: Date.now() + wait, wait });
      };
      let runClosed = description.status.name !== 'RUNNING';
      let runCheckedAt = Date.now();
      try {
        while (open) {
          if (!runClosed && Date.now() - runCheckedAt > RUN_STATE_MS) {
            runCheckedAt = Date.now();
            runClosed = (await handle.describe()).status.name !== 'RUNNING';
          }
          // Closed before this pass: whatever a job holds now is all it will hold.
          const closedBefore = runClosed;
          let batch = '';
          for (let position = 0; position < jobs.length && open; position++) {
            if (cursor.isDone(position)) continue;
            const job = jobs[position]!;
            const next = due.get(position);
            if (next && next.at > Date.now() && !closedBefore) {
              // Asked recently: the jobs after it wait with it only if it has not started.
              if (next.wait < 0) break;
              continue;
            }
            let page: RewardsPage;
            try {
              page = await context.client.workflow.getHandle(job.jobId).query<RewardsPage, [number]>(REWARDS_QUERY, cursor.count(position));
            } catch (error) {
              if (!(error instanceof WorkflowNotFoundError)) {
                // No worker answers for now (one restarting), or a job from before rewards existed: try again next
                // pass; once the run and the job have closed, there is nothing more to wait for.
                if (closedBefore && (await jobClosed(context, job.jobId))) cursor.finish(position);
                continue;
              }
              // Not started: jobs start in order, so neither are the ones after it (or, the run closed, never will be).
              if (!closedBefore) {
                due.set(position, { at: Date.now() + pollMs, wait: -1 });
                break;
              }
              cursor.finish(position);
              continue;
            }
            for (const reward of page.rewards) {
              cursor.advance(position, cursor.count(position) + 1);
              const data = { job: job.jobId, task: page.task, repeat: page.repeat, ...reward };
              batch += `id: ${cursor.toString()}\nevent: reward\ndata: ${JSON.stringify(data)}\n\n`;
            }
            later(position, page.rewards.length > 0);
            if (page.rewards.length === REWARDS_PAGE_MAX) {
              // A full page: the rest at once.
              due.delete(position);
              position--;
            } else if (page.final || (closedBefore && (await jobClosed(context, job.jobId)))) cursor.finish(position);
            if (batch.length > 64 * 1024) {
              out.write(batch);
              batch = '';
            }
          }
          if (batch) out.write(batch);
          if (jobs.every((_, position) => cursor.isDone(position))) {
            out.write(`id: ${cursor.toString()}\nevent: end\ndata: ${JSON.stringify({ runId })}\n\n`);
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, pollMs));
        }
      } catch (error) {
        if (open) out.write(`event: error\ndata: ${JSON.stringify({ message: error instanceof Error ? error.message : String(error) })}\n\n`);
      } finally {
        clearInterval(keepalive);
        out.end();
      }
    },
  );
}

/** A job workflow that ended without its result (terminated, timed out) holds all it ever will. */
async function jobClosed(context: ApiContext, jobId: string): Promise<boolean> {
  return (await context.client.workflow.getHandle(jobId).describe()).status.name !== 'RUNNING';
}

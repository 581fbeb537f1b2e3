// `GET /runs/{id}/rewards`: Server-Sent Events, one `reward` per instance as its task writes its
// records.jsonl line, from every job of the run on whichever host it runs. The rewards are read from
// the job workflows' histories, the signals the hosts sent them (job-rewards-history.ts), with a long
// poll that answers as soon as a job's history grows and asks no worker anything; the API needs no
// disk of the hosts'. Each event's id is the stream's cursor (rewards-cursor.ts): a client that reconnects
// with Last-Event-ID (or ?after=) gets the rest, each reward once. Ends with `end` once every job has
// its result and the run has ended (its results can be read).

import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { runSpecOf } from '../client/runs.js';
import { jobSpecsOf } from '../runs/job-specs.js';
import type { ApiContext } from './api-context.js';
import { ApiError, ErrorBodySchema } from './api-error.js';
import { JobRewardsHistory, type HistoryRead } from './job-rewards-history.js';
import { RewardsCursor } from './rewards-cursor.js';
import { existingRunOr404 } from './run-routes.js';

/** How soon a job not started yet is asked again, doubling each time up to QUIET_POLL_MS. */
const POLL_MS = 250;
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
      const abort = new AbortController();
      request.raw.on('close', () => abort.abort());

      // The run's own state, read at most every RUN_STATE_MS for all the jobs: a run that closed with
      // jobs never started has nothing more for them.
      let runClosed = description.status.name !== 'RUNNING';
      let runCheck: { at: number; closed: Promise<boolean> } | undefined;
      const runClosedNow = async (): Promise<boolean> => {
        if (runClosed) return true;
        if (!runCheck || Date.now() - runCheck.at > RUN_STATE_MS)
          runCheck = { at: Date.now(), closed: handle.describe().then((d) => d.status.name !== 'RUNNING') };
        runClosed = await runCheck.closed;
        return runClosed;
      };

      let failures = 0;
      /** Follows job `position` to its end; `started` is called once it is seen started (or done). */
      const follow = async (position: number, started: () => void): Promise<void> => {
        if (cursor.isDone(position)) return started();
        const job = jobs[position]!;
        const history = new JobRewardsHistory(context.client, job.jobId);
        // Rewards before the cursor's count were delivered on an earlier connection.
        let taken = 0;
        let wait = pollMs;
        while (open) {
          let read: HistoryRead;
          try {
            read = await history.next(abort.signal);
          } catch (error) {
            if (!open) return;
            // The server unreachable for now, or restarting: ask again shortly.
            if (failures++ === 0) request.log.warn(`rewards of ${job.jobId}: ${error instanceof Error ? error.message : String(error)}; retrying`);
            await sleep(QUIET_POLL_MS);
            continue;
          }
          if (read.kind === 'not-started') {
            // Jobs start in order: the ones after it wait with it. The run closed: it never will start.
            if (await runClosedNow()) {
              cursor.finish(position);
              return started();
            }
            await sleep(wait);
            wait = Math.min(QUIET_POLL_MS, 2 * wait);
            continue;
          }
          started();
          let batch = '';
          for (const reward of read.rewards) {
            taken += 1;
            if (taken <= cursor.count(position)) continue;
            cursor.advance(position, taken);
            const data = { job: job.jobId, task: job.task.name, repeat: job.repeat.index, ...reward };
            batch += `id: ${cursor.toString()}\nevent: reward\ndata: ${JSON.stringify(data)}\n\n`;
          }
          if (read.closed) cursor.finish(position);
          if (batch && open) out.write(batch);
          if (read.closed) return;
        }
      };

      try {
        // Each job is followed from the moment the one before it is seen started: a run's jobs start in
        // order, so only the first job not started yet is asked whether it has, every pollMs to 1 s.
        const following = new Set<Promise<void>>();
        const followFrom = (position: number) => {
          if (position >= jobs.length) return;
          let next = false;
          const followed: Promise<void> = follow(position, () => {
            if (next) return;
            next = true;
            followFrom(position + 1);
          }).finally(() => following.delete(followed));
          following.add(followed);
        };
        followFrom(0);
        while (following.size > 0) await Promise.race(following);
        // Every job has ended; the run ends a moment later, and a reader that sees `end` reads its results next.
        while (open && !runClosed) {
          runCheck = undefined;
          if (!(await runClosedNow())) await sleep(pollMs);
        }
        if (open && jobs.every((_, position) => cursor.isDone(position)))
          out.write(`id: ${cursor.toString()}\nevent: end\ndata: ${JSON.stringify({ runId })}\n\n`);
      } catch (error) {
        if (open) out.write(`event: error\ndata: ${JSON.stringify({ message: error instanceof Error ? error.message : String(error) })}\n\n`);
      } finally {
        clearInterval(keepalive);
        out.end();
      }
    },
  );
}

// `GET /runs/{id}/events`: Server-Sent Events of a run as it goes. `progress` whenever the job counts
// change, `live` every few seconds (time left, calls and tokens per second: api/live-figures.ts),
// `health` for each new finding of checkRunHealth (a stalled queue, a wedged worker), and finally
// `result` (the RunResult) or `end` (closed without one, e.g. terminated); then the stream closes.

import type { FastifyInstance } from 'fastify';
import { withJobs } from '../client/run-jobs.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkRunHealth, watchHealth } from '../client/run-health.js';
import { queryProgress } from '../client/runs.js';
import type { RunProgress } from '../runs/run-spec.js';
import { ErrorBodySchema } from './api-error.js';
import type { ApiContext } from './api-context.js';
import { readLiveFigures } from './live-figures.js';
import { existingRunOr404 } from './run-routes.js';

const POLL_MS = 500;
/** Live figures read visibility and transcripts: every few seconds is enough for a person to watch. */
const LIVE_MS = 2_000;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

export function registerRunEvents(app: FastifyInstance, context: ApiContext, options: { healthIntervalMs?: number } = {}): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/runs/:id/events',
    {
      schema: {
        summary:
          'Server-Sent Events: `progress` as jobs finish, `live` figures (time left, calls and tokens per second), `health` findings, then `result` (or `end`)',
        tags: ['runs'],
        params: z.object({ id: z.string().min(1).max(200) }),
        produces: ['text/event-stream'],
        response: { 404: ErrorBodySchema },
      },
    },
    async (request, reply) => {
      const runId = request.params.id;
      const { handle } = await existingRunOr404(context, runId);
      reply.hijack();
      const out = reply.raw;
      out.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let open = true;
      const send = (event: string, data: unknown) => {
        if (open) out.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      let latest: RunProgress | undefined;
      const health = watchHealth(
        () => checkRunHealth(context.client, context.settings, runId, latest),
        (finding) => send('health', finding),
        options.healthIntervalMs,
      );
      const keepalive = setInterval(() => open && out.write(': keepalive\n\n'), KEEPALIVE_MS);
      request.raw.on('close', () => (open = false));
      const finish = () => {
        open = false;
        health.stop();
        clearInterval(keepalive);
        out.end();
      };
      let lastLine = '';
      let lastLive = 0;
      const live = async () => {
        if (!latest || Date.now() - lastLive < LIVE_MS) return;
        lastLive = Date.now();
        const pending = latest.pending;
        const figures = await context.reads.live.read(runId, () => readLiveFigures(context, runId, pending)).catch(() => undefined);
        if (figures) send('live', figures);
      };
      const poll = async () => {
        try {
          latest = await queryProgress(handle);
          const line = JSON.stringify(latest);
          if (line !== lastLine) {
            lastLine = line;
            send('progress', latest);
          }
        } catch {
          // not started yet, or just closed: the result below says which
        }
      };
      const done = handle
        .result()
        .then((result) => withJobs(context.client.workflow, result))
        .then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );
      while (open) {
        await poll();
        await live();
        const settled = await Promise.race([done, new Promise<undefined>((r) => setTimeout(() => r(undefined), POLL_MS))]);
        if (!settled) continue;
        if ('result' in settled) {
          await poll();
          send('result', settled.result);
        } else {
          const description = await handle.describe().catch(() => undefined);
          send('end', {
            runId,
            workflowStatus: description?.status.name ?? 'UNKNOWN',
            message: settled.error instanceof Error ? settled.error.message : String(settled.error),
          });
        }
        break;
      }
      finish();
    },
  );
}

// The dashboard's routes: sign-in (the token kept in an HttpOnly, SameSite=Strict cookie), the pages
// under / and /ui, and the static script and style sheet (files in api/static, no build step).

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { finishedRuns } from '../client/leaderboard.js';
import { listRuns, queryProgress } from '../client/runs.js';
import { runWebUiLink } from '../config/settings.js';
import type { RunProgress } from '../runs/run-spec.js';
// Types only: the job's `state` query is asked by name, so the API loads no workflow code.
import type { JobProgress } from '../workflows/job-workflow.js';
import { routingReportTables } from '../analysis/routing-report-tables.js';
import { buildLeaderboard, compareView } from '../runs/leaderboard.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { ApiError } from './api-error.js';
import type { ApiContext } from './api-context.js';
import type { TokenEntry } from './api-tokens.js';
import { builtInBenchmarks, routingReportOf, runIdsOf, savedAnalysisOr404 } from './board-routes.js';
import { listSavedAnalyses } from '../analysis/saved-analyses.js';
import type { RoutingReport } from '../analysis/routing-analysis.js';
import { agreementOf, callsAtHand, finishedResultsOf } from './chart-routes.js';
import { timelineSvg } from './chart-views.js';
import {
  analysisPage,
  comparePage,
  type ComparedInstances,
  JOBS_PER_PAGE,
  leaderboardPage,
  loginPage,
  runPage,
  runsPage,
  submitPage,
} from './dashboard-pages.js';
import { existingRunOr404, finishedResult, progressOfResult } from './run-routes.js';
import { describeSchedule, listSchedules, scheduleBoard, ScheduleMissingError } from '../client/schedules.js';
import { schedulePage, schedulesPage } from './schedule-pages.js';
import { filePage, filesPage, fileView, instancesPage, transcriptPage, type FileView } from './instance-pages.js';
import { InstanceQuery, instancesOf, jobOf, transcriptOf } from './instance-routes.js';
import { FileQuery, FilesQuery, jobAndPath } from './result-file-routes.js';
import { listResultFiles, readResultFile } from './result-files.js';

/** A file's page shows at most this much of it; the API serves it whole. */
export const FILE_PAGE_MAX_BYTES = 2 * 1024 * 1024;

export const SESSION_COOKIE = 'br_session';

/** Pages load only this site's script, style sheet and pictures: no inline script, nothing from elsewhere. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const isPage = (url: string) => url === '/' || url.startsWith('/?') || url.startsWith('/ui/') || url.startsWith('/login');

const STATIC: Record<string, { file: string; type: string }> = {
  'dashboard.js': { file: 'static/dashboard.js', type: 'text/javascript; charset=utf-8' },
  'dashboard.css': { file: 'static/dashboard.css', type: 'text/css; charset=utf-8' },
};

/** Only paths on this site: a `next` of `//evil.example` would leave it. */
function localPath(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export function registerDashboardRoutes(app: FastifyInstance, context: ApiContext, verifyToken: (token: string) => TokenEntry | undefined): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  const hidden = { hide: true };
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  app.addHook('onSend', async (request, reply, payload) => {
    if (isPage(request.url) && String(reply.getHeader('content-type') ?? '').startsWith('text/html')) reply.header('content-security-policy', PAGE_CSP);
    return payload;
  });

  for (const [name, asset] of Object.entries(STATIC)) {
    const text = readFileSync(fileURLToPath(new URL(asset.file, import.meta.url)), 'utf8');
    app.get(`/static/${name}`, { schema: hidden }, async (_request, reply) => reply.type(asset.type).header('cache-control', 'no-cache').send(text));
  }

  api.get('/login', { schema: { ...hidden, querystring: z.object({ next: z.string().optional(), failed: z.string().optional() }) } }, async (request, reply) =>
    reply.type('text/html; charset=utf-8').send(loginPage(localPath(request.query.next), request.query.failed !== undefined)),
  );
  api.post('/login', { schema: { ...hidden, body: z.object({ token: z.string(), next: z.string().optional() }) } }, async (request, reply) => {
    const next = localPath(request.body.next);
    if (!verifyToken(request.body.token.trim())) return reply.redirect(`/login?failed=1&next=${encodeURIComponent(next)}`, 303);
    const secure = request.protocol === 'https' ? '; Secure' : '';
    return reply
      .header('set-cookie', `${SESSION_COOKIE}=${encodeURIComponent(request.body.token.trim())}; HttpOnly; SameSite=Strict; Path=/; Max-Age=2592000${secure}`)
      .redirect(next, 303);
  });

  const htmlPage = (text: string) => text;
  api.get(
    '/',
    { schema: { ...hidden, querystring: z.object({ model: z.string().optional(), benchmark: z.string().optional(), status: z.string().optional() }) } },
    async (request, reply) => {
      const filter = { model: request.query.model || undefined, benchmark: request.query.benchmark || undefined, status: request.query.status || undefined };
      return reply.type('text/html; charset=utf-8').send(htmlPage(runsPage(await listRuns(context.client, 100, filter), filter)));
    },
  );

  const JobsWindow = z.object({
    offset: z.coerce.number().int().min(0).default(0).describe('the first job shown'),
    limit: z.coerce.number().int().min(1).max(1000).default(JOBS_PER_PAGE).describe('jobs on the page'),
  });
  api.get('/ui/runs/:id', { schema: { ...hidden, params: z.object({ id: z.string() }), querystring: JobsWindow } }, async (request, reply) => {
    // A finished run's page is read from the kept result and timeline: no Temporal call, no transcript read.
    const kept = context.reads.finished.get(request.params.id);
    const found = kept ? undefined : await existingRunOr404(context, request.params.id);
    const result = kept ?? (found?.description.status.name === 'COMPLETED' ? await finishedResult(context, request.params.id, found) : undefined);
    const progress = result ? progressOfResult(result) : await queryProgress(found!.handle).catch(() => null);
    const run = {
      runId: request.params.id,
      status: result?.status ?? found!.description.status.name,
      benchmark: result?.benchmark ?? found!.description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.benchmark) ?? '',
      model: result?.model ?? found!.description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.model) ?? '',
      progress,
      webUi: runWebUiLink(context.settings, request.params.id),
    };
    // Calls read from other hosts (a short workflow each) would hold a large run's page for minutes: the page
    // then shows the jobs' own timeline at once, and fills in calls and tokens from the timeline's route.
    const calls = result ? await callsAtHand(context, result) : undefined;
    const svg = result ? timelineSvg(result.jobs, calls ?? []) : undefined;
    const timeline = svg ? { svg, complete: calls !== undefined } : undefined;
    // A running run's jobs on their hosts: each running job says where it is (its `state` query), a few at most.
    const hosts = result || !progress ? undefined : await runningJobHosts(context, progress);
    return reply.type('text/html; charset=utf-8').send(runPage(run, result, timeline, request.query, hosts));
  });

  api.get('/ui/runs/:id/instances', { schema: { ...hidden, params: z.object({ id: z.string() }), querystring: InstanceQuery } }, async (request, reply) => {
    const result = await finishedResult(context, request.params.id);
    const query = { ...request.query, job: request.query.job || undefined };
    if (query.job) jobOf(result, query.job);
    const found = await instancesOf(context, result, { ...query, search: query.q });
    return reply
      .type('text/html; charset=utf-8')
      .send(instancesPage(result.runId, result.jobs, query, { rows: found.rows, total: found.total, nextOffset: found.nextOffset }));
  });

  api.get(
    '/ui/runs/:id/jobs/:job/transcript',
    { schema: { ...hidden, params: z.object({ id: z.string(), job: z.string() }), querystring: z.object({ instance: z.string().optional() }) } },
    async (request, reply) => {
      const result = await finishedResult(context, request.params.id);
      const job = jobOf(result, request.params.job);
      const transcript = await transcriptOf(context, result, job, request.query.instance);
      return reply
        .type('text/html; charset=utf-8')
        .send(transcriptPage(result.runId, job, request.query.instance, transcript?.lines, transcript?.unreadable ?? 0));
    },
  );

  api.get(
    '/ui/runs/:id/jobs/:job/files',
    { schema: { ...hidden, params: z.object({ id: z.string(), job: z.string() }), querystring: FilesQuery } },
    async (request, reply) => {
      const { runId, job, path: prefix } = await jobAndPath(context, request.params, request.query.prefix, 'query.prefix');
      return reply.type('text/html; charset=utf-8').send(filesPage(runId, job, prefix, await listResultFiles(context, runId, job, prefix)));
    },
  );

  api.get(
    '/ui/runs/:id/jobs/:job/file',
    { schema: { ...hidden, params: z.object({ id: z.string(), job: z.string() }), querystring: FileQuery } },
    async (request, reply) => {
      const { runId, job, path: file } = await jobAndPath(context, request.params, request.query.path, 'query.path');
      let view: FileView;
      try {
        view = fileView(file, await readResultFile(context, runId, job, file, FILE_PAGE_MAX_BYTES));
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 413) throw error;
        view = { kind: 'too large', note: `over the ${FILE_PAGE_MAX_BYTES.toLocaleString('en')} bytes a page shows` };
      }
      return reply.type('text/html; charset=utf-8').send(filePage(runId, job, file, view));
    },
  );

  api.get('/ui/leaderboard', { schema: { ...hidden, querystring: z.object({ pick: z.enum(['latest', 'best']).default('latest') }) } }, async (request, reply) =>
    reply.type('text/html; charset=utf-8').send(leaderboardPage(buildLeaderboard(await finishedRuns(context.client), request.query.pick), request.query.pick)),
  );

  api.get('/ui/compare', { schema: { ...hidden, querystring: z.object({ runs: z.string().default('') }) } }, async (request, reply) => {
    const runs = request.query.runs;
    let body: string;
    try {
      const ids = runIdsOf(runs);
      const results = await finishedResultsOf(context, ids);
      let instances: ComparedInstances | undefined;
      if (ids.length === 2) {
        try {
          const { runA, runB, agreement } = await agreementOf(context, results);
          instances = { runA, runB, agreement };
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          instances = { runA: ids[0]!, runB: ids[1]!, note: error.message };
        }
      }
      body = comparePage(runs, ids.length ? compareView(results) : undefined, undefined, instances);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      body = comparePage(runs, undefined, error.message);
    }
    return reply.type('text/html; charset=utf-8').send(body);
  });

  api.get(
    '/ui/analysis',
    { schema: { ...hidden, querystring: z.object({ runs: z.string().default(''), id: z.string().default('') }) } },
    async (request, reply) => {
      const { runs, id } = request.query;
      // Every α setting of every router is a long table: the API's /analysis has it, the plot shows it.
      const shown = (report: RoutingReport) =>
        routingReportTables(report)
          .filter((t) => t.name !== 'Alpha sweeps')
          .map((t) => ({
            name: t.name,
            columns: t.columns,
            rows: t.rows.map((row) => row.map((c) => (typeof c === 'boolean' ? (c ? 'yes' : 'no') : (c ?? null)))),
          }));
      const saved = listSavedAnalyses(context.settings.home);
      let body: string;
      try {
        if (id) {
          // A saved analysis: its router containers' rows as they ran, no job started by a page view.
          const analysis = savedAnalysisOr404(context, id);
          body = analysisPage({
            runs,
            saved,
            tables: shown(analysis.report),
            plotSrc: `/analyses/${encodeURIComponent(id)}/plot.svg`,
            selected: {
              id: analysis.id,
              createdAt: analysis.createdAt,
              inputs: analysis.inputs,
              embedder: analysis.report.embedder,
              problems: (analysis.report.routerJobs ?? []).filter((j) => j.problem).map((j) => `router ${j.router} has no row: ${j.problem}`),
            },
          });
        } else {
          const ids = runIdsOf(runs);
          body = analysisPage({
            runs,
            saved,
            ...(ids.length
              ? { tables: shown((await routingReportOf(context, ids)).report), plotSrc: `/analysis/plot.svg?runs=${encodeURIComponent(runs)}` }
              : {}),
          });
        }
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        body = analysisPage({ runs, saved, error: error.message });
      }
      return reply.type('text/html; charset=utf-8').send(body);
    },
  );

  api.get('/ui/schedules', { schema: hidden }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(schedulesPage(await listSchedules(context.client))),
  );

  api.get('/ui/schedules/:name', { schema: { ...hidden, params: z.object({ name: z.string() }) } }, async (request, reply) => {
    let view;
    try {
      view = await describeSchedule(context.client, request.params.name);
    } catch (error) {
      if (error instanceof ScheduleMissingError) throw new ApiError(404, error.problems[0]!.message, 'path.name');
      throw error;
    }
    return reply.type('text/html; charset=utf-8').send(schedulePage(view, await scheduleBoard(context.client, request.params.name)));
  });

  api.get('/ui/submit', { schema: hidden }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(submitPage(builtInBenchmarks())));
}

/** Running jobs asked at most, for a running run's page: each is a query a worker answers. */
const HOSTS_ASKED = 32;

/** The host of each running job (its JobWorkflow's `state` query); a job that cannot answer now is left out. */
async function runningJobHosts(context: ApiContext, progress: RunProgress): Promise<Map<string, string>> {
  const running = progress.jobs.filter((job) => job.state === 'running').slice(0, HOSTS_ASKED);
  const answers = await Promise.all(
    running.map(async (job) => {
      const state = await context.client.workflow
        .getHandle(job.jobId)
        .query<JobProgress>('state')
        .catch(() => undefined);
      return [job.jobId, state?.host] as const;
    }),
  );
  return new Map(answers.filter((entry): entry is readonly [string, string] => entry[1] !== undefined));
}

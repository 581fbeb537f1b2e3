// Cross-run routes: the benchmarks a run can name, the leaderboard, a comparison of chosen runs, the
// routing analysis of chosen runs (its tables as JSON and the accuracy-cost plot as SVG), and the analyses
// `br analyze` saved (with their router containers' rows, which no page view runs again).

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { renderAccuracyCostSvg } from '../analysis/accuracy-cost-plot.js';
import { hashedTfidfEmbedder } from '../analysis/hashed-tfidf-embedder.js';
import { buildQueryPool } from '../analysis/query-pool.js';
import { analyzeRouting, UnanalysableInputError, type RoutingReport } from '../analysis/routing-analysis.js';
import { finishedRuns, runResults } from '../client/leaderboard.js';
import { BUILTIN_BENCHMARKS_DIR } from '../contract/builtin-benchmarks.js';
import { recordsOfRuns } from '../client/run-records.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { buildLeaderboard, compareView } from '../runs/leaderboard.js';
import { routingReportTables } from '../analysis/routing-report-tables.js';
import { listSavedAnalyses, readSavedAnalysis, SavedAnalysisError, SavedAnalysisListingSchema, type SavedAnalysis } from '../analysis/saved-analyses.js';
import { ApiError, ErrorBodySchema } from './api-error.js';
import type { ApiContext } from './api-context.js';
import { finishedResult } from './run-routes.js';

const RunList = z.string().min(1).describe('comma-separated run ids');
const ViewSchema = z.object({
  name: z.string(),
  columns: z.array(z.string()),
  rows: z.array(z.array(z.union([z.string(), z.number(), z.boolean(), z.null()]))),
});
const errors = { 400: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 422: ErrorBodySchema, 503: ErrorBodySchema };

export function runIdsOf(list: string): string[] {
  return [
    ...new Set(
      list
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean),
    ),
  ];
}

/** The built-in benchmarks: each directory under benchmarks/ that loads. */
export function builtInBenchmarks(): Array<{ name: string; description: string; tasks: string[] }> {
  const root = BUILTIN_BENCHMARKS_DIR;
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(root, entry.name, 'benchmark.yaml')))
    .flatMap((entry) => {
      try {
        const benchmark = loadBenchmark(path.join(root, entry.name));
        return [{ name: entry.name, description: benchmark.description ?? '', tasks: benchmark.tasks.map((t) => t.name) }];
      } catch {
        return [];
      }
    });
}

/** The routing analysis of finished runs' records, with the default options and the offline embedder. */
export async function routingReportOf(context: ApiContext, runIds: string[]): Promise<{ report: RoutingReport; notes: string[] }> {
  for (const runId of runIds) await finishedResult(context, runId);
  const { records, notes } = await recordsOfRuns(context.client, context.settings.artifactsRoot, runIds);
  try {
    return { report: await analyzeRouting(buildQueryPool(records), {}, hashedTfidfEmbedder({})), notes };
  } catch (error) {
    if (error instanceof UnanalysableInputError) throw new ApiError(422, `${error.message} (${notes.join('; ')})`, 'query.runs');
    throw error;
  }
}

/** The report's tables as JSON cells (undefined is null). */
export function reportTablesJson(report: RoutingReport): Array<z.infer<typeof ViewSchema>> {
  return routingReportTables(report).map((t) => ({
    name: t.name,
    columns: t.columns,
    rows: t.rows.map((row) => row.map((cell) => (cell === undefined ? null : cell))),
  }));
}

/** An analysis `br analyze` saved under this server's BENCHROUTER_HOME, by id. */
export function savedAnalysisOr404(context: ApiContext, id: string): SavedAnalysis {
  let saved;
  try {
    saved = readSavedAnalysis(context.settings.home, id);
  } catch (error) {
    if (error instanceof SavedAnalysisError) throw new ApiError(422, error.message, 'path.id');
    throw error;
  }
  if (!saved) throw new ApiError(404, `no saved analysis ${id} (br analyze saves each under BENCHROUTER_HOME/analyses; GET /analyses lists them)`, 'path.id');
  return saved;
}

export function registerBoardRoutes(app: FastifyInstance, context: ApiContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/benchmarks',
    {
      schema: {
        summary: 'The built-in benchmarks',
        tags: ['benchmarks'],
        response: { 200: z.object({ benchmarks: z.array(z.object({ name: z.string(), description: z.string(), tasks: z.array(z.string()) })) }) },
      },
    },
    async () => ({
      benchmarks: builtInBenchmarks(),
    }),
  );

  api.get(
    '/leaderboard',
    {
      schema: {
        summary: 'The latest (or best) finished result per model and benchmark',
        tags: ['leaderboard'],
        querystring: z.object({ benchmark: z.string().optional(), model: z.string().optional(), pick: z.enum(['latest', 'best']).default('latest') }),
        response: {
          200: z.object({
            pick: z.string(),
            models: z.array(z.string()),
            benchmarks: z.array(z.string()),
            cells: z.record(z.string(), z.record(z.string(), z.object({ score: z.number(), runId: z.string(), partial: z.boolean() }))),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { benchmark, model, pick } = request.query;
      return { pick, ...buildLeaderboard(await finishedRuns(context.client, { benchmark, model }), pick) };
    },
  );

  api.get(
    '/compare',
    {
      schema: {
        summary: 'Chosen runs side by side: benchmarks and tasks as rows, one column per run',
        tags: ['leaderboard'],
        querystring: z.object({ runs: RunList }),
        response: { 200: z.object({ view: ViewSchema }), ...errors },
      },
    },
    async (request) => {
      const runIds = runIdsOf(request.query.runs);
      for (const runId of runIds) await finishedResult(context, runId);
      return { view: compareView(await runResults(context.client, runIds)) };
    },
  );

  api.get(
    '/analysis',
    {
      schema: {
        summary: "Routing analysis of chosen runs' records: methods, cost setting, Pareto frontier",
        tags: ['analysis'],
        querystring: z.object({ runs: RunList }),
        response: { 200: z.object({ tables: z.array(ViewSchema), notes: z.array(z.string()) }), ...errors },
      },
    },
    async (request) => {
      const { report, notes } = await routingReportOf(context, runIdsOf(request.query.runs));
      return { tables: reportTablesJson(report), notes };
    },
  );

  api.get(
    '/analysis/plot.svg',
    {
      schema: {
        summary: 'The accuracy-cost plot with the Pareto frontier, as SVG',
        tags: ['analysis'],
        querystring: z.object({ runs: RunList }),
        produces: ['image/svg+xml'],
      },
    },
    async (request, reply) => {
      const { report } = await routingReportOf(context, runIdsOf(request.query.runs));
      return reply.type('image/svg+xml').send(renderAccuracyCostSvg(report));
    },
  );

  api.get(
    '/analyses',
    {
      schema: {
        summary: 'The routing analyses br analyze saved on this host, newest first (at most 50)',
        tags: ['analysis'],
        response: { 200: z.object({ analyses: z.array(SavedAnalysisListingSchema) }) },
      },
    },
    async () => ({ analyses: listSavedAnalyses(context.settings.home) }),
  );

  api.get(
    '/analyses/:id',
    {
      schema: {
        summary: "A saved routing analysis: what it read and ran, and its tables (router containers' rows with their training times)",
        tags: ['analysis'],
        params: z.object({ id: z.string() }),
        response: {
          200: z.object({
            id: z.string(),
            createdAt: z.string(),
            inputs: z.array(z.string()),
            embedder: z.string(),
            tables: z.array(ViewSchema),
            routerJobs: z.array(z.object({ router: z.string(), runId: z.string(), jobId: z.string(), status: z.string(), problem: z.string().optional() })),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const saved = savedAnalysisOr404(context, request.params.id);
      return {
        id: saved.id,
        createdAt: saved.createdAt,
        inputs: saved.inputs,
        embedder: saved.report.embedder,
        tables: reportTablesJson(saved.report),
        routerJobs: (saved.report.routerJobs ?? []).map((j) => ({
          router: j.router,
          runId: j.runId,
          jobId: j.jobId,
          status: j.status,
          ...(j.problem ? { problem: j.problem } : {}),
        })),
      };
    },
  );

  api.get(
    '/analyses/:id/plot.svg',
    {
      schema: {
        summary: "A saved analysis's accuracy-cost plot with the Pareto frontier, as SVG",
        tags: ['analysis'],
        params: z.object({ id: z.string() }),
        produces: ['image/svg+xml'],
      },
    },
    async (request, reply) => reply.type('image/svg+xml').send(renderAccuracyCostSvg(savedAnalysisOr404(context, request.params.id).report)),
  );
}

// A finished job's own files, what its task wrote under results/ (an instance's folder of a record's
// `artifacts`: harbor's trial with its log and trajectory): listed under a prefix, and one served as it
// is, wherever the job ran. The dashboard's files pages read the same (instance-pages.ts).

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { RESULTS_PATH_MAX_CHARS } from '../runs/instance-list.js';
import type { JobResult } from '../runs/run-spec.js';
import { ErrorBodySchema } from './api-error.js';
import type { ApiContext } from './api-context.js';
import { jobOf, RunJobParams } from './instance-routes.js';
import { listResultFiles, readResultFile, resultFileHeaders, resultsPathOr400 } from './result-files.js';
import { finishedResult } from './run-routes.js';

export const FilesQuery = z.object({
  prefix: z.string().max(RESULTS_PATH_MAX_CHARS).default('').describe("a file or folder of the job's results, `/`-separated (a record's `artifacts`)"),
});
export const FileQuery = z.object({
  path: z.string().min(1).max(RESULTS_PATH_MAX_CHARS).describe("the file, relative to the job's results, `/`-separated"),
});
/**
 * The finished run's job a files route names, and the path it asks for inside the job's results, checked
 * first: a bad path is a 400 before anything is looked up.
 */
export async function jobAndPath(
  context: ApiContext,
  params: { id: string; job: string },
  text: string,
  field: 'query.path' | 'query.prefix',
): Promise<{ runId: string; job: JobResult; path: string }> {
  const checked = resultsPathOr400(text, field);
  const result = await finishedResult(context, params.id);
  return { runId: result.runId, job: jobOf(result, params.job), path: checked };
}

const errors = { 400: ErrorBodySchema, 401: ErrorBodySchema, 404: ErrorBodySchema, 409: ErrorBodySchema, 413: ErrorBodySchema, 503: ErrorBodySchema };

export function registerResultFileRoutes(app: FastifyInstance, context: ApiContext): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/runs/:id/jobs/:job/files',
    {
      schema: {
        summary: "A finished job's own files (what its task wrote under results/), under a prefix: path and size each",
        tags: ['runs'],
        params: RunJobParams,
        querystring: FilesQuery,
        response: {
          200: z.object({
            jobId: z.string(),
            prefix: z.string(),
            files: z.array(z.object({ file: z.string().describe("relative to the job's results"), bytes: z.number() })),
          }),
          ...errors,
        },
      },
    },
    async (request) => {
      const { runId, job, path: prefix } = await jobAndPath(context, request.params, request.query.prefix, 'query.prefix');
      return { jobId: job.jobId, prefix, files: await listResultFiles(context, runId, job, prefix) };
    },
  );

  api.get(
    '/runs/:id/jobs/:job/file',
    {
      schema: {
        summary: "One of a finished job's own files, as it is: JSON for .json, plain text for other text, bytes otherwise (never HTML)",
        tags: ['runs'],
        params: RunJobParams,
        querystring: FileQuery,
        produces: ['application/json', 'text/plain', 'application/octet-stream'],
      },
    },
    async (request, reply) => {
      const { runId, job, path: file } = await jobAndPath(context, request.params, request.query.path, 'query.path');
      const bytes = await readResultFile(context, runId, job, file);
      return reply.headers(resultFileHeaders(file, bytes)).send(bytes);
    },
  );
}

// A run definition as data: the zod schema of what `br submit` flags and `POST /evals/submit` bodies
// both become, and the one function that turns it into a RunSpec (benchmark resolved, tasks checked).

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { InputError } from '../contract/problems.js';
import { loadTokenizerFile, TokenizerFileError } from '../gateway/prompt-truncation.js';
import { mergeGeneration, type TruncationSettings } from '../runs/generation.js';
import { DEFAULT_GATEWAY, DEFAULT_RUN_OPTIONS, type RunSpec } from '../runs/run-spec.js';
import { createRunSpec } from './runs.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

const positiveInt = z.number().int().positive();

export const GenerationRequestSchema = z.strictObject({
  set: z.record(z.string(), z.unknown()).optional().describe('request fields set on every model call, e.g. {"temperature": 0}'),
  maxTokens: positiveInt.optional(),
  maxTokensAdd: z.number().int().optional(),
  maxTokensScale: z.number().positive().optional(),
  thinking: z.boolean().optional(),
});

export const RunRequestSchema = z.strictObject({
  benchmark: z.string().min(1).describe('a built-in benchmark name (see GET /benchmarks) or a benchmark directory on the server'),
  model: z.string().min(1).describe('model name sent to the endpoint'),
  endpoint: z
    .string()
    .regex(/^https?:\/\//, 'expected an http(s) URL ending in /v1')
    .describe('OpenAI-compatible base URL, ending in /v1'),
  apiKeyEnv: z.string().min(1).optional().describe('environment variable on the worker host that holds the API key'),
  tasks: z.array(z.string().min(1)).optional().describe('subset of task names (default: all)'),
  repeats: positiveInt.optional(),
  seed: z.number().int().optional(),
  limit: positiveInt.optional().describe("run only each task's first n instances"),
  instances: z
    .array(
      z
        .string()
        .min(1)
        .regex(/^[^,]*$/, 'instance ids cannot contain a comma'),
    )
    .min(1)
    .optional(),
  concurrency: positiveInt.optional(),
  hostTimeoutSeconds: positiveInt.optional(),
  heartbeatTimeoutSeconds: positiveInt.optional(),
  maxHosts: positiveInt.optional(),
  gateway: z.boolean().optional().describe('false: containers get the real endpoint instead of the metering gateway'),
  cache: z.boolean().optional(),
  modelConcurrency: positiveInt.optional(),
  modelRate: z.number().positive().optional(),
  modelRetries: z.number().int().nonnegative().optional(),
  generation: GenerationRequestSchema.optional(),
  truncation: z
    .strictObject({
      tokens: positiveInt.describe('prompts of more tokens than this keep their first and last tokens / 2'),
      tokenizer: z.string().min(1).describe("the model's Hugging Face tokenizer.json, a path every worker host has"),
    })
    .optional()
    .describe('middle truncation of over-long prompts, applied by the gateway'),
  jobConcurrency: positiveInt.optional().describe('model requests one job may have in flight (BENCHROUTER_CONCURRENCY; EvalScope: eval_batch_size)'),
  judge: z
    .strictObject({ model: z.string().min(1), endpoint: z.string().regex(/^https?:\/\//, 'expected an http(s) URL'), apiKeyEnv: z.string().min(1).optional() })
    .optional(),
  prices: z
    .record(z.string(), z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() }))
    .optional()
    .describe('$ per 1M tokens, over the built-in table'),
});

export type RunRequest = z.infer<typeof RunRequestSchema>;

/** A benchmark argument is a directory, or the name of a built-in one under benchmarks/. */
export function resolveBenchmarkDir(arg: string, field = ''): string {
  if (existsSync(arg)) return path.resolve(arg);
  const builtin = path.join(repoRoot, 'benchmarks', arg);
  if (existsSync(builtin)) return builtin;
  throw new InputError([{ file: arg, field, message: 'benchmark not found: expected a benchmark directory or the name of a built-in one (see benchmarks/)' }]);
}

/** Built-in benchmarks: the directories under benchmarks/ with a benchmark.yaml. */
export function builtInBenchmarkDir(): string {
  return path.join(repoRoot, 'benchmarks');
}

/** The RunSpec of a request; `where` names the request's source in errors (`--tasks`, `body`). */
export function runSpecFromRequest(request: RunRequest, where: { file?: string; runId?: string } = {}): RunSpec {
  const benchmark = loadBenchmark(resolveBenchmarkDir(request.benchmark, where.file ? 'benchmark' : ''));
  const unknown = (request.tasks ?? []).filter((t) => !benchmark.tasks.some((task) => task.name === t));
  if (unknown.length) {
    throw new InputError([
      {
        file: where.file ?? path.join(benchmark.dir, 'benchmark.yaml'),
        field: 'tasks',
        message: `no task named ${unknown.map((t) => `"${t}"`).join(', ')} (have ${benchmark.tasks.map((t) => t.name).join(', ')})`,
      },
    ]);
  }
  if (!/^https?:\/\//.test(request.endpoint))
    throw new InputError([
      { file: where.file ?? '--endpoint', field: where.file ? 'endpoint' : '', message: `expected an http(s) URL ending in /v1, got "${request.endpoint}"` },
    ]);
  if (request.truncation && request.gateway === false)
    throw new InputError([
      {
        file: where.file ?? '--truncation-tokens',
        field: where.file ? 'truncation' : '',
        message: 'prompt truncation is applied by the gateway: it cannot be used with --no-gateway (gateway: false)',
      },
    ]);
  const truncation = request.truncation ? truncationFrom(request.truncation, where.file) : undefined;
  const options = {
    concurrency: request.concurrency ?? DEFAULT_RUN_OPTIONS.concurrency,
    hostTimeoutSeconds: request.hostTimeoutSeconds ?? DEFAULT_RUN_OPTIONS.hostTimeoutSeconds,
    heartbeatTimeoutSeconds: request.heartbeatTimeoutSeconds ?? DEFAULT_RUN_OPTIONS.heartbeatTimeoutSeconds,
    maxHosts: request.maxHosts ?? DEFAULT_RUN_OPTIONS.maxHosts,
    repeats: request.repeats ?? DEFAULT_RUN_OPTIONS.repeats,
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(request.limit !== undefined ? { limit: request.limit } : {}),
    ...(request.instances !== undefined ? { instances: [...new Set(request.instances)] } : {}),
    ...(request.jobConcurrency !== undefined ? { jobConcurrency: request.jobConcurrency } : {}),
  };
  const spec = createRunSpec(
    benchmark,
    { name: request.model, endpoint: request.endpoint, ...(request.apiKeyEnv ? { apiKeyEnv: request.apiKeyEnv } : {}) },
    options,
    request.tasks,
    {
      gateway: {
        enabled: request.gateway ?? true,
        cache: request.cache === true,
        concurrency: request.modelConcurrency ?? DEFAULT_GATEWAY.concurrency,
        maxRetries: request.modelRetries ?? DEFAULT_GATEWAY.maxRetries,
        ...(request.modelRate !== undefined ? { ratePerSecond: request.modelRate } : {}),
      },
      generation: mergeGeneration(
        request.generation ? { ...request.generation, set: request.generation.set ?? {} } : undefined,
        truncation ? { truncation } : undefined,
      ),
      ...(request.judge
        ? { judge: { name: request.judge.model, endpoint: request.judge.endpoint, ...(request.judge.apiKeyEnv ? { apiKeyEnv: request.judge.apiKeyEnv } : {}) } }
        : {}),
      ...(request.prices ? { prices: request.prices } : {}),
    },
  );
  return where.runId ? { ...spec, runId: where.runId } : spec;
}

/**
 * The truncation the run pins: the tokenizer's absolute path and SHA-256, after checking here that the
 * file is a tokenizer (errors name the file: missing, unreadable, not a tokenizer).
 */
function truncationFrom(request: NonNullable<RunRequest['truncation']>, file: string | undefined): TruncationSettings {
  const tokenizer = path.resolve(request.tokenizer);
  try {
    return { maxTokens: request.tokens, tokenizer, sha256: loadTokenizerFile(tokenizer).sha256 };
  } catch (error) {
    if (!(error instanceof TokenizerFileError)) throw error;
    throw new InputError([{ file: error.file, field: file ? `${file} truncation.tokenizer` : '--tokenizer', message: error.problem }]);
  }
}

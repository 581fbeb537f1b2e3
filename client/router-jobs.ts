// Router containers run as jobs (docs/routing-analysis.md, "Routers"): the routers of one analysis
// become the tasks of one run of a staged benchmark, `routers`, whose environments are the router
// directories and whose read-only benchmark directory carries the exported input at /app/benchmark/input.
// So a router is built, run, logged, resource-limited, metered and durable exactly as a task is.
// Their choices.jsonl and result.json are read back from the jobs' artifacts.

import type { Client } from '@temporalio/client';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Benchmark, TaskDefinition } from '../contract/benchmark.js';
import type { RouterDefinition } from '../contract/router-schema.js';
import type { Settings } from '../config/settings.js';
import { jobResultsDir } from '../runs/job-artifacts.js';
import type { JobResult, RunResult } from '../runs/run-spec.js';
import { readJobFileBytes } from './job-file-bytes.js';
import { createRunSpec, followRun, submitRun } from './runs.js';

/** The staged benchmark's name: a fixed one, so a router's image tag depends on its directory's content alone. */
export const ROUTERS_BENCHMARK = 'routers';
/** Where the exported input is inside the router container. */
export const ROUTER_INPUT_MOUNT = '/app/benchmark/input';

export interface RouterJobsOptions {
  /** The embeddings endpoint and model routers get as BENCHROUTER_MODEL_ENDPOINT / _NAME, through the gateway. */
  endpoint: string;
  model: string;
  apiKeyEnv?: string;
  seed: number;
  concurrency?: number;
  /** Check the endpoint before the routers run (client/endpoint-preflight.ts); off for a placeholder no router calls. */
  preflight?: boolean;
}

export interface RouterJobOutcome {
  router: RouterDefinition;
  job: JobResult;
  /** Where the choices were read from, for errors. */
  choicesFile: string;
  /** choices.jsonl's text; undefined when the job wrote none. */
  choices?: string;
  trainSeconds: number | null;
}

/** Stages the benchmark under `stageDir` (the input copied in from `inputDir`): one task per router. */
export function stageRoutersBenchmark(stageDir: string, inputDir: string, routers: readonly RouterDefinition[], seed: number): Benchmark {
  rmSync(stageDir, { recursive: true, force: true });
  mkdirSync(path.join(stageDir, 'environments'), { recursive: true });
  cpSync(inputDir, path.join(stageDir, 'input'), { recursive: true });
  const tasks = routers.map((router): TaskDefinition => {
    cpSync(router.dir, path.join(stageDir, 'environments', router.name), { recursive: true });
    // A task's working directory is its tasks/<name>/ (docs/benchmark-contract.md); a router's is empty.
    mkdirSync(path.join(stageDir, 'tasks', router.name), { recursive: true });
    return {
      name: router.name,
      environment: router.name,
      command: router.command,
      timeoutSeconds: router.timeoutSeconds,
      resultMapping: { overall: 'train_seconds' },
      docker: false,
      dockerImages: [],
      extraEnv: { BENCHROUTER_ROUTER_INPUT: ROUTER_INPUT_MOUNT, BENCHROUTER_SEED: String(seed) },
      resources: router.resources,
      network: 'isolated',
    };
  });
  return { name: ROUTERS_BENCHMARK, description: 'router containers of one routing analysis', dir: stageDir, tasks };
}

export async function runRouterJobs(
  client: Client,
  settings: Settings,
  benchmark: Benchmark,
  routers: readonly RouterDefinition[],
  options: RouterJobsOptions,
  onSubmitted: (runId: string) => void = () => {},
): Promise<{ run: RunResult; outcomes: RouterJobOutcome[] }> {
  const spec = createRunSpec(benchmark, {
    model: options.model,
    endpoint: options.endpoint,
    ...(options.apiKeyEnv ? { apiKeyEnv: options.apiKeyEnv } : {}),
    concurrency: options.concurrency ?? 2,
    seed: options.seed,
    gateway: true,
    // Identical embedding requests (the same texts in the same batches) are answered from the run's cache.
    cache: true,
    // Routers that need no embeddings are given a placeholder endpoint, which nothing serves.
    preflight: options.preflight ?? true,
  });
  const handle = await submitRun(client, settings, spec);
  onSubmitted(spec.runId);
  const run = await followRun(handle);
  const outcomes: RouterJobOutcome[] = [];
  for (const router of routers) {
    const job = run.jobs.find((j) => j.task === router.name);
    if (!job) throw new Error(`run ${run.runId}: no job for router ${router.name}`);
    const ref = { runId: run.runId, jobId: job.jobId };
    const choicesFile = path.join(jobResultsDir(settings.artifactsRoot, ref), 'choices.jsonl');
    const choices = (await readJobFileBytes({ client, settings }, run.runId, job, 'results/choices.jsonl'))?.toString('utf8');
    const trainSeconds = job.result && Number.isFinite(job.result.overall) ? job.result.overall : null;
    outcomes.push({ router, job, choicesFile, ...(choices === undefined ? {} : { choices }), trainSeconds });
  }
  return { run, outcomes };
}

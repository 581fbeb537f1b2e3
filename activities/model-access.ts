// What a task container gets to reach the model: through this host's gateway, its URL and per-job
// tokens (the real keys stay with the gateway); with --no-gateway, the endpoint and the real key.

import { ApplicationFailure } from '@temporalio/common';
import path from 'node:path';
import type { ModelGateway } from '../gateway/model-gateway.js';
import { TokenizerFileError } from '../gateway/prompt-truncation.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import type { TruncationSettings } from '../runs/generation.js';
import { gatewayCacheDir, usageFileName } from '../runs/job-artifacts.js';
import type { JobSpec, JobUsage } from '../runs/run-spec.js';
import { summarizeUsage } from '../runs/usage.js';
import { endpointSeenFromBridge, type ModelAccess } from './container-spec.js';
import type { TaskFirewall } from './task-firewall.js';

export interface ModelAccessDeps {
  hostId: string;
  artifactsRoot: string;
  /** This host's model gateway, and the base URL containers reach it at (`http://127.0.0.1:PORT/v1`). */
  gateway?: { instance: ModelGateway; url: string };
  /** The host firewall of the task network, which opens a loopback model endpoint's port with --no-gateway. */
  firewall?: TaskFirewall;
}

export interface ModelRoutes {
  /** The container's BENCHROUTER_API_KEY: its gateway token, or the real key with --no-gateway. */
  apiKey: string;
  access: ModelAccess;
  /** Closes the job's routes (their tokens expire) and gives the job's usage through them; once, however often called. */
  close(): JobUsage | undefined;
}

/** Opens (or, on a later attempt, opens again with the same tokens) the job's routes through the gateway. */
export function openModelAccess(deps: ModelAccessDeps, job: JobSpec, jobDir: string): ModelRoutes {
  const { gateway } = deps;
  if (!gateway || !job.gateway.enabled) {
    const judge = job.judge ? { endpoint: job.judge.endpoint, model: job.judge.name, apiKey: resolveApiKey(job.judge.apiKeyEnv, deps.hostId) } : undefined;
    return { apiKey: resolveApiKey(job.model.apiKeyEnv, deps.hostId), access: { judge }, close: () => undefined };
  }
  const cacheDir = (runId: string) => gatewayCacheDir(deps.artifactsRoot, runId);
  // Both keys are resolved before any route opens: a judge key missing on this host (a final failure)
  // must not leave the model's route registered, with its token valid, until the worker restarts.
  const modelKey = resolveApiKey(job.model.apiKeyEnv, deps.hostId);
  const judgeKey = job.judge ? resolveApiKey(job.judge.apiKeyEnv, deps.hostId) : undefined;
  if (job.generation.truncation) checkTokenizer(gateway.instance, job.generation.truncation, deps.hostId);
  const route = (role: string, target: JobSpec['model'], apiKey: string) =>
    gateway.instance.register({
      jobId: job.jobId,
      runId: job.runId,
      role,
      upstream: { baseUrl: target.endpoint, apiKey },
      generation: role === 'model' ? job.generation : { set: {} },
      prices: job.prices,
      cache: job.gateway.cache ? { writeDir: cacheDir(job.runId), readDirs: job.gateway.cacheFrom.map(cacheDir) } : undefined,
      limits: { concurrency: job.gateway.concurrency, ratePerSecond: job.gateway.ratePerSecond, maxRetries: job.gateway.maxRetries },
      usageFile: path.join(jobDir, usageFileName(role)),
    });
  const apiKey = route('model', job.model, modelKey);
  const judge = job.judge && judgeKey !== undefined ? { endpoint: gateway.url, model: job.judge.name, apiKey: route('judge', job.judge, judgeKey) } : undefined;
  let closed: { usage: JobUsage | undefined } | undefined;
  return { apiKey, access: { endpoint: gateway.url, judge }, close: () => (closed ??= { usage: closeRoutes(gateway.instance, job) }).usage };
}

function closeRoutes(gateway: ModelGateway, job: JobSpec): JobUsage | undefined {
  const model = gateway.unregister(job.jobId, 'model');
  const judge = job.judge ? gateway.unregister(job.jobId, 'judge') : undefined;
  if (!model) return undefined;
  return { model: summarizeUsage(model), ...(judge ? { judge: summarizeUsage(judge) } : {}), counters: { model, ...(judge ? { judge } : {}) } };
}

/**
 * With --no-gateway, a model (or judge) endpoint on the worker host's loopback is rewritten to
 * host.docker.internal; the run names it as the model, so its port is let through the firewall.
 */
export async function openLoopbackEndpoints(deps: ModelAccessDeps, job: JobSpec, access: ModelAccess): Promise<void> {
  if (!deps.firewall || access.endpoint) return;
  for (const endpoint of [job.model.endpoint, access.judge?.endpoint]) {
    if (!endpoint || endpointSeenFromBridge(endpoint) === endpoint) continue;
    const url = new URL(endpoint);
    await deps.firewall.allowHostPort(Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
  }
}

/**
 * The run's tokenizer must be on this host, as the run was submitted with it: like a missing key, a
 * missing or different file is this host's problem, so the job is not retried here.
 */
function checkTokenizer(gateway: ModelGateway, truncation: TruncationSettings, hostId: string): void {
  try {
    gateway.truncatorFor(truncation);
  } catch (error) {
    if (!(error instanceof TokenizerFileError)) throw error;
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.missingOnHost,
      nonRetryable: true,
      message: `--tokenizer on worker host ${hostId}: ${error.message}`,
    });
  }
}

function resolveApiKey(source: string | undefined, hostId: string): string {
  if (!source) return 'EMPTY';
  const key = process.env[source];
  if (!key) {
    throw ApplicationFailure.create({
      type: FAILURE_TYPES.missingOnHost,
      nonRetryable: true,
      message: `the run reads its API key from $${source}, which is not set on worker host ${hostId}`,
    });
  }
  return key;
}

// What a task container gets to reach the model: through this host's gateway, its URL and per-job
// tokens (the real keys stay with the gateway); with --no-gateway, the endpoint and the real key.

import { jobBudgetOf, runBudgetOf } from '../runs/budgets.js';
import { generationOf } from '../runs/generation.js';
import { modelTargetOf, RunOptionFields, sideModelTargetOf, type ModelTarget } from '../runs/run-options.js';
import { SIDE_MODEL_ROLES, type SideModelRole } from '../runs/side-models.js';
import { ApplicationFailure } from '@temporalio/common';
import path from 'node:path';
import type { ModelGateway } from '../gateway/model-gateway.js';
import { TokenizerFileError } from '../gateway/prompt-truncation.js';
import { DEFAULT_TRANSCRIPT_MAX_BYTES } from '../gateway/transcript.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import type { TruncationSettings } from '../runs/generation.js';
import { gatewayCacheDir, JOB_FILES, usageFileName } from '../runs/job-artifacts.js';
import type { JobSpec, JobUsage } from '../runs/run-spec.js';
import { summarizeUsage } from '../runs/usage.js';
import { endpointSeenFromBridge, type ModelAccess } from './container-spec.js';
import { jobSecrets } from './redact-secrets.js';
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
  const model = modelTargetOf(job.options);
  const sides = SIDE_MODEL_ROLES.flatMap((role) => {
    const target = sideModelTargetOf(job.options, role);
    return target ? [{ role, target }] : [];
  });
  if (!gateway || !job.options.gateway) {
    const direct = (target: ModelTarget) => ({ endpoint: target.endpoint, model: target.name, apiKey: resolveApiKey(target.apiKeyEnv, deps.hostId) });
    return {
      apiKey: resolveApiKey(model.apiKeyEnv, deps.hostId),
      access: Object.fromEntries(sides.map(({ role, target }) => [role, direct(target)])),
      close: () => undefined,
    };
  }
  const cacheDir = (runId: string) => gatewayCacheDir(deps.artifactsRoot, runId);
  // Every key is resolved before any route opens: a judge's or user simulator's key missing on this host (a
  // final failure) must not leave the model's route registered, with its token valid, until the worker restarts.
  const modelKey = resolveApiKey(model.apiKeyEnv, deps.hostId);
  const sideKeys = sides.map(({ target }) => resolveApiKey(target.apiKeyEnv, deps.hostId));
  const generation = generationOf(job.options, job.resolved);
  const budget = { job: jobBudgetOf(job.options), run: runBudgetOf(job.options) };
  if (generation.truncation) checkTokenizer(gateway.instance, generation.truncation, deps.hostId);
  const route = (role: string, target: ModelTarget, apiKey: string) =>
    gateway.instance.register({
      jobId: job.jobId,
      runId: job.runId,
      role,
      upstream: { baseUrl: target.endpoint, apiKey },
      generation: role === 'model' ? generation : { set: {} },
      prices: job.resolved.prices,
      cache: job.options.cache ? { writeDir: cacheDir(job.runId), readDirs: job.cacheFrom.map(cacheDir), repeat: job.repeat.index } : undefined,
      limits: { concurrency: job.options.modelConcurrency, ratePerSecond: job.options.modelRate, maxRetries: job.options.modelRetries },
      ...(budget.job || budget.run ? { budget } : {}),
      usageFile: path.join(jobDir, usageFileName(role)),
      // The model's calls: a judge's and a user simulator's are metered on their own, not transcribed.
      ...(role === 'model' && job.options.transcripts !== false
        ? {
            transcript: {
              file: path.join(jobDir, JOB_FILES.transcript),
              // A run pinned before transcripts existed has no cap of its own: the option's default.
              maxCalls: (job.options.transcriptMaxCalls as number | undefined) ?? RunOptionFields.shape.transcriptMaxCalls.parse(undefined),
              maxBytes: DEFAULT_TRANSCRIPT_MAX_BYTES,
              redact: jobSecrets(job, gateway.instance),
            },
          }
        : {}),
    });
  const apiKey = route('model', model, modelKey);
  const access: ModelAccess = { endpoint: gateway.url };
  sides.forEach(({ role, target }, i) => (access[role] = { endpoint: gateway.url, model: target.name, apiKey: route(role, target, sideKeys[i]!) }));
  let closed: { usage: JobUsage | undefined } | undefined;
  return { apiKey, access, close: () => (closed ??= { usage: closeRoutes(gateway.instance, job) }).usage };
}

function closeRoutes(gateway: ModelGateway, job: JobSpec): JobUsage | undefined {
  const model = gateway.unregister(job.jobId, 'model');
  const sides = SIDE_MODEL_ROLES.flatMap((role) => {
    const counters = sideModelTargetOf(job.options, role) ? gateway.unregister(job.jobId, role) : undefined;
    return counters ? [[role, counters] as [SideModelRole, typeof counters]] : [];
  });
  if (!model) return undefined;
  return {
    model: summarizeUsage(model),
    ...Object.fromEntries(sides.map(([role, counters]) => [role, summarizeUsage(counters)])),
    counters: { model, ...Object.fromEntries(sides) },
  };
}

/**
 * With --no-gateway, a model (or judge, or user simulator) endpoint on the worker host's loopback is rewritten to
 * host.docker.internal; the run names it as the model, so its port is let through the firewall.
 */
export async function openLoopbackEndpoints(deps: ModelAccessDeps, job: JobSpec, access: ModelAccess): Promise<void> {
  if (!deps.firewall || access.endpoint) return;
  for (const endpoint of [job.options.endpoint, ...SIDE_MODEL_ROLES.map((role) => access[role]?.endpoint)]) {
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

// A user simulator of its own (--user-model, --user-endpoint, --user-api-key-env), modelled on the judge: the
// options' rule, the container's BENCHROUTER_USER_* variables, its key and token redacted, its usage and spend
// counted apart from the model's, and its model in the run's provenance. Without it, nothing changes.

import { describe, expect, it } from 'vitest';
import { taskContainerBody, type ContainerSpecInput } from '../../activities/engines/docker/container-body.js';
import { sampleTask } from '../support/sample-job.js';
import { jobSecrets } from '../../activities/redact-secrets.js';
import { spendOfJob, withBudgetVerdict } from '../../runs/budgets.js';
import { provenanceDifferences, provenanceEntries, provenanceHash, provenanceOf } from '../../runs/provenance.js';
import { runUsage } from '../../runs/run-outcome.js';
import { RunOptionsSchema, runOptions, sideModelTargetOf } from '../../runs/run-options.js';
import type { JobResult, JobSpec } from '../../runs/run-spec.js';
import { emptyCounters, summarizeUsage, type UsageCounters } from '../../runs/usage.js';

const withUser = { model: 'm', endpoint: 'http://x/v1', userModel: 'sim', userEndpoint: 'http://127.0.0.1:9000/v1', userApiKeyEnv: 'SIM_KEY' };

function job(options: Parameters<typeof runOptions>[0]): JobSpec {
  return {
    runId: 'br-1',
    jobId: 'br-1.000-airline',
    options: runOptions(options),
    resolved: { prices: {} },
    cacheFrom: [],
    repeat: { index: 0 },
    benchmark: { name: 'tau2', dir: '/b/tau2', digest: 'd'.repeat(64) },
    task: sampleTask({ name: 'airline', environment: 'inspect', command: 'python3 bridge.py' }),
  };
}

const envOf = (input: ContainerSpecInput, access: Parameters<typeof taskContainerBody>[2]) =>
  Object.fromEntries(taskContainerBody(input, 'token', access).Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));

function counters(promptTokens: number, completionTokens: number, fields: Partial<UsageCounters> = {}): UsageCounters {
  return { ...emptyCounters(), requests: 1, promptTokens, completionTokens, ...fields };
}

describe('user simulator options', () => {
  it('need a model and an endpoint together, as the judge does', () => {
    const result = RunOptionsSchema.safeParse({ model: 'm', endpoint: 'http://x/v1', userModel: 'sim' });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({
      path: ['userEndpoint'],
      message: 'expected together with userModel: a user simulator needs a model and an endpoint',
    });
    expect(sideModelTargetOf(runOptions(withUser), 'user')).toEqual({ name: 'sim', endpoint: 'http://127.0.0.1:9000/v1', apiKeyEnv: 'SIM_KEY' });
    expect(sideModelTargetOf(runOptions({ model: 'm', endpoint: 'http://x/v1' }), 'user')).toBeUndefined();
  });

  it('give the container BENCHROUTER_USER_ENDPOINT, _MODEL and _API_KEY, the endpoint as the task network sees it', () => {
    const input = { job: job(withUser), image: 'i', hostId: 'h', resultsDir: '/r' };
    expect(envOf(input, { user: { endpoint: 'http://127.0.0.1:9000/v1', model: 'sim', apiKey: 'user-token' } })).toMatchObject({
      BENCHROUTER_USER_ENDPOINT: 'http://host.docker.internal:9000/v1',
      BENCHROUTER_USER_MODEL: 'sim',
      BENCHROUTER_USER_API_KEY: 'user-token',
    });
    const without = envOf({ ...input, job: job({ model: 'm', endpoint: 'http://x/v1' }) }, {});
    expect(Object.keys(without).filter((name) => name.startsWith('BENCHROUTER_USER_'))).toEqual([]);
  });

  it("put the simulator's resolved key and gateway token among the job's secrets", () => {
    const gateway = { tokenFor: (jobId: string, role: string) => `brj-${jobId}-${role}` };
    expect(jobSecrets(job(withUser), gateway, { SIM_KEY: 'sim-secret' })).toEqual(['sim-secret', 'brj-br-1.000-airline-model', 'brj-br-1.000-airline-user']);
  });
});

describe("the user simulator's usage", () => {
  const usage = (model: UsageCounters, user: UsageCounters): JobResult['usage'] => ({
    model: summarizeUsage(model),
    user: summarizeUsage(user),
    counters: { model, user },
  });
  const result = (jobId: string, u: JobResult['usage']): JobResult => ({
    jobId,
    task: 'airline',
    status: 'SUCCEEDED',
    timings: { queuedAt: 'q', startedAt: 's', finishedAt: 'f', containerSeconds: 1 },
    usage: u,
  });

  it("is summed over the run apart from the model's, and counts toward the job's spend", () => {
    const jobs = [result('a', usage(counters(100, 10), counters(50, 5))), result('b', usage(counters(200, 20), counters(70, 7)))];
    const run = runUsage(jobs)!;
    expect([run.model.requests, run.model.promptTokens, run.model.completionTokens]).toEqual([2, 300, 30]);
    expect([run.user!.requests, run.user!.promptTokens, run.user!.completionTokens]).toEqual([2, 120, 12]);
    expect(spendOfJob(jobs[0]!)).toEqual({ tokens: 165, cost: 0 });
  });

  it('fails a job with BUDGET when the gateway refused only its simulated user', () => {
    const refused = usage(counters(10, 1), counters(10, 1, { budgetRefused: 2 }));
    expect(withBudgetVerdict({ status: 'SUCCEEDED' as const }, refused)).toMatchObject({ status: 'FAILED', reason: 'BUDGET' });
  });
});

describe("the user simulator's provenance", () => {
  const spec = (options: Parameters<typeof runOptions>[0]) => ({
    benchmark: { name: 'tau2', dir: '/b/tau2', digest: 'd'.repeat(64) },
    options: runOptions(options),
    resolved: { prices: {} },
  });

  it('names a separate simulator, shows it, and tells it from the model under test', () => {
    const separate = provenanceOf(spec(withUser));
    const same = provenanceOf(spec({ model: 'm', endpoint: 'http://x/v1' }));
    expect(separate.user).toEqual({ model: 'sim' });
    expect(same.user).toBeUndefined();
    expect(provenanceEntries(separate)).toContainEqual(['user simulator', 'sim']);
    expect(provenanceEntries(same).map(([label]) => label)).not.toContain('user simulator');
    expect(provenanceDifferences(separate, same)).toEqual(['user simulator differs: sim vs the model under test']);
    expect(provenanceHash(separate)).not.toBe(provenanceHash(same));
  });
});

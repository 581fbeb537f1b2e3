// The `docker run` arguments of a task container: the contract's mounts and variables, the task's
// limits, deterministic names and labels, and an API key that never appears in argv.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { containerNameFor, taskRunArgs, type ContainerSpecInput } from '../activities/container-spec.js';
import type { JobSpec } from '../contract/run-spec.js';

const SECRET = 'sk-test-4f9c2b7e1d0a-do-not-leak';

function sampleJob(extraEnv: Record<string, string> = {}): JobSpec {
  return {
    runId: 'br-20250101-120000-abc123',
    jobId: 'br-20250101-120000-abc123.001-addition',
    benchmark: { name: 'arith', dir: '/srv/benchmarks/arith', digest: 'f'.repeat(64) },
    task: {
      name: 'addition',
      environment: 'python',
      command: 'python3 /app/benchmark/eval_arith.py --problems "problems.jsonl" && echo done',
      timeoutSeconds: 300,
      resultMapping: { overall: 'accuracy' },
      docker: false,
      dockerImages: [],
      extraEnv,
      resources: { memory: '1g', cpus: 0.5, pids: 256 },
    },
    model: { name: 'reference-acc80', endpoint: 'http://127.0.0.1:18080/v1', apiKeyEnv: 'SAMPLE_PROVIDER_KEY' },
  };
}

function sampleInput(extraEnv: Record<string, string> = {}): ContainerSpecInput {
  return { job: sampleJob(extraEnv), image: 'benchrouter/arith-python:0123abcd', hostId: 'host-7', resultsDir: '/var/br/artifacts/run/001-addition' };
}

/** Values given to every occurrence of `flag`. */
function valuesOf(args: string[], flag: string): string[] {
  return args.flatMap((arg, i) => (arg === flag && i + 1 < args.length ? [args[i + 1]!] : []));
}

/** The `--env NAME=value` pairs as a map; docker keeps the last value of a repeated name. */
function envOf(args: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of valuesOf(args, '--env')) {
    const eq = pair.indexOf('=');
    if (eq >= 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

// The worker resolves the key into its own environment and docker reads it from there by name.
const savedEnv = { key: process.env.BENCHROUTER_API_KEY, provider: process.env.SAMPLE_PROVIDER_KEY };
beforeEach(() => {
  process.env.BENCHROUTER_API_KEY = SECRET;
  process.env.SAMPLE_PROVIDER_KEY = SECRET;
});
afterEach(() => {
  for (const [name, value] of [['BENCHROUTER_API_KEY', savedEnv.key], ['SAMPLE_PROVIDER_KEY', savedEnv.provider]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('task container arguments in Simple mode', () => {
  it('mounts the benchmark read-only at /app/benchmark and the job results dir at /app/results', () => {
    const mounts = valuesOf(taskRunArgs(sampleInput()), '--mount');
    expect(mounts).toContain('type=bind,source=/srv/benchmarks/arith,target=/app/benchmark,readonly');
    expect(mounts).toContain('type=bind,source=/var/br/artifacts/run/001-addition,target=/app/results');
    expect(mounts.filter((m) => m.includes('readonly'))).toEqual(['type=bind,source=/srv/benchmarks/arith,target=/app/benchmark,readonly']);
  });

  it('runs on the host network, so a model endpoint on localhost is reachable', () => {
    expect(valuesOf(taskRunArgs(sampleInput()), '--network')).toEqual(['host']);
  });

  it("applies the task's memory, cpus and pids limits", () => {
    const args = taskRunArgs(sampleInput());
    expect(valuesOf(args, '--memory')).toEqual(['1g']);
    expect(valuesOf(args, '--cpus')).toEqual(['0.5']);
    expect(valuesOf(args, '--pids-limit')).toEqual(['256']);
  });

  it('labels the container with its run, job and task', () => {
    const labels = valuesOf(taskRunArgs(sampleInput()), '--label');
    expect(labels).toContain('benchrouter.run=br-20250101-120000-abc123');
    expect(labels).toContain('benchrouter.job=br-20250101-120000-abc123.001-addition');
    expect(labels).toContain('benchrouter.task=addition');
    expect(labels).toContain('benchrouter.managed=true');
  });

  it('names the container deterministically from the job id', () => {
    const args = taskRunArgs(sampleInput());
    expect(valuesOf(args, '--name')).toEqual([containerNameFor('br-20250101-120000-abc123.001-addition')]);
    expect(taskRunArgs(sampleInput())).toEqual(args);
  });

  it('sets the contract variables: endpoint, model name and output dir', () => {
    expect(envOf(taskRunArgs(sampleInput()))).toMatchObject({
      BENCHROUTER_MODEL_ENDPOINT: 'http://127.0.0.1:18080/v1',
      BENCHROUTER_MODEL_NAME: 'reference-acc80',
      BENCHROUTER_OUTPUT_DIR: '/app/results',
    });
  });

  it('passes BENCHROUTER_API_KEY by name only, so the key never appears in argv', () => {
    const args = taskRunArgs(sampleInput());
    const envArgs = valuesOf(args, '--env');
    expect(envArgs.filter((e) => e === 'BENCHROUTER_API_KEY')).toHaveLength(1);
    expect(args.filter((arg) => arg.includes(SECRET))).toEqual([]);
    expect(args.filter((arg) => arg.includes('BENCHROUTER_API_KEY='))).toEqual([]);
    expect(args.filter((arg) => arg.includes('SAMPLE_PROVIDER_KEY'))).toEqual([]);
  });

  it("passes the task's extra_env", () => {
    expect(envOf(taskRunArgs(sampleInput({ SEED: '42', JUDGE_URL: 'http://judge:9000/v1' })))).toMatchObject({ SEED: '42', JUDGE_URL: 'http://judge:9000/v1' });
  });

  it('defaults TZ to UTC and PYTHONHASHSEED to 0 for reproducible runs', () => {
    expect(envOf(taskRunArgs(sampleInput()))).toMatchObject({ TZ: 'UTC', PYTHONHASHSEED: '0' });
  });

  it('lets extra_env override the TZ and PYTHONHASHSEED defaults, each passed once', () => {
    const args = taskRunArgs(sampleInput({ TZ: 'Europe/Paris', PYTHONHASHSEED: '123' }));
    expect(envOf(args)).toMatchObject({ TZ: 'Europe/Paris', PYTHONHASHSEED: '123' });
    expect(valuesOf(args, '--env').filter((e) => e.startsWith('TZ=') || e.startsWith('PYTHONHASHSEED='))).toEqual(['TZ=Europe/Paris', 'PYTHONHASHSEED=123']);
  });

  it('ends with the image and the command as one argument after -c, run by /bin/sh', () => {
    const args = taskRunArgs(sampleInput());
    expect(args.slice(-3)).toEqual(['benchrouter/arith-python:0123abcd', '-c', 'python3 /app/benchmark/eval_arith.py --problems "problems.jsonl" && echo done']);
    expect(valuesOf(args, '--entrypoint')).toEqual(['/bin/sh']);
    expect(args.slice(0, 2)).toEqual(['run', '--detach']);
  });

  it("works in the task's own directory under /app/benchmark/tasks", () => {
    expect(valuesOf(taskRunArgs(sampleInput()), '--workdir')).toEqual(['/app/benchmark/tasks/addition']);
  });
});

describe('task container arguments in DinD mode', () => {
  it('also passes BENCHROUTER_API_KEY by name only', () => {
    const input: ContainerSpecInput = {
      ...sampleInput(),
      dind: { runtimeArgs: ['--cap-add', 'ALL'], runtimeName: 'capabilities', storageDir: '/var/br/dind/job-1', archives: [] },
    };
    const args = taskRunArgs(input);
    expect(valuesOf(args, '--env').filter((e) => e === 'BENCHROUTER_API_KEY')).toHaveLength(1);
    expect(args.filter((arg) => arg.includes(SECRET) || arg.includes('BENCHROUTER_API_KEY='))).toEqual([]);
  });
});

describe('containerNameFor', () => {
  const dockerName = /^[A-Za-z0-9][A-Za-z0-9_.-]+$/;

  it('gives the same name for the same job id every time', () => {
    expect(containerNameFor('br-20250101-120000-abc123.001-addition')).toBe(containerNameFor('br-20250101-120000-abc123.001-addition'));
    expect(containerNameFor('br-20250101-120000-abc123.001-addition')).toBe('br-br-20250101-120000-abc123.001-addition');
  });

  it('gives different jobs of one run different names', () => {
    expect(containerNameFor('run-1.000-a')).not.toBe(containerNameFor('run-1.001-a'));
  });

  it('turns odd job ids into valid docker container names', () => {
    for (const jobId of ['run 1/002:task@x', '../../etc/passwd', 'ünïcødé', '-leading-dash', '.hidden', 'a'.repeat(500), '']) {
      const name = containerNameFor(jobId);
      expect(name, jobId).toMatch(dockerName);
      expect(name.length, jobId).toBeLessThanOrEqual(200);
      expect(containerNameFor(jobId), jobId).toBe(name);
    }
    expect(containerNameFor('run 1/002:task@x')).toBe('br-run-1-002-task-x');
  });
});

// The Engine API create body of a task container: the contract's mounts and variables, the task's
// limits, deterministic names and labels, and an API key that reaches the container only via Env.

import { runOptions } from '../../runs/run-options.js';
import { describe, expect, it } from 'vitest';
import { containerNameFor, DIND_ENTRYPOINT, endpointSeenFromBridge, memoryBytes } from '../../activities/container-spec.js';
import { taskContainerBody, type ContainerSpecInput, type DindPlacement } from '../../activities/engines/docker/container-body.js';
import type { ContainerCreateBody } from '../../activities/docker-engine.js';
import type { JobSpec } from '../../runs/run-spec.js';

const SECRET = 'sk-test-4f9c2b7e1d0a-do-not-leak';
const COMMAND = 'python3 /app/benchmark/eval_arith.py --problems "problems.jsonl" && echo done';

function sampleJob(extraEnv: Record<string, string> = {}, endpoint = 'http://127.0.0.1:18080/v1', network: 'isolated' | 'host' = 'isolated'): JobSpec {
  return {
    runId: 'br-20250101-120000-abc123',
    jobId: 'br-20250101-120000-abc123.001-addition',
    options: runOptions({ model: 'reference-acc80', endpoint, apiKeyEnv: 'SAMPLE_PROVIDER_KEY', gateway: false }),
    resolved: { prices: {} },
    cacheFrom: [],
    repeat: { index: 0 },
    benchmark: { name: 'arith', dir: '/srv/benchmarks/arith', digest: 'f'.repeat(64) },
    task: {
      name: 'addition',
      environment: 'python',
      command: COMMAND,
      timeoutSeconds: 300,
      resultMapping: { overall: 'accuracy' },
      docker: false,
      dockerImages: [],
      extraEnv,
      resources: { memory: '1g', cpus: 0.5, pids: 256 },
      network,
    },
  };
}

function sampleInput(extraEnv: Record<string, string> = {}, endpoint?: string, network?: 'isolated' | 'host'): ContainerSpecInput {
  return {
    job: sampleJob(extraEnv, endpoint, network),
    image: 'benchrouter/arith-python:0123abcd',
    hostId: 'host-7',
    resultsDir: '/var/br/artifacts/run/001-addition',
  };
}

const CAPABILITIES_HOST_CONFIG = {
  CapAdd: ['ALL'],
  CapDrop: ['SYS_RESOURCE'],
  SecurityOpt: ['seccomp=unconfined', 'apparmor=unconfined'],
  MaskedPaths: [],
  ReadonlyPaths: [],
  CgroupnsMode: 'private',
};

function dindPlacement(archives: string[] = ['/cache/a_b_1.tar']): DindPlacement {
  return { runtimeHostConfig: CAPABILITIES_HOST_CONFIG, runtimeName: 'capabilities', storageDir: '/var/br/dind/br-job-1', archives };
}

function dindInput(endpoint?: string, archives?: string[]): ContainerSpecInput {
  return { ...sampleInput({}, endpoint), dind: dindPlacement(archives) };
}

/** Env as a map; also checks that no name is set twice (the daemon would keep only one). */
function envOf(body: ContainerCreateBody): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of body.Env) {
    const eq = pair.indexOf('=');
    expect(eq, pair).toBeGreaterThan(0);
    const name = pair.slice(0, eq);
    expect(env, `${name} set twice`).not.toHaveProperty(name);
    env[name] = pair.slice(eq + 1);
  }
  return env;
}

interface Mount {
  Type: string;
  Source: string;
  Target: string;
  ReadOnly: boolean;
}

function mountsOf(body: ContainerCreateBody): Mount[] {
  return body.HostConfig.Mounts as Mount[];
}

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

describe('task container body in Simple mode', () => {
  it('binds the benchmark dir read-only at /app/benchmark and the results dir read-write at /app/results, and nothing else', () => {
    expect(mountsOf(taskContainerBody(sampleInput(), SECRET))).toEqual([
      { Type: 'bind', Source: '/srv/benchmarks/arith', Target: '/app/benchmark', ReadOnly: true },
      { Type: 'bind', Source: '/var/br/artifacts/run/001-addition', Target: '/app/results', ReadOnly: false },
    ]);
  });

  it('runs on the BenchRouter task network, reaching the host as host.docker.internal', () => {
    const { HostConfig } = taskContainerBody(sampleInput(), SECRET);
    expect(HostConfig.NetworkMode).toBe('benchrouter-tasks');
    expect(HostConfig.ExtraHosts).toEqual(['host.docker.internal:host-gateway']);
  });

  it("names the host's address on the task network as host.docker.internal when it is known", () => {
    expect(taskContainerBody({ ...sampleInput(), hostAddress: '172.18.0.1' }, SECRET).HostConfig.ExtraHosts).toEqual(['host.docker.internal:172.18.0.1']);
    expect(taskContainerBody({ ...dindInput(), hostAddress: '172.18.0.1' }, SECRET).HostConfig.ExtraHosts).toEqual(['host.docker.internal:172.18.0.1']);
  });

  it('rewrites a loopback model endpoint (the gateway on 127.0.0.1) to host.docker.internal on the task network', () => {
    expect(envOf(taskContainerBody(sampleInput({}, 'http://127.0.0.1:8390/v1'), SECRET)).BENCHROUTER_MODEL_ENDPOINT).toBe(
      'http://host.docker.internal:8390/v1',
    );
  });

  it('with network: host runs on the host network, endpoint unchanged and no host alias', () => {
    const body = taskContainerBody(sampleInput({}, 'http://127.0.0.1:18080/v1', 'host'), SECRET);
    expect(body.HostConfig.NetworkMode).toBe('host');
    expect(body.HostConfig).not.toHaveProperty('ExtraHosts');
    expect(envOf(body).BENCHROUTER_MODEL_ENDPOINT).toBe('http://127.0.0.1:18080/v1');
  });

  it("caps the daemon's own copy of the output with json-file max-size and max-file", () => {
    expect(taskContainerBody(sampleInput(), SECRET).HostConfig.LogConfig).toEqual({ Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } });
  });

  it('passes the instance selection as BENCHROUTER_LIMIT and BENCHROUTER_INSTANCES only when the run makes one', () => {
    expect(envOf(taskContainerBody(sampleInput(), SECRET))).not.toHaveProperty('BENCHROUTER_LIMIT');
    expect(envOf(taskContainerBody(sampleInput(), SECRET))).not.toHaveProperty('BENCHROUTER_INSTANCES');
    const input = sampleInput();
    const selected = { ...input, job: { ...input.job, options: { ...input.job.options, limit: 20, instances: ['q-7', 'q-11'] } } };
    expect(envOf(taskContainerBody(selected, SECRET))).toMatchObject({ BENCHROUTER_LIMIT: '20', BENCHROUTER_INSTANCES: 'q-7,q-11' });
  });

  it("converts the task's memory to bytes and cpus to NanoCpus, and applies the pids limit", () => {
    const { HostConfig } = taskContainerBody(sampleInput(), SECRET);
    expect(HostConfig.Memory).toBe(1073741824);
    expect(HostConfig.NanoCpus).toBe(500000000);
    expect(HostConfig.PidsLimit).toBe(256);
  });

  it('gives the task no swap beyond its memory limit (MemorySwap equals Memory)', () => {
    const { HostConfig } = taskContainerBody(sampleInput(), SECRET);
    expect(HostConfig.MemorySwap).toBe(HostConfig.Memory);
  });

  it('forbids gaining privileges with no-new-privileges and adds no capabilities', () => {
    const { HostConfig } = taskContainerBody(sampleInput(), SECRET);
    expect(HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(HostConfig).not.toHaveProperty('Privileged');
    expect(HostConfig).not.toHaveProperty('CapAdd');
  });

  it('runs the command as one argument after -c with /bin/sh as the entrypoint', () => {
    const body = taskContainerBody(sampleInput(), SECRET);
    expect(body.Image).toBe('benchrouter/arith-python:0123abcd');
    expect(body.Entrypoint).toEqual(['/bin/sh']);
    expect(body.Cmd).toEqual(['-c', COMMAND]);
  });

  it("works in the task's own directory under /app/benchmark/tasks", () => {
    expect(taskContainerBody(sampleInput(), SECRET).WorkingDir).toBe('/app/benchmark/tasks/addition');
  });

  it('labels the container with its run, job, task, benchmark and host, as managed and simple', () => {
    expect(taskContainerBody(sampleInput(), SECRET).Labels).toEqual({
      'benchrouter.managed': 'true',
      'benchrouter.run': 'br-20250101-120000-abc123',
      'benchrouter.job': 'br-20250101-120000-abc123.001-addition',
      'benchrouter.task': 'addition',
      'benchrouter.benchmark': 'arith',
      'benchrouter.host': 'host-7',
      'benchrouter.runtime': 'simple',
    });
  });

  it('sets the four contract variables, with the endpoint as the task network sees it and the key passed in', () => {
    expect(envOf(taskContainerBody(sampleInput(), SECRET))).toMatchObject({
      BENCHROUTER_MODEL_ENDPOINT: 'http://host.docker.internal:18080/v1',
      BENCHROUTER_MODEL_NAME: 'reference-acc80',
      BENCHROUTER_OUTPUT_DIR: '/app/results',
      BENCHROUTER_API_KEY: SECRET,
    });
  });

  it("passes the task's extra_env", () => {
    expect(envOf(taskContainerBody(sampleInput({ SEED: '42', JUDGE_URL: 'http://judge:9000/v1' }), SECRET))).toMatchObject({
      SEED: '42',
      JUDGE_URL: 'http://judge:9000/v1',
    });
  });

  it('defaults TZ to UTC and PYTHONHASHSEED to 0 for reproducible runs', () => {
    expect(envOf(taskContainerBody(sampleInput(), SECRET))).toMatchObject({ TZ: 'UTC', PYTHONHASHSEED: '0' });
  });

  it('lets extra_env override the TZ and PYTHONHASHSEED defaults, each set once', () => {
    const body = taskContainerBody(sampleInput({ TZ: 'Europe/Paris', PYTHONHASHSEED: '123' }), SECRET);
    expect(envOf(body)).toMatchObject({ TZ: 'Europe/Paris', PYTHONHASHSEED: '123' });
    expect(body.Env.filter((e) => e.startsWith('TZ=') || e.startsWith('PYTHONHASHSEED='))).toEqual(['TZ=Europe/Paris', 'PYTHONHASHSEED=123']);
  });

  it('never lets extra_env override a contract variable', () => {
    const body = taskContainerBody(
      sampleInput({
        BENCHROUTER_MODEL_ENDPOINT: 'http://evil.example/v1',
        BENCHROUTER_MODEL_NAME: 'other-model',
        BENCHROUTER_OUTPUT_DIR: '/tmp/elsewhere',
        BENCHROUTER_API_KEY: 'sk-from-benchmark-yaml',
      }),
      SECRET,
    );
    expect(envOf(body)).toMatchObject({
      BENCHROUTER_MODEL_ENDPOINT: 'http://host.docker.internal:18080/v1',
      BENCHROUTER_MODEL_NAME: 'reference-acc80',
      BENCHROUTER_OUTPUT_DIR: '/app/results',
      BENCHROUTER_API_KEY: SECRET,
    });
    const serialized = JSON.stringify(body);
    for (const overridden of ['evil.example', 'other-model', '/tmp/elsewhere', 'sk-from-benchmark-yaml']) expect(serialized).not.toContain(overridden);
  });

  it('builds the same body for the same input', () => {
    expect(taskContainerBody(sampleInput({ SEED: '1' }), SECRET)).toEqual(taskContainerBody(sampleInput({ SEED: '1' }), SECRET));
  });
});

describe("the worker's dataset directory", () => {
  it('is bound read-only at /app/datasets and named in BENCHROUTER_DATASET_DIR, in Simple and DinD mode alike', () => {
    for (const input of [sampleInput(), dindInput()]) {
      const body = taskContainerBody({ ...input, datasetDir: '/srv/modelscope-cache' }, SECRET);
      expect(mountsOf(body)).toContainEqual({ Type: 'bind', Source: '/srv/modelscope-cache', Target: '/app/datasets', ReadOnly: true });
      expect(envOf(body).BENCHROUTER_DATASET_DIR).toBe('/app/datasets');
    }
  });

  it('adds neither mount nor variable when the worker has none', () => {
    const body = taskContainerBody(sampleInput(), SECRET);
    expect(mountsOf(body).map((m) => m.Target)).not.toContain('/app/datasets');
    expect(envOf(body)).not.toHaveProperty('BENCHROUTER_DATASET_DIR');
  });
});

describe('the API key in the task container body', () => {
  for (const [mode, input] of [
    ['Simple', () => sampleInput()],
    ['DinD', () => dindInput()],
  ] as const) {
    it(`appears exactly once in the whole ${mode} body, as the Env entry BENCHROUTER_API_KEY=<key>`, () => {
      const body = taskContainerBody(input(), SECRET);
      expect(occurrences(JSON.stringify(body), SECRET)).toBe(1);
      expect(body.Env.filter((e) => e.includes(SECRET))).toEqual([`BENCHROUTER_API_KEY=${SECRET}`]);
    });

    it(`is in no label, command, entrypoint, mount or other field of the ${mode} body`, () => {
      const body = taskContainerBody(input(), SECRET);
      const { Env: _env, ...rest } = body;
      expect(JSON.stringify(rest)).not.toContain(SECRET);
      for (const field of [body.Labels, body.Cmd, body.Entrypoint, body.HostConfig.Mounts, body.HostConfig]) {
        expect(JSON.stringify(field)).not.toContain(SECRET);
      }
      expect(JSON.stringify(rest)).not.toContain('BENCHROUTER_API_KEY');
    });
  }

  it('is the key passed in, not one taken from the worker environment', () => {
    const other = 'sk-other-7e1d0a4f9c2b';
    const body = taskContainerBody(sampleInput(), other);
    expect(envOf(body).BENCHROUTER_API_KEY).toBe(other);
    expect(JSON.stringify(body)).not.toContain(SECRET);
  });
});

describe('task container body in DinD mode', () => {
  it("merges the detected runtime's HostConfig fields", () => {
    expect(taskContainerBody(dindInput(), SECRET).HostConfig).toMatchObject({
      CapAdd: ['ALL'],
      CapDrop: ['SYS_RESOURCE'],
      SecurityOpt: ['seccomp=unconfined', 'apparmor=unconfined'],
      MaskedPaths: [],
      ReadonlyPaths: [],
      CgroupnsMode: 'private',
    });
  });

  it('merges a different runtime (sysbox) just as well', () => {
    const input: ContainerSpecInput = { ...sampleInput(), dind: { ...dindPlacement(), runtimeHostConfig: { Runtime: 'sysbox-runc' }, runtimeName: 'sysbox' } };
    const body = taskContainerBody(input, SECRET);
    expect(body.HostConfig.Runtime).toBe('sysbox-runc');
    expect(body.HostConfig).not.toHaveProperty('CapAdd');
    expect(body.Labels['benchrouter.runtime']).toBe('dind:sysbox');
  });

  it('runs on the BenchRouter task network and reaches the host as host.docker.internal', () => {
    const { HostConfig } = taskContainerBody(dindInput(), SECRET);
    expect(HostConfig.NetworkMode).toBe('benchrouter-tasks');
    expect(HostConfig.ExtraHosts).toEqual(['host.docker.internal:host-gateway']);
  });

  it('binds the daemon storage at /var/lib/docker and each archive read-only under /app/preload, beside the contract mounts', () => {
    const body = taskContainerBody(dindInput(undefined, ['/cache/a_b_1.tar', '/other/cache/c_d_2.tar']), SECRET);
    expect(mountsOf(body)).toEqual([
      { Type: 'bind', Source: '/srv/benchmarks/arith', Target: '/app/benchmark', ReadOnly: true },
      { Type: 'bind', Source: '/var/br/artifacts/run/001-addition', Target: '/app/results', ReadOnly: false },
      { Type: 'bind', Source: '/var/br/dind/br-job-1', Target: '/var/lib/docker', ReadOnly: false },
      { Type: 'bind', Source: '/cache/a_b_1.tar', Target: '/app/preload/a_b_1.tar', ReadOnly: true },
      { Type: 'bind', Source: '/other/cache/c_d_2.tar', Target: '/app/preload/c_d_2.tar', ReadOnly: true },
    ]);
  });

  it('adds no preload mounts when there are no archives', () => {
    const targets = mountsOf(taskContainerBody(dindInput(undefined, []), SECRET)).map((m) => m.Target);
    expect(targets).toEqual(['/app/benchmark', '/app/results', '/var/lib/docker']);
  });

  it('starts through the DinD entrypoint, which runs the command with sh -c', () => {
    const body = taskContainerBody(dindInput(), SECRET);
    expect(DIND_ENTRYPOINT).toBe('/usr/local/bin/benchrouter-dind-entrypoint');
    expect(body.Entrypoint).toEqual([DIND_ENTRYPOINT]);
    expect(body.Cmd).toEqual(['sh', '-c', COMMAND]);
    expect(body.WorkingDir).toBe('/app/benchmark/tasks/addition');
  });

  it("labels the container's runtime as dind:<mode>", () => {
    expect(taskContainerBody(dindInput(), SECRET).Labels).toMatchObject({
      'benchrouter.runtime': 'dind:capabilities',
      'benchrouter.managed': 'true',
      'benchrouter.host': 'host-7',
    });
  });

  it('labels how its images were preloaded, for an attempt that reattaches, and nothing when none were', () => {
    const input = dindInput();
    expect(taskContainerBody({ ...input, dind: { ...input.dind!, preload: 'store' } }, SECRET).Labels['benchrouter.preload']).toBe('store');
    expect(taskContainerBody(input, SECRET).Labels).not.toHaveProperty('benchrouter.preload');
  });

  it('still applies the memory, cpus and pids limits', () => {
    expect(taskContainerBody(dindInput(), SECRET).HostConfig).toMatchObject({ Memory: 1073741824, NanoCpus: 500000000, PidsLimit: 256 });
  });

  it('rewrites a loopback model endpoint to host.docker.internal, keeping port and path', () => {
    for (const host of ['127.0.0.1', 'localhost', '0.0.0.0']) {
      const env = envOf(taskContainerBody(dindInput(`http://${host}:18080/v1`), SECRET));
      expect(env.BENCHROUTER_MODEL_ENDPOINT, host).toBe('http://host.docker.internal:18080/v1');
    }
  });

  it('leaves a non-loopback model endpoint unchanged', () => {
    for (const endpoint of ['https://api.example.com/v1', 'http://10.0.0.5:8000/v1', 'http://judge:9000/openai/v1']) {
      expect(envOf(taskContainerBody(dindInput(endpoint), SECRET)).BENCHROUTER_MODEL_ENDPOINT, endpoint).toBe(endpoint);
    }
  });

  it('keeps the contract variables and extra_env precedence of Simple mode', () => {
    const input: ContainerSpecInput = { ...sampleInput({ TZ: 'Asia/Tokyo', BENCHROUTER_OUTPUT_DIR: '/tmp/x' }), dind: dindPlacement() };
    expect(envOf(taskContainerBody(input, SECRET))).toMatchObject({
      TZ: 'Asia/Tokyo',
      PYTHONHASHSEED: '0',
      BENCHROUTER_MODEL_NAME: 'reference-acc80',
      BENCHROUTER_OUTPUT_DIR: '/app/results',
      BENCHROUTER_API_KEY: SECRET,
    });
  });
});

describe('endpointSeenFromBridge', () => {
  it('rewrites loopback hosts, including IPv6 ::1, and keeps scheme, port and path', () => {
    expect(endpointSeenFromBridge('http://127.0.0.1:18080/v1')).toBe('http://host.docker.internal:18080/v1');
    expect(endpointSeenFromBridge('http://localhost:8000/openai/v1')).toBe('http://host.docker.internal:8000/openai/v1');
    expect(endpointSeenFromBridge('https://0.0.0.0:8443/v1')).toBe('https://host.docker.internal:8443/v1');
    expect(endpointSeenFromBridge('http://[::1]:18080/v1')).toBe('http://host.docker.internal:18080/v1');
  });

  it('leaves other hosts as they are', () => {
    expect(endpointSeenFromBridge('https://api.openai.com/v1')).toBe('https://api.openai.com/v1');
    expect(endpointSeenFromBridge('http://127.0.0.2:18080/v1')).toBe('http://127.0.0.2:18080/v1');
  });
});

describe('memoryBytes', () => {
  it('reads m and g suffixes as binary megabytes and gigabytes', () => {
    expect(memoryBytes('512m')).toBe(536870912);
    expect(memoryBytes('2g')).toBe(2147483648);
  });

  it('accepts upper case and fractions', () => {
    expect(memoryBytes('1.5G')).toBe(1610612736);
  });

  it('reads a bare number as bytes and k as kibibytes', () => {
    expect(memoryBytes('1024')).toBe(1024);
    expect(memoryBytes('64k')).toBe(65536);
  });

  it('accepts a trailing b after the unit', () => {
    expect(memoryBytes('2gb')).toBe(2147483648);
  });

  it('rejects a size it cannot read', () => {
    expect(() => memoryBytes('lots')).toThrow(/memory size.*"lots"/);
    expect(() => memoryBytes('')).toThrow();
  });
});

describe('containerNameFor', () => {
  const dockerName = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

  it('gives the same name for the same job id every time', () => {
    expect(containerNameFor('br-20250101-120000-abc123.001-addition', 'host-7')).toBe('br-host-7-br-20250101-120000-abc123.001-addition');
    expect(containerNameFor('br-20250101-120000-abc123.001-addition', 'host-7')).toBe(containerNameFor('br-20250101-120000-abc123.001-addition', 'host-7'));
  });

  it('gives the same job on two hosts different names, so a moved job never attaches to the old one', () => {
    expect(containerNameFor('run-1.000-a', 'host-a')).not.toBe(containerNameFor('run-1.000-a', 'host-b'));
  });

  it('gives different jobs of one run different names', () => {
    expect(containerNameFor('run-1.000-a', 'host-7')).not.toBe(containerNameFor('run-1.001-a', 'host-7'));
  });

  it('turns odd job ids (slashes, spaces, unicode, leading punctuation) into valid Docker names of at most 200 chars', () => {
    for (const jobId of [
      'run 1/002:task@x',
      '../../etc/passwd',
      'ünïcødé',
      '任务-😀',
      '-leading-dash',
      '.hidden',
      '_under',
      'a'.repeat(500),
      '/'.repeat(400),
      '',
    ]) {
      const name = containerNameFor(jobId, 'host-7');
      expect(name, jobId).toMatch(dockerName);
      expect(name.length, jobId).toBeLessThanOrEqual(200);
      expect(containerNameFor(jobId, 'host-7'), jobId).toBe(name);
    }
    expect(containerNameFor('run 1/002:task@x', 'host-7')).toBe('br-host-7-run-1-002-task-x');
  });

  it('gives two long ids that share a 300-char prefix different names', () => {
    const prefix = 'p'.repeat(300);
    const a = containerNameFor(`${prefix}-job-a`, 'host-7');
    const b = containerNameFor(`${prefix}-job-b`, 'host-7');
    expect(a).not.toBe(b);
    for (const name of [a, b]) {
      expect(name).toMatch(dockerName);
      expect(name.length).toBeLessThanOrEqual(200);
    }
    expect(containerNameFor(`${prefix}-job-a`, 'host-7')).toBe(a);
  });
});

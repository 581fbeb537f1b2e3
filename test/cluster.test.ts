// The production path: the real Temporal cluster (built locally, on PostgreSQL, mTLS on the
// frontend) started by scripts/cluster.sh, two `br worker` hosts with their own homes and client
// certificates, a submitter on neither, and faults: the server container restarted mid-run and a
// host killed for good. The first run builds the Go binaries (minutes); later runs reuse them.

import { Connection, type Client } from '@temporalio/client';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../embedded/embedded-services.js';
import { listRemoteArtifacts, readRemoteArtifact } from '../client/remote-artifacts.js';
import { connectClient, createRunSpec, followRun, submitRun } from '../client/runs.js';
import { settingsFrom, type Settings } from '../config/settings.js';
import { temporalConnectionOptions } from '../config/temporal-connection.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { containersOfRun, fixturesDir, repoRoot } from './support/harness.js';
import { spawnWorker, waitForRunningOn, watchContainerStarts, type WorkerProcess } from './support/processes.js';

const sleepers = loadBenchmark(path.join(fixturesDir, 'benchmarks', 'sleepers'));

let scratch: string;
let tlsDir: string;
let clusterEnv: Record<string, string>;
let address: string;
let submitter: { settings: Settings; client: Client; env: Record<string, string> };
const workers: WorkerProcess[] = [];
/** The run of the two-host test, read back through the API after. */
let twoHostRun: string | undefined;

function cluster(args: string[]): string {
  return execFileSync(path.join(repoRoot, 'scripts', 'cluster.sh'), args, {
    env: { ...process.env, ...clusterEnv },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

function composeContainer(service: string): string {
  return execFileSync('docker-compose', ['--project-directory', repoRoot, '-f', path.join(repoRoot, 'docker-compose.yml'), 'ps', '-q', service], {
    env: { ...process.env, ...clusterEnv },
    encoding: 'utf8',
  }).trim();
}

function psql(query: string): string {
  return execFileSync('docker', ['exec', composeContainer('postgresql'), 'psql', '-U', 'temporal', '-d', 'temporal', '-Atc', query], {
    encoding: 'utf8',
  }).trim();
}

/** A client certificate of its own for every host and user, as a production cluster hands out. */
function clientTlsEnv(name: string): Record<string, string> {
  execFileSync(path.join(repoRoot, 'cluster', 'make-certs.sh'), [tlsDir, 'client', name]);
  return {
    TEMPORAL_TLS_CA: path.join(tlsDir, 'ca.pem'),
    TEMPORAL_TLS_CERT: path.join(tlsDir, `${name}.pem`),
    TEMPORAL_TLS_KEY: path.join(tlsDir, `${name}-key.pem`),
  };
}

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-cluster-'));
  tlsDir = path.join(scratch, 'tls');
  const port = await freePort();
  address = `127.0.0.1:${port}`;
  clusterEnv = {
    COMPOSE_PROJECT_NAME: `brcluster${randomBytes(3).toString('hex')}`,
    BENCHROUTER_CLUSTER_TLS_DIR: tlsDir,
    BENCHROUTER_CLUSTER_BIND: '127.0.0.1',
    BENCHROUTER_CLUSTER_PORT: String(port),
    BENCHROUTER_CLUSTER_UI_PORT: String(await freePort()),
    BENCHROUTER_CLUSTER_API_PORT: String(await freePort()),
  };
  const started = Date.now();
  cluster(['up']);
  console.log(`cluster up in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const env = {
    BENCHROUTER_HOME: path.join(scratch, 'submitter'),
    TEMPORAL_ADDRESS: address,
    BENCHROUTER_TASK_QUEUE: `cluster-${randomBytes(3).toString('hex')}`,
    ...clientTlsEnv('submitter'),
  };
  const settings = settingsFrom(env, os.homedir());
  submitter = { settings, env, client: await connectClient(settings) };
}, 40 * 60_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await submitter?.client.connection.close();
  if (clusterEnv) cluster(['down', '--volumes']);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}, 120_000);

describe('the cluster built and started by scripts/cluster.sh', () => {
  it('reports every service up in status, the one-shot setup exited 0', () => {
    const status = cluster(['status']);
    for (const service of ['postgresql', 'temporal', 'temporal-ui', 'api']) expect(status).toMatch(new RegExp(`_${service}_1 .*Up`));
    expect(status).toMatch(/_temporal-setup_1 .*Exit 0/);
    expect(status).toMatch(/_temporal-schema_1 .*Exit 0/);
  });

  it('has the search attributes runs carry registered with their types, from runs/search-attributes.ts', async () => {
    const { customAttributes } = await submitter.client.connection.operatorService.listSearchAttributes({ namespace: 'default' });
    // temporal.api.enums.v1.IndexedValueType: KEYWORD 2, DOUBLE 4.
    for (const key of Object.values(SEARCH_ATTRIBUTES)) expect(customAttributes?.[key.name], key.name).toBe(key.type === 'DOUBLE' ? 4 : 2);
  });

  it('keeps its namespace in PostgreSQL', () => {
    expect(psql("select count(*) from namespaces where name = 'default'")).toBe('1');
  });

  it('serves the Web UI, which reaches the frontend over mTLS', async () => {
    const response = await fetch(`http://127.0.0.1:${clusterEnv.BENCHROUTER_CLUSTER_UI_PORT}/api/v1/namespaces/default`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { namespaceInfo?: { name?: string } }).namespaceInfo?.name).toBe('default');
  });
});

// At once: each refusal waits out its connect timeout.
describe.concurrent('mTLS on the frontend', () => {
  const systemInfo = async (options: Parameters<typeof Connection.connect>[0]) => {
    const connection = await Connection.connect({ ...options, connectTimeout: '5s' });
    try {
      return await connection.workflowService.getSystemInfo({});
    } finally {
      await connection.close();
    }
  };

  it('answers a client with a certificate signed by the cluster CA', async ({ expect }) => {
    const info = await systemInfo(temporalConnectionOptions(address, submitter.settings.temporalTls));
    expect(info.serverVersion).toMatch(/^1\.32\./);
  });

  it('refuses a client that has the CA but presents no certificate', async ({ expect }) => {
    await expect(systemInfo(temporalConnectionOptions(address, { caFile: path.join(tlsDir, 'ca.pem'), enabled: true }))).rejects.toThrow();
  });

  it('refuses a client without TLS', async ({ expect }) => {
    await expect(systemInfo({ address })).rejects.toThrow();
  });

  it('refuses a certificate from another CA', async ({ expect }) => {
    const otherCa = path.join(scratch, 'other-ca');
    execFileSync(path.join(repoRoot, 'cluster', 'make-certs.sh'), [otherCa, 'client', 'intruder']);
    const options = temporalConnectionOptions(address, {
      caFile: path.join(tlsDir, 'ca.pem'),
      certFile: path.join(otherCa, 'intruder.pem'),
      keyFile: path.join(otherCa, 'intruder-key.pem'),
      enabled: true,
    });
    await expect(systemInfo(options)).rejects.toThrow();
  });
});

describe('a run on two worker hosts of the cluster', () => {
  it(
    'completes through a host killed for good and a server restart, each container starting once on the surviving host, with artifacts read from the submitter',
    async () => {
      const hostEnv = (host: string) => ({ ...submitter.env, BENCHROUTER_HOME: path.join(scratch, host), ...clientTlsEnv(host) });
      const a = await spawnWorker(hostEnv('host-a'), 'host-a');
      workers.push(a);
      const spec = createRunSpec(sleepers, { model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false, heartbeatTimeout: 5, hostTimeout: 5 });
      const handle = await submitRun(submitter.client, submitter.settings, spec);
      twoHostRun = handle.workflowId;
      const starts = watchContainerStarts(handle.workflowId);
      try {
        await waitForRunningOn(handle.workflowId, 'host-a', 4, 120_000);
        // The machine vanishes, its worker and its containers with it.
        await a.kill9();
        execFileSync('sh', [
          '-c',
          `docker ps -q --filter label=benchrouter.host=host-a --filter label=benchrouter.run=${handle.workflowId} | xargs -r docker rm -f`,
        ]);
        const b = await spawnWorker(hostEnv('host-b'), 'host-b');
        workers.push(b);

        // Each job first misses its heartbeat, then its pinned attempt waits out the host timeout on host-a's queue:
        // minutes on a loaded machine before the fourth is running (120 s was too short once in a full suite).
        await waitForRunningOn(handle.workflowId, 'host-b', 4, 300_000, b);
        // Mid-run: host-b's four containers are running while the frontend, history and matching go away.
        execFileSync('docker', ['restart', '--time', '5', composeContainer('temporal')]);

        const run = await followRun(handle);
        expect(run.status).toBe('COMPLETED');
        for (const job of run.jobs) expect(job).toMatchObject({ status: 'SUCCEEDED', host: 'host-b', hostsTried: ['host-a', 'host-b'] });
        const onB = starts.names().filter((name) => name.includes('host-b'));
        expect(onB).toHaveLength(4);
        expect(new Set(onB).size).toBe(4);
        expect(containersOfRun(handle.workflowId)).toEqual([]);
        // The run and its four jobs are executions in PostgreSQL, not in some embedded store (four small
        // task definitions travel in the run's input: no holder; four jobs' results in its result: no page).
        expect(
          psql(`select workflow_id from executions where workflow_id like '${handle.workflowId}%' order by workflow_id`)
            .split('\n')
            .map((id) => id.slice(handle.workflowId.length)),
        ).toEqual(['', '.000-s1', '.001-s2', '.002-s3', '.003-s4']);

        // The submitter shares no directory with the hosts: its artifacts come through Temporal.
        expect(existsSync(submitter.settings.artifactsRoot)).toBe(false);
        const job = run.jobs[0]!;
        const remote = { runId: handle.workflowId, jobId: job.jobId, host: job.host! };
        const files = (await listRemoteArtifacts(submitter.client, submitter.settings, remote)).map((f) => f.file);
        expect(files).toEqual(expect.arrayContaining(['normalized.json', 'results/result.json']));
        const result = JSON.parse((await readRemoteArtifact(submitter.client, submitter.settings, remote, 'results/result.json')).toString('utf8')) as {
          overall: number;
        };
        expect(result.overall).toBe(1);
        await expect(readRemoteArtifact(submitter.client, submitter.settings, remote, '../../../etc/passwd')).rejects.toThrow(/inside job/);
      } finally {
        starts.stop();
      }
    },
    10 * 60_000,
  );
});

describe('the API server of the cluster', () => {
  it('serves its OpenAPI document, and with a token made in its container reads the run from Temporal over its own mTLS certificate', async () => {
    const api = `http://127.0.0.1:${clusterEnv.BENCHROUTER_CLUSTER_API_PORT}`;
    expect((await fetch(`${api}/openapi.json`)).status).toBe(200);
    const token = execFileSync('docker', ['exec', composeContainer('api'), './br', 'tokens', 'add', 'cluster-test'], { encoding: 'utf8' }).match(/br_\S+/)![0];
    const headers = { authorization: `Bearer ${token}` };
    expect((await fetch(`${api}/runs`)).status).toBe(401);
    const run = await fetch(`${api}/runs/${twoHostRun}`, { headers });
    expect(run.status).toBe(200);
    expect(((await run.json()) as { status: string }).status).toBe('COMPLETED');
    // The frontend sees the API as the client its certificate names.
    expect(execFileSync('openssl', ['x509', '-noout', '-subject', '-in', path.join(tlsDir, 'api.pem')], { encoding: 'utf8' }).trim()).toBe('subject=CN = api');
  });
});

describe("an operator's first hour", () => {
  it('up refuses a port another process holds, naming the process and the variable that moves it, and leaves the cluster running', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const up = spawnSync(path.join(repoRoot, 'scripts', 'cluster.sh'), ['up'], {
        env: { ...process.env, ...clusterEnv, BENCHROUTER_CLUSTER_UI_PORT: String(port) },
        encoding: 'utf8',
      });
      expect(up.status).toBe(1);
      expect(up.stderr).toContain(`port ${port}, where the cluster publishes its Web UI, is in use by node (pid ${process.pid})`);
      expect(up.stderr).toContain('BENCHROUTER_CLUSTER_UI_PORT=<free port> scripts/cluster.sh up');
    } finally {
      holder.close();
    }
    // The cluster's own published ports are not a conflict: up again is a no-op that says it is ready.
    expect(cluster(['up'])).toContain('cluster ready');
  });

  it('br list without TLS settings says the frontend requires TLS and names the TEMPORAL_TLS_* variables', () => {
    const list = spawnSync(path.join(repoRoot, 'br'), ['list'], {
      env: { ...process.env, BENCHROUTER_HOME: path.join(scratch, 'no-tls'), TEMPORAL_ADDRESS: address },
      encoding: 'utf8',
    });
    expect(list.status).toBe(1);
    expect(list.stderr).toContain(`Temporal at ${address} requires TLS and this client has no TLS settings`);
    expect(list.stderr).toMatch(/TEMPORAL_TLS_CA.*TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY/);
  });
});

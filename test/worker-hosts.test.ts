// Evaluation hosts that share no Docker engine: `scripts/cluster.sh up --hosts 3` starts the cluster and
// three worker hosts (docker-compose.yml's host-1 .. host-3), each a container of the worker-host image
// with its own dockerd, home, host id and client certificate, reaching the frontend over the compose
// network with mTLS. A run spreads over the three; one host is lost for good mid-run (its container
// killed, its daemon and worker with it); its jobs move and complete on the others, each container
// starting once on the host that finishes it (counted from each host daemon's own events); the submitter,
// on none of them, reads every job's artifacts, logs, records and transcripts through Temporal.
//
// Runs with `npm run test:cluster` (BENCHROUTER_CLUSTER_TESTS=1), not in `npm test`: the first run builds the
// worker-host images (the npm dependencies layer: minutes); later runs reuse them by content hash, and
// .ci/run runs it when they are cached (docs/production-cluster.md#worker-hosts).
// A job's host timeout is 30 s, its heartbeat timeout 30 s. With 5 s, on a machine at load 40, a trial of this
// scenario against a dev server saw first attempts on live hosts time out, retries that made a results directory
// afresh under a running container (three jobs FAILED "cannot create /app/results/records.jsonl") and a job's
// container started on two hosts: fixed since (activities/job-attempts.ts, test/slow-host.test.ts); the
// generous timeouts stay, as a loaded machine wants.

import type { Client } from '@temporalio/client';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerNameFor } from '../activities/container-spec.js';
import { queueState } from '../client/run-health.js';
import { connectClient, createRunSpec, followRun, submitRun } from '../client/runs.js';
import { settingsFrom, type Settings } from '../config/settings.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { startReferenceModel, type ReferenceModelServer } from '../reference-model/reference-model-server.js';
import { hostQueueName } from '../runs/host-queues.js';
import { hostOfWorkerIdentity } from '../runs/worker-identity.js';
import type { RunResult } from '../runs/run-spec.js';
import { throwawayCluster } from './support/cluster-env.js';
import { br, fixturesDir, repoRoot } from './support/harness.js';
import { waitFor } from './support/processes.js';

const HOSTS = ['host-1', 'host-2', 'host-3'] as const;
type Host = (typeof HOSTS)[number];
const VICTIM: Host = 'host-2';
const SURVIVORS = HOSTS.filter((h) => h !== VICTIM);
const spread = loadBenchmark(path.join(fixturesDir, 'benchmarks', 'spread'));

let scratch: string;
let clusterEnv: Record<string, string>;
let queue: string;
let model: ReferenceModelServer;
let submitter: { settings: Settings; client: Client; env: Record<string, string> };
/** Seconds `scripts/cluster.sh up --hosts 3` took in this run. */
let upSeconds: number;

function cluster(args: string[]): string {
  return execFileSync(path.join(repoRoot, 'scripts', 'cluster.sh'), args, {
    env: { ...process.env, ...clusterEnv },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

function compose(args: string[]): string {
  return execFileSync('docker-compose', ['--project-directory', repoRoot, '-f', path.join(repoRoot, 'docker-compose.yml'), ...args], {
    env: { ...process.env, ...clusterEnv },
    encoding: 'utf8',
  });
}

const containerIds = new Map<Host, string>();
/** The host's container on the machine's engine (kept after it is killed). */
function containerOf(host: Host): string {
  if (!containerIds.has(host)) containerIds.set(host, compose(['ps', '-q', host]).trim());
  return containerIds.get(host)!;
}

/** `docker …` against the host's own daemon, inside its container. */
function dockerIn(host: Host, args: string[]): string {
  return execFileSync('docker', ['exec', containerOf(host), 'docker', ...args], { encoding: 'utf8' });
}

function runningOn(host: Host, runId: string): string[] {
  return dockerIn(host, ['ps', '--filter', `label=benchrouter.run=${runId}`, '--format', '{{.Names}}'])
    .split('\n')
    .filter(Boolean);
}

/** Container starts of a run as the host's own daemon reports them, from `since` (Unix seconds) on. */
function watchStarts(host: Host, runId: string, since: number): { names: string[]; stop(): void } {
  const names: string[] = [];
  const child = spawn(
    'docker',
    [
      'exec',
      containerOf(host),
      'docker',
      'events',
      '--since',
      String(since),
      '--filter',
      `label=benchrouter.run=${runId}`,
      '--filter',
      'event=start',
      '--format',
      '{{.Actor.Attributes.name}}',
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop()!;
    names.push(...lines.filter(Boolean));
  });
  return { names, stop: () => child.kill() };
}

function imagesIn(host: Host | 'machine'): string[] {
  const args = ['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}'];
  return (host === 'machine' ? execFileSync('docker', args, { encoding: 'utf8' }) : dockerIn(host, args)).split('\n').filter(Boolean);
}

/** `text` without the lines of Node's process warnings. */
function withoutNodeWarnings(text: string): string {
  return text
    .split('\n')
    .filter((line) => !/^\(node:\d+\) \[DEP\d+\]|^\(Use `node --trace-/.test(line))
    .join('\n');
}

/** Set by `npm run test:cluster`. */
const CLUSTER_TESTS = process.env.BENCHROUTER_CLUSTER_TESTS === '1';

describe.runIf(CLUSTER_TESTS)('worker hosts that share no Docker engine', () => {
  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'br-worker-hosts-'));
    const tlsDir = path.join(scratch, 'tls');
    queue = `hosts-${randomBytes(3).toString('hex')}`;
    // Two containers at once per host: six jobs take two on each.
    const throwaway = await throwawayCluster('brhosts', tlsDir, queue, 2);
    clusterEnv = throwaway.clusterEnv;
    const started = Date.now();
    cluster(['up', '--hosts', '3']);
    upSeconds = (Date.now() - started) / 1000;
    console.log(`scripts/cluster.sh up --hosts 3: ${upSeconds.toFixed(0)} s`);

    // The model answers on the compose network's gateway address, which the hosts reach as any machine would.
    const gateway = execFileSync(
      'docker',
      ['network', 'inspect', `${clusterEnv.COMPOSE_PROJECT_NAME}_default`, '--format', '{{range .IPAM.Config}}{{.Gateway}}{{end}}'],
      { encoding: 'utf8' },
    ).trim();
    model = await startReferenceModel({ host: gateway });

    execFileSync(path.join(repoRoot, 'cluster', 'make-certs.sh'), [tlsDir, 'client', 'submitter']);
    const env = throwaway.submitterEnv(path.join(scratch, 'submitter'));
    const settings = settingsFrom(env, os.homedir());
    submitter = { settings, env, client: await connectClient(settings) };
    // Each host's worker polls its own queue once it has loaded its images and connected.
    await waitFor(
      'a worker polling each host queue',
      async () => {
        const states = await Promise.all(HOSTS.map((h) => queueState(submitter.client, 'default', hostQueueName(queue, h), 'activity')));
        return states.every((s) => s.pollers.length > 0);
      },
      300_000,
    );
  }, 60 * 60_000);

  afterAll(async () => {
    await submitter?.client.connection.close();
    await model?.close();
    if (clusterEnv) cluster(['down', '--volumes']);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 300_000);

  describe('three worker hosts started by scripts/cluster.sh up --hosts 3', () => {
    it('each runs a Docker daemon of its own, with the base and DinD images loaded from the archive and no benchmark image yet', () => {
      const ids = HOSTS.map((h) => dockerIn(h, ['info', '--format', '{{.ID}}']).trim());
      const machine = execFileSync('docker', ['info', '--format', '{{.ID}}'], { encoding: 'utf8' }).trim();
      expect(new Set([...ids, machine]).size).toBe(4);
      for (const host of HOSTS) {
        const images = imagesIn(host);
        expect(images).toEqual(expect.arrayContaining(['benchrouter/base:bookworm', 'benchrouter/dind:bookworm']));
        expect(images.filter((i) => i.startsWith('benchrouter-env/'))).toEqual([]);
      }
    });

    it('each connects as the client its own certificate names, under its own host id', async () => {
      // The shared queue's pollers as the server last saw them: a host whose pollers were all busy a moment ago
      // shows up at its next poll (seen once: host-2 missing right after the three host queues had pollers).
      const pollersOfShared = async () =>
        (await queueState(submitter.client, 'default', queue, 'activity')).pollers.map((p) => hostOfWorkerIdentity(p.identity!)).sort();
      await waitFor('each host polling the shared queue', async () => (await pollersOfShared()).length === HOSTS.length, 60_000).catch(() => undefined);
      expect(await pollersOfShared()).toEqual([...HOSTS]);
      for (const host of HOSTS) {
        expect(
          execFileSync('openssl', ['x509', '-noout', '-subject', '-in', path.join(clusterEnv.BENCHROUTER_CLUSTER_TLS_DIR!, `${host}.pem`)], {
            encoding: 'utf8',
          }).trim(),
        ).toBe(`subject=CN = ${host}`);
      }
    });
  });

  describe('one task split into shards', () => {
    it(
      'spreads its shards over the three hosts and scores what it scores unsplit, each instance once',
      async () => {
        const steps = loadBenchmark(path.join(fixturesDir, 'benchmarks', 'steps'));
        // Each answer 1.5 s late: the shards overlap, and six at once need three hosts of two slots each.
        const options = { model: 'reference-acc60-delay1500', endpoint: model.url, heartbeatTimeout: 30, hostTimeout: 30 };
        const split = await followRun(
          await submitRun(submitter.client, submitter.settings, createRunSpec(steps, { ...options, shardSize: 1, concurrency: 6 })),
        );
        expect(split.status).toBe('COMPLETED');
        expect(split.jobs).toHaveLength(10);
        expect(new Set(split.jobs.map((job) => job.host))).toEqual(new Set(HOSTS));
        const whole = await followRun(await submitRun(submitter.client, submitter.settings, createRunSpec(steps, options)));
        expect(whole.jobs).toHaveLength(1);
        expect(split.overall).toBe(whole.overall);
        expect(split.tasks![0]!.results![0]).toMatchObject({ result: { overall: whole.jobs[0]!.result!.overall }, instances: { total: 10, scored: 10 } });
        // Every instance asked of the model once in each run.
        const asks = model.requests.filter((r) => r.path.endsWith('/chat/completions') && (r.body as { model?: string }).model === options.model);
        expect(asks).toHaveLength(20);
      },
      20 * 60_000,
    );
  });

  describe('a run spread over the three hosts, one lost for good mid-run', () => {
    let run: RunResult;
    const starts = new Map<Host, string[]>();

    it(
      'completes: the lost host’s jobs move to the others, each container starting once on the host that finishes it',
      async () => {
        const spec = createRunSpec(spread, { model: 'reference', endpoint: model.url, heartbeatTimeout: 30, hostTimeout: 30 });
        const since = Math.floor(Date.now() / 1000) - 1;
        const watchers = new Map(HOSTS.map((h) => [h, watchStarts(h, spec.runId, since)]));
        const handle = await submitRun(submitter.client, submitter.settings, spec);
        try {
          // The victim builds the benchmark's image in its own daemon, then runs its two jobs; both have asked
          // the model (their logs say so) and sleep when it goes.
          await waitFor(
            `two containers of the run on ${VICTIM}, both past their model call`,
            () => {
              const running = runningOn(VICTIM, spec.runId);
              return running.length === 2 && running.every((name) => dockerIn(VICTIM, ['logs', name]).includes('sleeping'));
            },
            10 * 60_000,
          );
          execFileSync('docker', ['kill', containerOf(VICTIM)]);

          run = await followRun(handle);
          await new Promise((r) => setTimeout(r, 1000)); // the last start events reach the watchers
        } finally {
          for (const [host, watcher] of watchers) {
            watcher.stop();
            starts.set(host, watcher.names);
          }
        }

        expect(run.status).toBe('COMPLETED');
        expect(run.jobs).toHaveLength(6);
        for (const job of run.jobs) {
          expect(job).toMatchObject({ status: 'SUCCEEDED', result: { overall: 1 } });
          expect(SURVIVORS).toContain(job.host);
        }
        // Each host ran two jobs at first; the victim's two moved. Which jobs ran where is read from each daemon's
        // own start events, and each job's hostsTried says the same: the victim then the host that finished it.
        const moved = run.jobs.filter((j) => starts.get(VICTIM)!.includes(containerNameFor(j.jobId, VICTIM)));
        expect(moved).toHaveLength(2);
        for (const job of run.jobs) expect(job.hostsTried).toEqual(moved.includes(job) ? [VICTIM, job.host] : [job.host]);
        expect(starts.get(VICTIM)).toHaveLength(2);
        for (const host of SURVIVORS) {
          const finished = run.jobs.filter((j) => j.host === host).map((j) => containerNameFor(j.jobId, host));
          expect(finished.length).toBeGreaterThanOrEqual(2);
          expect(starts.get(host)!.sort(), `container starts on ${host}`).toEqual(finished.sort());
        }
        // Lost for good: the host stays down (no restart policy brought it back).
        expect(execFileSync('docker', ['inspect', '-f', '{{.State.Running}} {{.RestartCount}}', containerOf(VICTIM)], { encoding: 'utf8' }).trim()).toBe(
          'false 0',
        );
        // Every attempt asked the model once: the moved jobs twice, the others once.
        const asked = (task: string) =>
          model.requests.filter((r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body).includes(`(${task})`)).length;
        for (const job of run.jobs) expect(asked(job.task), job.task).toBe(moved.includes(job) ? 2 : 1);
      },
      20 * 60_000,
    );

    it('built the benchmark’s image on demand in each host’s own daemon, never on the machine’s engine', () => {
      const image = (images: string[]) => images.filter((i) => i.startsWith('benchrouter-env/spread-shell:'));
      const [built] = image(imagesIn('host-1'));
      expect(built).toBeDefined();
      expect(image(imagesIn('host-3'))).toEqual([built]);
      expect(image(imagesIn('machine'))).toEqual([]);
    });

    it('br artifacts, logs, records and transcripts on the submitter read every job from the host that ran it', async () => {
      expect(existsSync(submitter.settings.artifactsRoot)).toBe(false);
      const artifacts = await br(['artifacts', run.runId, '--json'], submitter.env);
      expect(artifacts.code).toBe(0);
      const listing = JSON.parse(artifacts.stdout) as { jobs: Array<{ jobId: string; dir: string | null; host?: string; files: Array<{ name: string }> }> };
      expect(listing.jobs).toHaveLength(6);
      for (const job of listing.jobs) {
        expect(job).toMatchObject({ dir: null, host: run.jobs.find((j) => j.jobId === job.jobId)!.host });
        expect(job.files.map((f) => f.name)).toEqual(
          expect.arrayContaining(['container.log', 'normalized.json', 'results/records.jsonl', 'results/result.json', 'transcript.jsonl']),
        );
      }

      const logs = await br(['logs', run.runId], submitter.env);
      expect(logs.code).toBe(0);
      for (const job of run.jobs) {
        expect(logs.stdout).toContain(`task ${job.task}: the model answered HTTP 200; sleeping 25s\n`);
        expect(logs.stdout).toContain(`task ${job.task} done\n`);
      }

      const records = await br(['records', run.runId, '--json'], submitter.env);
      expect(records.code).toBe(0);
      const lines = records.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { job: string; origin_query: string; prediction: string; score: number });
      expect(
        lines.map(({ job, origin_query, prediction, score }) => ({ job, origin_query, prediction, score })).sort((a, b) => a.job.localeCompare(b.job)),
      ).toEqual(run.jobs.map((j) => ({ job: j.jobId, origin_query: j.task, prediction: '200', score: 1 })).sort((a, b) => a.job.localeCompare(b.job)));
      // Less Node's DEP0123 warning, which grpc-js's TLS connection to an IP address (127.0.0.1 here) prints.
      expect(withoutNodeWarnings(records.stderr)).toBe(`run ${run.runId}: 6 records from 6 jobs, 0 bad lines skipped\n`);

      // Each job's transcript holds the one call of the attempt that finished it, on the host that ran it.
      const transcripts = await br(['transcripts', run.runId, '--json'], submitter.env);
      expect(transcripts.code).toBe(0);
      const calls = transcripts.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { job: string; path: string; status: number; request?: unknown });
      expect(calls.map((c) => c.job).sort()).toEqual(run.jobs.map((j) => j.jobId).sort());
      for (const call of calls) {
        expect(call).toMatchObject({ path: '/v1/chat/completions', status: 200 });
        expect(JSON.stringify(call.request)).toContain(`(${run.jobs.find((j) => j.jobId === call.job)!.task})`);
      }
    });
  });
});

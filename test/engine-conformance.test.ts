// The task engine conformance suite (issue 49): one list of small cases, each about one behaviour of a task's
// life, that every task engine must pass, run with the REAL attempt runner (activities/run-task-container.ts)
// on each engine setup of test/support/engine-conformance.ts: the Docker engine in Simple mode (`docker: false`
// tasks) and in DinD mode (`docker: true`), and the policy tests' engine in memory for the cases that need no
// command run. After every case nothing labelled with its job is left on the engine. A new engine (Kubernetes)
// is one more entry in SETUPS. Real Docker, real iptables; no Temporal server (the activity context is the
// test's own, as in test/unit/attempt-runner.test.ts).

import { ApplicationFailure } from '@temporalio/common';
import { CancelledFailure } from '@temporalio/activity';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { containerNameFor } from '../activities/container-spec.js';
import type { TaskSpec } from '../activities/engines/engine.js';
import { REDACTED } from '../activities/redact-secrets.js';
import type { TaskDefinition } from '../contract/benchmark.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { JOB_FILES, jobArtifactsDir, jobResultsDir } from '../runs/job-artifacts.js';
import type { JobSpec } from '../runs/run-spec.js';
import {
  ConformanceJobs,
  dockerDind,
  dockerSimple,
  eventually,
  fakeSetup,
  hostAddress,
  KEY_VARIABLE,
  kubernetes,
  kubernetesTestsEnabled,
  listenOnAllInterfaces,
  scopeOf,
  startAttempt,
  taskRunning,
  type EngineAbility,
  type EngineSetup,
  type OpenedEngine,
} from './support/engine-conformance.js';
import type { FakeRun } from './support/fake-task-engine.js';

const SECRET = `sk-conformance-${Math.random().toString(36).slice(2)}`;
process.env[KEY_VARIABLE] = SECRET;
const EXTRA = 'two words; a $dollar and "quotes"';

/** What a case is given: its setup, the engine opened, and jobs of its own. */
interface CaseScope {
  setup: EngineSetup;
  opened: OpenedEngine;
  modelPort: number;
  hostOnly: { port: number; connections(): number };
  /** A job of this case (cleaned up and checked after it). */
  job(task?: Partial<TaskDefinition>): JobSpec;
  attempt(job: JobSpec, number?: number, heartbeatDetails?: unknown): ReturnType<typeof startAttempt>;
  name(job: JobSpec): string;
}

interface Case {
  name: string;
  /** Its task's command: one per case, so the fake engine knows which case a spec is. */
  command: string;
  /** What the command does on the engine in memory; none: the case needs the command run, and the fake skips it. */
  fake?: (spec: TaskSpec) => FakeRun;
  /** What it needs of an engine beyond running the command (EngineSetup.lacks). */
  needs?: EngineAbility;
  run(scope: CaseScope): Promise<void>;
}

const py = (code: string) => `python3 -c '${code}'`;

const CASES: Case[] = [
  {
    name: "start and exit code: the task's exit code is the outcome's",
    command: 'echo bye; exit 7',
    fake: () => ({ exitCode: 7, output: 'bye\n' }),
    async run({ setup, job, attempt }) {
      const outcome = await attempt(job()).outcome;
      expect(outcome).toMatchObject({ kind: 'exited', exitCode: 7, oomKilled: false, oomKills: 0, reattached: false, lastLogLine: 'bye' });
      expect(outcome.runtime).toMatch(setup.runtime);
      expect(Date.parse(outcome.finishedAt)).toBeGreaterThanOrEqual(Date.parse(outcome.startedAt));
    },
  },
  {
    name: 'the four variables and extra_env reach the task, exactly',
    command: py(
      'import json, os; names = ["BENCHROUTER_MODEL_ENDPOINT", "BENCHROUTER_MODEL_NAME", "BENCHROUTER_API_KEY", "BENCHROUTER_OUTPUT_DIR", "CONFORMANCE_EXTRA"]; ' +
        'json.dump({n: os.environ.get(n) for n in names}, open(os.environ["BENCHROUTER_OUTPUT_DIR"] + "/env.json", "w"))',
    ),
    async run({ opened, job, attempt, modelPort }) {
      const j = job({ extraEnv: { CONFORMANCE_EXTRA: EXTRA } });
      expect(await attempt(j).outcome).toMatchObject({ kind: 'exited', exitCode: 0 });
      const env = JSON.parse(readFileSync(path.join(jobResultsDir(opened.deps.artifactsRoot, j), 'env.json'), 'utf8'));
      expect(env).toEqual({
        // A loopback endpoint is the host's, seen from the task's network by its alias.
        BENCHROUTER_MODEL_ENDPOINT: `http://host.docker.internal:${modelPort}/v1`,
        BENCHROUTER_MODEL_NAME: 'conformance-model',
        BENCHROUTER_API_KEY: SECRET,
        BENCHROUTER_OUTPUT_DIR: '/app/results',
        CONFORMANCE_EXTRA: EXTRA,
      });
    },
  },
  {
    name: "result harvest: result.json and records.jsonl are in the job's results dir, records followed while the task runs",
    command: [
      'cd "$BENCHROUTER_OUTPUT_DIR"',
      `echo '{"index": "a", "score": 1, "prompt_tokens": 3, "completion_tokens": 1, "cost": 0}' >> records.jsonl`,
      'sleep 2',
      `echo '{"index": "b", "score": 0, "prompt_tokens": 4, "completion_tokens": 2, "cost": 0}' >> records.jsonl`,
      `echo '{"overall": 0.5}' > result.json`,
    ].join('\n'),
    needs: 'records-while-running',
    async run({ opened, job, attempt }) {
      const j = job();
      const a = attempt(j);
      const outcome = await a.outcome;
      expect(outcome).toMatchObject({ kind: 'exited', exitCode: 0 });
      const results = jobResultsDir(opened.deps.artifactsRoot, j);
      expect(JSON.parse(readFileSync(path.join(results, 'result.json'), 'utf8'))).toEqual({ overall: 0.5 });
      expect(
        readFileSync(path.join(results, 'records.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).index),
      ).toEqual(['a', 'b']);
      // The first line went out as a signal while the task still ran; the last page comes with the outcome.
      const reward = (line: number, instance: string, score: number, prompt: number, completion: number) => ({
        line,
        instance,
        score,
        prompt_tokens: prompt,
        completion_tokens: completion,
        cost: 0,
      });
      expect(a.trace.signals[0]).toMatchObject({ batch: { rewards: [reward(1, 'a', 1, 3, 1)], throughLine: 1 } });
      expect(a.trace.signals[0]!.atMs).toBeLessThan(Date.parse(outcome.finishedAt));
      // Every line once, in order: the signals' and the outcome's last page (the second line is in one or the other).
      const batches = [...a.trace.signals.map((s) => s.batch), ...(outcome.rewards ? [outcome.rewards] : [])];
      expect(batches.flatMap((batch) => batch.rewards)).toEqual([reward(1, 'a', 1, 3, 1), reward(2, 'b', 0, 4, 2)]);
      expect(batches.at(-1)!.throughLine).toBe(2);
    },
  },
  {
    name: 'log capture: what the task prints is in container.log, its key redacted there, in the tail and in the outcome',
    command: 'echo "using key $BENCHROUTER_API_KEY"',
    fake: (spec) => ({ exitCode: 0, output: `using key ${spec.env.BENCHROUTER_API_KEY}\n` }),
    async run({ opened, job, attempt }) {
      const j = job();
      const outcome = await attempt(j).outcome;
      expect(outcome.lastLogLine).toBe(`using key ${REDACTED}`);
      const dir = jobArtifactsDir(opened.deps.artifactsRoot, j);
      const log = readFileSync(path.join(dir, JOB_FILES.containerLog), 'utf8');
      expect(log).toContain(`using key ${REDACTED}\n`);
      expect(log).not.toContain(SECRET);
      const tail = readFileSync(path.join(dir, JOB_FILES.containerTail), 'utf8');
      expect(tail).toContain(`using key ${REDACTED}`);
      expect(tail + JSON.stringify(outcome)).not.toContain(SECRET);
    },
  },
  {
    name: 'timeout kill: a task that sleeps past its timeout is killed and reported timed out, within a bound',
    command: 'sleep 60',
    fake: () => ({}),
    async run({ setup, job, attempt }) {
      const started = Date.now();
      const outcome = await attempt(job({ timeoutSeconds: 2 })).outcome;
      expect(outcome).toMatchObject({ kind: 'timed_out', exitCode: 137, oomKilled: false });
      expect(Date.now() - started).toBeLessThan((2 + 8 + setup.startSeconds) * 1000);
    },
  },
  {
    name: 'memory limit: a process past it is OOM-killed and the outcome says so',
    command: `${py('b = bytearray(512 * 1024 * 1024)')}\necho "child exited $?"`,
    fake: () => ({ exitCode: 0, oomKills: 1, output: 'child exited 137\n' }),
    async run({ opened, job, attempt }) {
      const j = job({ resources: { memory: '192m', cpus: 1, pids: 256 } });
      const outcome = await attempt(j).outcome;
      // The shell goes on, as a benchmark harness would: the kill is reported all the same.
      expect(outcome).toMatchObject({ kind: 'exited', exitCode: 0, oomKilled: true });
      expect(outcome.oomKills).toBeGreaterThanOrEqual(1);
      expect(readFileSync(path.join(jobArtifactsDir(opened.deps.artifactsRoot, j), JOB_FILES.containerLog), 'utf8')).toContain('child exited 137');
    },
  },
  {
    name: 'pids limit: a task cannot run more processes than its limit',
    command: py(
      'import json, os, time\nkids, error = [], None\nfor _ in range(300):\n    try:\n        pid = os.fork()\n    except OSError as e:\n        error = e.strerror\n        break\n    if pid == 0:\n        time.sleep(60)\n        os._exit(0)\n    kids.append(pid)\nfor pid in kids:\n    os.kill(pid, 9)\njson.dump({"forked": len(kids), "error": error}, open(os.environ["BENCHROUTER_OUTPUT_DIR"] + "/pids.json", "w"))',
    ),
    needs: 'pids-limit',
    async run({ opened, job, attempt }) {
      const j = job({ resources: { memory: '512m', cpus: 1, pids: 128 } });
      expect(await attempt(j).outcome).toMatchObject({ kind: 'exited', exitCode: 0 });
      const { forked, error } = JSON.parse(readFileSync(path.join(jobResultsDir(opened.deps.artifactsRoot, j), 'pids.json'), 'utf8'));
      expect(error).toBe('Resource temporarily unavailable');
      expect(forked).toBeLessThan(128);
    },
  },
  {
    name: "network isolation: the task reaches the host's model endpoint and none of its other ports",
    command: py(
      'import json, os, socket, urllib.parse\ndef reaches(host, port):\n    try:\n        socket.create_connection((host, int(port)), timeout=1.5).close()\n        return True\n    except OSError:\n        return False\nmodel = urllib.parse.urlsplit(os.environ["BENCHROUTER_MODEL_ENDPOINT"])\n' +
        'json.dump({"model_endpoint": reaches(model.hostname, model.port), "host_only_port": reaches("host.docker.internal", os.environ["HOST_ONLY_PORT"]), "host_only_port_via_host_ip": reaches(os.environ["HOST_IP"], os.environ["HOST_ONLY_PORT"])}, open(os.environ["BENCHROUTER_OUTPUT_DIR"] + "/reached.json", "w"))',
    ),
    needs: 'network-isolation',
    async run({ opened, job, attempt, hostOnly }) {
      expect(opened.deps.firewall?.active, opened.deps.firewall?.problem).not.toBe(false);
      const before = hostOnly.connections();
      const j = job({ extraEnv: { HOST_ONLY_PORT: String(hostOnly.port), HOST_IP: hostAddress() } });
      expect(await attempt(j).outcome).toMatchObject({ kind: 'exited', exitCode: 0 });
      const reached = JSON.parse(readFileSync(path.join(jobResultsDir(opened.deps.artifactsRoot, j), 'reached.json'), 'utf8'));
      expect(reached).toEqual({ model_endpoint: true, host_only_port: false, host_only_port_via_host_ip: false });
      expect(hostOnly.connections()).toBe(before);
    },
  },
  {
    name: "cancel: the activity's cancellation kills and removes the task",
    command: 'sleep 61',
    fake: () => ({}),
    async run({ setup, opened, job, attempt }) {
      const j = job();
      const a = attempt(j);
      await eventually(() => taskRunning(opened.deps.engine, scopeOf(j, setup.image, opened.deps.hostId)), 30_000, 'the task runs');
      const cancelledAt = Date.now();
      a.cancel();
      await expect(a.outcome).rejects.toBeInstanceOf(CancelledFailure);
      expect(Date.now() - cancelledAt).toBeLessThan(15_000);
      expect(await opened.leftovers(j.jobId)).toEqual([]);
    },
  },
  {
    name: 'reattach: an attempt abandoned mid-task leaves it running, and the next attempt follows it to its end',
    command: 'sleep 3; echo finished; exit 4',
    fake: () => ({ exitCode: 4, exitAfterMs: 3000, output: 'finished\n' }),
    async run({ setup, opened, job, attempt }) {
      const j = job();
      const scope = scopeOf(j, setup.image, opened.deps.hostId);
      const first = attempt(j);
      await eventually(() => taskRunning(opened.deps.engine, scope), 30_000, 'the task runs');
      // The server gives up on the first attempt (its worker killed -9 stops heartbeating): it steps aside.
      first.abandon();
      await expect(first.outcome).rejects.toMatchObject({ type: FAILURE_TYPES.attemptAborted });
      expect(await taskRunning(opened.deps.engine, scope)).toBe(true);
      const outcome = await attempt(j, 2, first.trace.heartbeats.at(-1)).outcome;
      expect(outcome).toMatchObject({ kind: 'exited', exitCode: 4, reattached: true, lastLogLine: 'finished' });
    },
  },
  {
    name: 'a task lost with its node: killed from outside, the next attempt starts it again, once',
    command: 'sleep 3; echo finished',
    fake: () => ({ exitCode: 0, exitAfterMs: 3000, output: 'finished\n' }),
    async run({ setup, opened, job, attempt, name }) {
      const j = job();
      const first = attempt(j);
      await eventually(() => taskRunning(opened.deps.engine, scopeOf(j, setup.image, opened.deps.hostId)), 30_000, 'the task runs');
      await opened.killFromOutside(name(j));
      const failure = await first.outcome.catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: FAILURE_TYPES.containerKilled, nonRetryable: false });
      // Kept, stopped, for the next attempt to judge.
      expect(await opened.leftovers(j.jobId)).toHaveLength(1);
      const outcome = await attempt(j, 2).outcome;
      expect(outcome).toMatchObject({ kind: 'exited', exitCode: 0, reattached: false, lastLogLine: 'finished' });
      expect(existsSync(path.join(jobArtifactsDir(opened.deps.artifactsRoot, j), 'container-killed-by-outage.log'))).toBe(true);
    },
  },
  {
    name: 'a task lost twice: its restart, killed from outside too, ends with the kill (exit 137), not a third start',
    command: 'sleep 60; echo finished',
    fake: () => ({ exitCode: 0, exitAfterMs: 60_000, output: 'finished\n' }),
    async run({ setup, opened, job, attempt, name }) {
      const j = job();
      const scope = scopeOf(j, setup.image, opened.deps.hostId);
      const first = attempt(j);
      await eventually(() => taskRunning(opened.deps.engine, scope), 30_000, 'the task runs');
      await opened.killFromOutside(name(j));
      expect(await first.outcome.catch((error: unknown) => error)).toMatchObject({ type: FAILURE_TYPES.containerKilled });
      const second = attempt(j, 2);
      // Killed once the second attempt follows the restart (its heartbeat names the task), not while it starts it.
      await eventually(async () => second.trace.heartbeats.some((beat) => beat.containerId !== undefined), 30_000, 'the second attempt follows the restart');
      await eventually(() => taskRunning(opened.deps.engine, scope), 30_000, 'the restart runs');
      await opened.killFromOutside(name(j));
      expect(await second.outcome).toMatchObject({ kind: 'exited', exitCode: 137, reattached: false });
      expect(await opened.leftovers(j.jobId)).toEqual([]);
    },
  },
];

/** What a case's command does on the engine in memory. */
const fakeRuns = (spec: TaskSpec): FakeRun => {
  const known = CASES.find((c) => c.command === spec.command)?.fake;
  if (!known) throw new Error(`no case runs ${spec.command} on the fake engine`);
  return known(spec);
};

// The Kubernetes engine runs on the local cluster of scripts/k8s.sh, with BENCHROUTER_K8S_TESTS=1 (npm run test:k8s).
const SETUPS: EngineSetup[] = [dockerSimple, dockerDind, fakeSetup(fakeRuns), ...(kubernetesTestsEnabled() ? [kubernetes] : [])];

/** Why a case does not apply to a setup; undefined when it does. */
function skipReason(setup: EngineSetup, c: Case): string | undefined {
  if (!setup.runsCommands && !c.fake) return 'it runs no command';
  if (c.needs && setup.lacks?.[c.needs]) return setup.lacks[c.needs];
  return undefined;
}

let hostOnly: Awaited<ReturnType<typeof listenOnAllInterfaces>>;
let jobs: ConformanceJobs;
beforeAll(async () => {
  // A port of the host that tasks must not reach.
  hostOnly = await listenOnAllInterfaces();
  jobs = new ConformanceJobs(mkdtempSync(path.join(os.tmpdir(), 'br-conformance-jobs-')));
});
afterAll(async () => {
  await hostOnly?.close();
  jobs?.close();
});

// The setups run side by side, each one's cases one after another: a DinD case waits mostly for its daemon.
describe.each(SETUPS)('the task engine $name', { concurrent: true }, (setup) => {
  let opened: OpenedEngine;
  // The task's model endpoint, on the host (a loopback endpoint, --no-gateway): one per setup, as each is a host of
  // its own whose firewall opens its port and closes it again when the setup closes.
  let model: Awaited<ReturnType<typeof listenOnAllInterfaces>>;
  const used: JobSpec[] = [];
  beforeAll(async () => {
    model = await listenOnAllInterfaces();
    opened = await setup.open(model.port);
  });
  afterAll(async () => {
    await opened?.close();
    await model?.close();
  });
  // Cleanup on every path: nothing labelled with a case's job remains on the engine after it.
  afterEach(async () => {
    const left = await Promise.all(used.map(async (job) => ({ job: job.jobId, left: await opened.leftovers(job.jobId) })));
    used.length = 0;
    expect(left.filter((l) => l.left.length > 0)).toEqual([]);
  });

  for (const c of CASES) {
    const reason = skipReason(setup, c);
    const scope = (): CaseScope => ({
      setup,
      opened,
      modelPort: model.port,
      hostOnly,
      job: (task = {}) => {
        const job = jobs.job(setup, String(CASES.indexOf(c) + 1), { ...task, command: c.command }, `http://127.0.0.1:${model.port}/v1`);
        used.push(job);
        return job;
      },
      attempt: (job, number = 1, heartbeatDetails) => startAttempt(opened, job, setup.image, number, heartbeatDetails),
      name: (job) => containerNameFor(job.jobId, opened.deps.hostId),
    });
    if (reason) it.skip(`${c.name} (skipped here: ${reason})`, () => undefined);
    else it.sequential(c.name, () => c.run(scope()));
  }
});

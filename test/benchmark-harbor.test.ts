// Fidelity of the harbor benchmark: Harbor's own `harbor run` on the shipped terminal-basics dataset (10 tasks),
// run directly on this host's Docker engine (its local environment) and through `br run harbor` (in each shard's
// own daemon), with Harbor's oracle agent (every reward 1), its nop agent (every reward 0) and terminus-2 driving
// the task's terminal for a scripted model (right on 7 tasks, wrong on 3): the same reward per task, and the same
// task digest. Each shard keeps Harbor's trial folders in the job's artifacts. A task whose agent
// writes its own reward file and whose verifier then writes none scores 0: the forged file does not count.

import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { benchmarkImage, builtinDir, dockerRun, replayAnswers } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';
import type { RunResult } from '../runs/run-spec.js';

const DATASET = path.join(builtinDir('harbor'), 'datasets', 'terminal-basics');
const TASKS = readdirSync(DATASET).sort();
// On a new machine the first run builds the harbor image (about 40 s on an idle 2-core machine: harbor's 92
// pinned packages from PyPI) and each shard's daemon builds the tasks' environments.
const COLD_BUILD_MS = 30 * 60_000;

let h: Harness;
let scratch: string;
/**
 * terminus-2's model: for each task, by its instruction, the commands (its solution's, or a plausible wrong one for
 * csv-total, log-errors and rename-logs) and task_complete, then the confirmation terminus-2 asks for. Its prompts
 * carry the terminal's screen, whose shell prompt names the container, so the answers are scripted by task and
 * turn, not keyed by the whole request.
 */
let scripted: ReplayModelServer;
const TERMINUS_WRONG = ['csv-total', 'log-errors', 'rename-logs'];
const expectedReward = (agent: string, task: string) => (agent === 'nop' ? 0 : agent === 'terminus-2' && TERMINUS_WRONG.includes(task) ? 0 : 1);

interface HarborRecord {
  job: string;
  index: string;
  score: number;
  agent: string;
  task_digest: string;
  exception: { exception_type: string } | null;
  trial: string;
  artifacts: string;
  raw_output: string | null;
}

async function recordsOf(runId: string): Promise<HarborRecord[]> {
  const lines = (await br(['records', runId, '--json'], h.env)).stdout.trim().split('\n');
  return lines.map((line) => JSON.parse(line) as HarborRecord);
}

/** `harbor run` of the whole dataset in the harbor image on this host's engine, as Harbor's README runs it: reward and digest per task. */
async function harborDirect(agent: string): Promise<Record<string, { reward: number | null; digest: string }>> {
  const jobs = mkdtempSync(path.join(scratch, `direct-${agent}-`));
  const model = agent === 'terminus-2' ? '-m openai/scripted' : '';
  const script = `harbor run -p /data -a ${agent} ${model} -o /jobs --job-name direct -n 4 -y -q >&2 && python3 -c '
import json, pathlib
out = {}
for f in sorted(pathlib.Path("/jobs/direct").glob("*/result.json")):
    r = json.loads(f.read_text()); lock = json.loads((f.parent / "lock.json").read_text())
    out[lock["task"]["name"]] = {"reward": ((r.get("verifier_result") or {}).get("rewards") or {}).get("reward"), "digest": lock["task"]["digest"]}
print(json.dumps(out))'`;
  // The image's own entrypoint starts a Docker daemon (for a job); directly, Harbor uses this host's.
  const stdout = await dockerRun(benchmarkImage('harbor', 'harbor'), ['-c', script], {
    volumes: ['/var/run/docker.sock:/var/run/docker.sock', `${DATASET}:/data:ro`, `${jobs}:/jobs`],
    env: { OPENAI_BASE_URL: scripted.url, OPENAI_API_KEY: 'scripted' },
    entrypoint: 'sh',
  }).catch((error: unknown) => {
    throw new Error(`harbor run -a ${agent} directly: ${(error as Error).message}`);
  });
  return JSON.parse(stdout) as Record<string, { reward: number | null; digest: string }>;
}

describe('harbor', () => {
  beforeAll(async () => {
    h = await startHarness('harbor');
    scratch = mkdtempSync(path.join(os.tmpdir(), 'br-harbor-'));
    scripted = await startReplayModel({ answersFile: replayAnswers('harbor-terminus-2.jsonl') });
  });
  afterAll(async () => {
    await scripted?.close();
    await h?.close();
  });

  it.each([
    ['oracle', 1],
    ['nop', 0],
    ['terminus-2', 0.7],
  ] as const)(
    'with the %s agent, scores every task as harbor run directly does: mean reward %s, the same per task and digest',
    { timeout: COLD_BUILD_MS },
    async (agent, mean) => {
      const answeredBefore = scripted.counts.answered;
      const run: RunResult = await h.run(builtinDir('harbor'), { tasks: ['terminal-basics'], taskArgs: { agent }, endpoint: scripted.url });
      expect(run.jobs.map((j) => [j.status, j.message])).toEqual(run.jobs.map(() => ['SUCCEEDED', undefined]));
      // Ten tasks in shards of five: two jobs, each a `harbor run` in its own daemon.
      expect(run.jobs).toHaveLength(2);
      expect(run.overall).toBe(mean);
      const records = await recordsOf(run.runId);
      expect(records.map((r) => r.index).sort()).toEqual(TASKS);
      expect(records.every((r) => r.agent === agent && r.exception === null)).toBe(true);
      expect(Object.fromEntries(records.map((r) => [r.index, r.score]))).toEqual(Object.fromEntries(TASKS.map((t) => [t, expectedReward(agent, t)])));
      // terminus-2 asked the model twice per task (its commands, then the confirmation), through the gateway.
      expect(scripted.counts).toEqual({ answered: answeredBefore + (agent === 'terminus-2' ? 2 * TASKS.length : 0), unknown: 0 });

      const direct = await harborDirect(agent);
      expect(Object.keys(direct).sort()).toEqual(TASKS);
      for (const record of records) {
        expect(record.score, record.index).toBe(direct[record.index]!.reward);
        expect(record.task_digest, record.index).toBe(direct[record.index]!.digest);
        // Harbor's trial folder is kept with the job's artifacts: its result, the agent's and the verifier's output.
        const trial = path.join(h.settings.artifactsRoot, run.runId, record.job, 'results', record.trial);
        // The instance's files, as the dashboard's instance page links them.
        expect(record.artifacts).toBe(record.trial);
        expect(JSON.parse(readFileSync(path.join(trial, 'result.json'), 'utf8'))).toMatchObject({ verifier_result: { rewards: { reward: record.score } } });
        expect(existsSync(path.join(trial, 'verifier', 'reward.txt')), trial).toBe(true);
        if (agent === 'terminus-2') expect(existsSync(path.join(trial, 'agent', 'trajectory.json')), trial).toBe(true);
        // The verifier's own words, kept on the record.
        expect(record.raw_output, record.index).toContain(record.score === 1 ? 'PASS: ' : 'FAIL: ');
      }
    },
  );

  it('runs a Harbor dataset directory given to br run as the benchmark, staged once: its tasks, the agent named', { timeout: COLD_BUILD_MS }, async () => {
    const dataset = path.join(scratch, 'My Dataset');
    for (const task of ['csv-total', 'make-tree']) cpSync(path.join(DATASET, task), path.join(dataset, task), { recursive: true });
    const args = ['run', dataset, '-T', 'agent=oracle', '--model', 'm', '--endpoint', 'http://127.0.0.1:9/v1', '--no-preflight', '--json'];
    const first = await br(args, h.env);
    expect(first.code, first.stderr).toBe(0);
    const result = JSON.parse(first.stdout) as RunResult;
    expect(result).toMatchObject({ benchmark: 'harbor', status: 'COMPLETED', overall: 1 });
    expect(result.jobs.map((j) => j.task)).toEqual(['my-dataset']);
    expect((await recordsOf(result.runId)).map((r) => [r.index, r.score])).toEqual([
      ['csv-total', 1],
      ['make-tree', 1],
    ]);
    // The staged copy is named by content: a second submit of the same dataset stages nothing new.
    const staged = readdirSync(path.join(h.home, 'staged'));
    expect(staged).toEqual([expect.stringMatching(/^harbor-my-dataset-[0-9a-f]{24}$/)]);
    expect((await br(args, h.env)).code).toBe(0);
    expect(readdirSync(path.join(h.home, 'staged'))).toEqual(staged);
  });

  it(
    'does not count a reward file the agent wrote itself: the verifier wrote none, the task scores 0 with the reason',
    { timeout: COLD_BUILD_MS },
    async () => {
      const run = await h.run(builtinDir('harbor'), { tasks: ['forged-reward'], taskArgs: { agent: 'oracle' } });
      expect(run.jobs[0]!.status, run.jobs[0]!.message).toBe('SUCCEEDED');
      expect(run.overall).toBe(0);
      const [record] = await recordsOf(run.runId);
      expect(record).toMatchObject({ index: 'forged-reward', score: 0, exception: { exception_type: 'RewardFileNotFoundError' } });
    },
  );
});

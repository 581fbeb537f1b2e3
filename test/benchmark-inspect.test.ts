// The inspect benchmark's task template: an inspect_evals eval the benchmark does not list, named by the run
// (`--tasks inspect_evals/agent_threat_bench_data_exfil`, with `-T difficulty=hard` passed through), scores exactly
// what `inspect eval` run directly in the same image scores, sample by sample; its samples are listed by the eval
// itself with the same arguments, so it splits into shards that score as it does unsplit; an eval that does not
// exist, or an argument it does not take, fails at submit with the eval's own complaint.
// AgentThreatBench's data-exfiltration eval ships its data in the package and needs no sandbox. Against the
// reference model (which calls no tool) every sample's utility is 0 and its security 1, as run directly.
// An eval with Inspect's `docker` sandbox (the benchmark's own evals/shell_facts, its compose file on the local base
// image) runs in the job's own daemon: the model's bash calls run in each sample's sandbox, and it scores as
// `inspect eval` run directly with a daemon of its own does.

import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { benchmarkImage, builtinDir, replayAnswers } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';
import { inspectDirect } from './support/inspect-direct.js';
import type { RunResult } from '../runs/run-spec.js';
import { expectShardsAgree } from './support/shard-fidelity.js';

const EVAL = 'inspect_evals/agent_threat_bench_data_exfil';
// On a new machine the first run builds the inspect image (about a minute idle, up to 15 on loaded cores).
const COLD_BUILD_MS = 30 * 60_000;

let h: Harness;
let unsplit: RunResult;
/** shell_facts' model: per sample, a bash call, then the answer its output gives (wrong for count-files: ls, not find). */
let scripted: ReplayModelServer;

interface Record_ {
  index: string;
  score: number;
  score_value: { utility: string; security: string };
  messages: number;
}

describe('inspect --tasks inspect_evals/<name>', () => {
  beforeAll(async () => {
    h = await startHarness('inspect');
    // Reached from the direct run's own container too, as host.docker.internal.
    scripted = await startReplayModel({ answersFile: replayAnswers('inspect-shell-facts.jsonl'), host: '0.0.0.0' });
  });
  afterAll(async () => {
    await scripted?.close();
    await h?.close();
  });

  it('scores an eval it does not list exactly as inspect eval run directly, sample by sample, with its -T arguments', { timeout: COLD_BUILD_MS }, async () => {
    const run = await h.run(builtinDir('inspect'), { tasks: [EVAL], taskArgs: { difficulty: 'hard' } });
    unsplit = run;
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.task).toBe(EVAL);
    // The three hard samples of eight (-T difficulty=hard reached the eval, in its listing and its run).
    expect(job.shard).toMatchObject({ instances: 3 });
    expect(job.result).toEqual({ overall: 0, raw_metrics: { samples: 3 } });

    const direct = await inspectDirect(benchmarkImage('inspect', 'inspect'), EVAL, ['-T', 'difficulty=hard'], h.model.url);
    expect(direct.scores).toEqual({
      utility: { accuracy: 0, stderr: 0 },
      security: { accuracy: 1, stderr: 0 },
    });
    const records = (await br(['records', run.runId, '--json'], h.env)).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record_);
    expect(records.map((r) => [r.index, r.score_value, r.messages])).toEqual(direct.samples.map((s) => [s.id, s.value, s.messages]));
    expect(records.map((r) => r.index)).toEqual(['de_005', 'de_006', 'de_008']);
    // A record scores the first reported score, utility.
    expect(records.map((r) => r.score)).toEqual([0, 0, 0]);
  });

  it('split into shards of 1 scores each instance as it does unsplit, to the last digit', { timeout: COLD_BUILD_MS }, async () => {
    await expectShardsAgree(h, builtinDir('inspect'), { tasks: [EVAL], taskArgs: { difficulty: 'hard' } }, unsplit, [1]);
  });

  it(
    "refuses at submit an eval that does not exist and an argument the eval does not take, with the eval's own words",
    { timeout: COLD_BUILD_MS },
    async () => {
      await expect(h.run(builtinDir('inspect'), { tasks: ['inspect_evals/no_such_eval'] })).rejects.toThrow(
        "no eval 'no_such_eval' in inspect_evals (its registry inspect_evals._registry has no such task)",
      );
      await expect(h.run(builtinDir('inspect'), { tasks: [EVAL], taskArgs: { level: '3' } })).rejects.toThrow("got an unexpected keyword argument 'level'");
    },
  );

  it("serves an eval's docker sandboxes from the job's own daemon and scores as inspect eval does directly with one", { timeout: COLD_BUILD_MS }, async () => {
    const run = await h.run(builtinDir('inspect'), { tasks: ['evals/shell_facts'], endpoint: scripted.url });
    const job = run.jobs[0]!;
    expect(job.status, job.message).toBe('SUCCEEDED');
    expect(job.result).toEqual({ overall: 0.75, raw_metrics: { samples: 4 } });
    // Each sample: the bash call, then the answer after its output.
    expect(scripted.counts).toEqual({ answered: 8, unknown: 0 });
    const records = (await br(['records', run.runId, '--json'], h.env)).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record_ & { prediction: string })
      // Inspect's log holds the samples in the order they finished.
      .sort((a, b) => a.index.localeCompare(b.index));
    expect(records.map((r) => [r.index, r.score, r.prediction])).toEqual([
      ['count-files', 0, '3'],
      ['largest-quota', 1, 'carol'],
      ['log-lines', 1, '6'],
      ['sum-numbers', 1, '42'],
    ]);

    const preload = mkdtempSync(path.join(os.tmpdir(), 'br-inspect-preload-'));
    execFileSync('docker', ['save', '-o', path.join(preload, 'base.tar'), 'benchrouter/base:bookworm']);
    const direct = await inspectDirect(benchmarkImage('inspect', 'inspect'), '/bench/evals/shell_facts.py@shell_facts', [], scripted.url, {
      preload,
      volumes: [`${builtinDir('inspect')}:/bench:ro`],
    });
    expect(direct.scores).toEqual({ match: { accuracy: 0.75, stderr: 0.25 } });
    const directSamples = [...direct.samples].sort((a, b) => a.id.localeCompare(b.id));
    expect(records.map((r) => [r.index, r.score_value, r.messages])).toEqual(directSamples.map((s) => [s.id, s.value, s.messages]));
    expect(scripted.counts).toEqual({ answered: 16, unknown: 0 });
  });
});

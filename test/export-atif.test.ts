// `br export --format atif` against a real run (arith on the reference model, through the gateway, so each
// instance's model call is in the transcript): one trajectory.json per record at <task>/<instance>/, its steps the
// call's messages and answer, its metrics the call's usage; Harbor's own validator (harbor.utils.trajectory_validator,
// in the harbor image that wrote them) accepts every file, and rejects a corrupted copy. The reference model calls no
// tools: a conversation with a tool call and its result, cut from a transcript as the command cuts it, goes through
// export_atif.py in the same image and comes out as Harbor's tool calls and observation.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atifTrajectory, callsByInstance, type AtifBundle } from '../cli/commands/export.js';
import type { TranscriptCall } from '../gateway/transcript.js';
import type { JobResult, RunResult } from '../runs/run-spec.js';
import { benchmarkImage, builtinDir, dockerRun } from './support/benchmark-image.js';
import { br, startHarness, type Harness } from './support/harness.js';

// The first export on a new machine builds the harbor image (a few minutes; more on loaded cores).
const COLD_BUILD_MS = 30 * 60_000;
const LIMIT = 4;

let h: Harness;
let run: RunResult;
let out: string;
let scratch: string;

interface Record_ {
  index: number;
  score: number;
  prompt_tokens: number;
  completion_tokens: number;
  prediction: string;
}

interface Step {
  step_id: number;
  source: string;
  message: string;
  timestamp?: string;
  tool_calls?: Array<{ tool_call_id: string; function_name: string; arguments: Record<string, unknown> }>;
  observation?: { results: Array<{ source_call_id?: string; content?: string }> };
  metrics?: { prompt_tokens?: number; completion_tokens?: number };
  llm_call_count?: number;
}

interface Trajectory {
  schema_version: string;
  session_id: string;
  agent: { name: string; model_name: string; tool_definitions?: unknown[] };
  steps: Step[];
  final_metrics: { total_prompt_tokens?: number; total_completion_tokens?: number; total_steps: number };
  extra: Record<string, unknown>;
}

/** Harbor's validator on each file (`python3 -m harbor.utils.trajectory_validator`), in the harbor image: exit code and output. */
async function validate(dir: string, files: string[]): Promise<Array<{ code: number; output: string }>> {
  const script = [
    'import subprocess, sys, json',
    'runs = [subprocess.run([sys.executable, "-m", "harbor.utils.trajectory_validator", f], capture_output=True, text=True) for f in sys.argv[1:]]',
    'print(json.dumps([{"code": r.returncode, "output": r.stdout + r.stderr} for r in runs]))',
  ].join('\n');
  const answer = await dockerRun(benchmarkImage('harbor', 'harbor'), ['-c', script, ...files.map((f) => `/t/${f}`)], {
    entrypoint: 'python3',
    volumes: [`${dir}:/t:ro`],
  });
  return JSON.parse(answer) as Array<{ code: number; output: string }>;
}

const lines = <T>(text: string): T[] =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as T);

beforeAll(async () => {
  h = await startHarness('export-atif');
  out = mkdtempSync(path.join(os.tmpdir(), 'br-export-atif-'));
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-export-atif-scratch-'));
  run = await h.run(builtinDir('arith'), { model: 'reference-acc50', tasks: ['addition'], limit: LIMIT });
});
afterAll(async () => {
  await h?.close();
  for (const dir of [out, scratch]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('br export --format atif', () => {
  it(
    'writes one trajectory per record, its steps and usage the call the transcript holds, which Harbor’s validator accepts',
    { timeout: COLD_BUILD_MS },
    async () => {
      expect(run.status).toBe('COMPLETED');
      const exported = await br(['export', run.runId, '--format', 'atif', '--out', out], h.env);
      expect(exported.code, exported.stderr).toBe(0);
      const records = lines<Record_>((await br(['records', run.runId, '--json'], h.env)).stdout);
      expect(records).toHaveLength(LIMIT);
      const files = records.map((r) => `addition/${r.index}/trajectory.json`);
      expect(exported.stdout.trim().split('\n')).toEqual(files.map((f) => path.join(out, f)));

      const calls = lines<TranscriptCall>((await br(['transcripts', run.runId, '--json'], h.env)).stdout);
      expect(calls).toHaveLength(LIMIT);
      for (const [i, record] of records.entries()) {
        const trajectory = JSON.parse(readFileSync(path.join(out, files[i]!), 'utf8')) as Trajectory;
        const call = calls.find((c) => c.instance === String(record.index))!;
        const asked = (call.request as { messages: Array<{ role: string; content: string }> }).messages;
        const answer = (call.response as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
        expect(trajectory).toMatchObject({
          schema_version: 'ATIF-v1.8',
          session_id: `${run.runId}/addition/${record.index}`,
          agent: { name: 'arith', model_name: 'reference-acc50' },
          extra: { benchrouter_run: run.runId, task: 'addition', instance: String(record.index), score: record.score, prediction: record.prediction },
        });
        // arith asks once: its system and user messages, then the model's answer with the call's usage.
        expect(asked.map((m) => m.role)).toEqual(['system', 'user']);
        expect(trajectory.steps.map((s) => [s.step_id, s.source, s.message])).toEqual([
          [1, 'system', asked[0]!.content],
          [2, 'user', asked[1]!.content],
          [3, 'agent', answer],
        ]);
        expect(answer).toContain(record.prediction);
        expect(trajectory.steps[2]).toMatchObject({
          timestamp: call.at,
          llm_call_count: 1,
          metrics: { prompt_tokens: call.usage!.prompt_tokens, completion_tokens: call.usage!.completion_tokens, cost_usd: call.usage!.cost },
        });
        expect([call.usage!.prompt_tokens, call.usage!.completion_tokens]).toEqual([record.prompt_tokens, record.completion_tokens]);
        expect(trajectory.final_metrics).toEqual({
          total_prompt_tokens: record.prompt_tokens,
          total_completion_tokens: record.completion_tokens,
          total_cost_usd: call.usage!.cost,
          total_steps: 3,
        });
      }

      const verdicts = await validate(out, files);
      expect(verdicts.map((v) => v.code)).toEqual(files.map(() => 0));
      for (const verdict of verdicts) expect(verdict.output).toContain('Trajectory is valid');

      // A copy with its steps misnumbered and a source ATIF has no name for: the same validator says no.
      const corrupted = JSON.parse(readFileSync(path.join(out, files[0]!), 'utf8')) as Trajectory;
      corrupted.steps[1]!.step_id = 7;
      corrupted.steps[2]!.source = 'robot';
      writeFileSync(path.join(scratch, 'corrupted.json'), JSON.stringify(corrupted));
      const [rejected] = await validate(scratch, ['corrupted.json']);
      expect(rejected!.code).toBe(1);
      expect(rejected!.output).toContain('Trajectory validation failed');
      expect(rejected!.output).toContain('robot');
    },
  );

  it('writes a tool call, its result and the answer after it as Harbor’s tool call, observation and agent steps', { timeout: 5 * 60_000 }, async () => {
    const system = { role: 'system', content: 'Use the calculator.' };
    const user = { role: 'user', content: 'What is 2+3?' };
    const toolCall = { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a": 2, "b": 3}' } };
    const tools = [
      { type: 'function', function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } } },
    ];
    const call = (seq: number, messages: unknown[], answer: unknown, tokens: [number, number]): TranscriptCall => ({
      seq,
      at: `2026-12-01T10:00:0${seq}.000Z`,
      instance: '0',
      path: '/v1/chat/completions',
      status: 200,
      latency_ms: 200,
      request: { model: 'm', messages, tools },
      response: { model: 'm', choices: [{ index: 0, message: answer }] },
      usage: { prompt_tokens: tokens[0], completion_tokens: tokens[1], cost: 0.5 * seq },
    });
    const transcript = [
      call(1, [system, user], { role: 'assistant', content: 'Adding.', refusal: null, tool_calls: [toolCall] }, [30, 5]),
      call(
        2,
        [system, user, { role: 'assistant', content: 'Adding.', tool_calls: [toolCall] }, { role: 'tool', tool_call_id: 'call_1', content: '5' }],
        { role: 'assistant', content: 'It is 5.' },
        [40, 4],
      ),
    ]
      .map((line) => JSON.stringify(line))
      .join('\n');
    const job = { jobId: 'job-1', task: 'tools', status: 'SUCCEEDED' } as JobResult;
    const record = { index: 0, score: 1, prompt_tokens: 70, completion_tokens: 9, cost: null, prompt: 'What is 2+3?', prediction: '5' };
    const bundle: AtifBundle = {
      run: { run_id: 'br-tools', benchmark: 'calc', model: 'm', status: 'COMPLETED' },
      trajectories: [atifTrajectory('br-tools', job, record, callsByInstance(transcript), false)],
    };
    const work = path.join(scratch, 'tools');
    mkdirSync(path.join(work, 'out'), { recursive: true });
    writeFileSync(path.join(work, 'run.json'), JSON.stringify(bundle));
    await dockerRun(benchmarkImage('harbor', 'harbor'), ['/app/benchmark/export_atif.py', '/work/run.json', '/work/out'], {
      entrypoint: 'python3',
      volumes: [`${builtinDir('harbor')}:/app/benchmark:ro`, `${work}:/work`],
    });
    const trajectory = JSON.parse(readFileSync(path.join(work, 'out', '0.json'), 'utf8')) as Trajectory;
    expect(trajectory.agent.tool_definitions).toEqual(tools);
    expect(trajectory.steps.map((s) => [s.source, s.message])).toEqual([
      ['system', 'Use the calculator.'],
      ['user', 'What is 2+3?'],
      ['agent', 'Adding.'],
      ['agent', 'It is 5.'],
    ]);
    expect(trajectory.steps[2]).toMatchObject({
      tool_calls: [{ tool_call_id: 'call_1', function_name: 'add', arguments: { a: 2, b: 3 } }],
      observation: { results: [{ source_call_id: 'call_1', content: '5' }] },
      metrics: { prompt_tokens: 30, completion_tokens: 5 },
    });
    expect(trajectory.final_metrics).toEqual({ total_prompt_tokens: 70, total_completion_tokens: 9, total_cost_usd: 1.5, total_steps: 4 });
    expect((await validate(path.join(work, 'out'), ['0.json'])).map((v) => v.code)).toEqual([0]);
    // A result that names a call its step did not make: Harbor's validator says no.
    trajectory.steps[2]!.observation!.results[0]!.source_call_id = 'call_9';
    writeFileSync(path.join(work, 'bad.json'), JSON.stringify(trajectory));
    const [rejected] = await validate(work, ['bad.json']);
    expect(rejected).toMatchObject({ code: 1 });
    expect(rejected!.output).toContain("source_call_id 'call_9'");
  });
});

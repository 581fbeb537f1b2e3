// `br export --format atif`, its pure part (cli/export-atif.ts, cli/commands/export.ts): a job's transcript split
// by instance, each instance's calls cut into what each request added to the conversation and its answer, with
// usage and times, and where each trajectory goes. export_atif.py turns these into Harbor's models
// (test/export-atif.test.ts runs it, with Harbor's validator).

import { describe, expect, it } from 'vitest';
import { atifTrajectory, callsByInstance } from '../../cli/commands/export.js';
import { argumentsObject, atifCalls, atifMessage, pathSegment, toolDefinitions, trajectoryPath } from '../../cli/export-atif.js';
import type { TranscriptCall } from '../../gateway/transcript.js';
import type { JobResult } from '../../runs/run-spec.js';

const system = { role: 'system', content: 'You are terse.' };
const user = { role: 'user', content: 'What is 2+3? Use the calculator.' };
const toolCall = { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a": 2, "b": 3}' } };
/** A message as the trajectory input holds it. */
const as = (role: string, text: string, more: object = {}) => ({ role, text, tool_calls: [], ...more });
const TOOLS = [{ type: 'function', function: { name: 'add', parameters: { type: 'object' } } }];

function call(
  seq: number,
  instance: string | undefined,
  messages: unknown[],
  answer: Record<string, unknown>,
  extra: Partial<TranscriptCall> = {},
): TranscriptCall {
  return {
    seq,
    at: `2026-12-01T10:00:0${seq}.000Z`,
    ...(instance !== undefined ? { instance } : {}),
    path: '/v1/chat/completions',
    status: 200,
    latency_ms: 250,
    request: { model: 'm', messages, tools: TOOLS },
    response: {
      model: 'm-2026',
      choices: [{ index: 0, message: answer }],
      usage: { prompt_tokens: 10 * seq, completion_tokens: seq, prompt_tokens_details: { cached_tokens: 4 } },
    },
    usage: { prompt_tokens: 10 * seq, completion_tokens: seq, cost: 0.001 * seq },
    ...extra,
  };
}

// The model asks for a tool; the harness sends its answer back (as a client does: no refusal or annotations,
// the arguments re-serialized) with the tool's result; the model answers.
const first = call(1, '0', [system, user], { role: 'assistant', content: null, refusal: null, annotations: [], tool_calls: [toolCall] });
const second = call(
  2,
  '0',
  [
    system,
    user,
    { role: 'assistant', content: '', tool_calls: [{ ...toolCall, function: { name: 'add', arguments: '{"a":2,"b":3}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '5' },
  ],
  { role: 'assistant', content: '5', reasoning_content: 'the tool said 5' },
);

describe('an instance’s calls as trajectory input', () => {
  it('takes from each request only what it added to the previous call’s messages and answer', () => {
    const calls = atifCalls([first, second]);
    expect(calls.map((c) => c.asked)).toEqual([[as('system', system.content), as('user', user.content)], [as('tool', '5', { tool_call_id: 'call_1' })]]);
    expect(calls.map((c) => c.answer)).toEqual([
      as('assistant', '', { tool_calls: [{ id: 'call_1', name: 'add', arguments: { a: 2, b: 3 } }] }),
      as('assistant', '5', { reasoning: 'the tool said 5' }),
    ]);
    expect(calls[1]).toMatchObject({
      seq: 2,
      sent_at: '2026-12-01T10:00:01.750Z',
      at: '2026-12-01T10:00:02.000Z',
      model: 'm-2026',
      latency_ms: 250,
      usage: { prompt_tokens: 20, completion_tokens: 2, cached_tokens: 4, cost_usd: 0.002 },
    });
  });

  it('takes the whole request when it does not continue the conversation: a new one, or a history rewritten', () => {
    const summary = { role: 'user', content: 'So far: the sum is 5. Say it.' };
    const restarted = call(2, '0', [system, summary], { role: 'assistant', content: '5' });
    expect(atifCalls([first, restarted]).map((c) => c.asked.map((m) => m.text))).toEqual([
      [system.content, user.content],
      [system.content, summary.content],
    ]);
    // A few-shot prompt's answers are the harness's, not a call's: they stay in what the first request asked.
    const shot = [system, { role: 'user', content: '1+1?' }, { role: 'assistant', content: '2' }, user];
    expect(atifCalls([call(1, '0', shot, { role: 'assistant', content: '5' })])[0]!.asked.map((m) => [m.role, m.text])).toEqual(
      shot.map((m) => [m.role, m.content]),
    );
  });

  it('reads a completion’s prompt, and leaves out a cost the gateway had no price for', () => {
    const completion: TranscriptCall = {
      ...call(1, '0', [], { role: 'assistant', content: '' }),
      path: '/v1/completions',
      request: { model: 'm', prompt: '2+3=' },
      response: { choices: [{ text: '5' }] },
      usage: { prompt_tokens: 3, completion_tokens: 1, cost: 0 },
    };
    expect(atifCalls([completion])[0]).toMatchObject({ asked: [as('prompt', '2+3=')], answer: as('answer', '5') });
    expect(atifCalls([completion])[0]!.usage).toEqual({ prompt_tokens: 3, completion_tokens: 1 });
    expect(toolDefinitions([completion])).toBeUndefined();
    expect(toolDefinitions([first, second])).toEqual(TOOLS);
  });

  it('gives messages as text, a reasoning under either name, and tool-call arguments as objects', () => {
    const parts = {
      role: 'user',
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    };
    expect(atifMessage(parts)).toEqual(as('user', 'a\nb'));
    expect(atifMessage({ role: 'assistant', content: 'x', reasoning: 'why' })).toEqual(as('assistant', 'x', { reasoning: 'why' }));
    const unnamed = { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: 'not json' } }] };
    expect(atifMessage(unnamed).tool_calls).toEqual([{ id: 'call-0', name: 'f', arguments: { raw: 'not json' } }]);
    expect([argumentsObject(''), argumentsObject('[1]'), argumentsObject('{"k":1}')]).toEqual([{}, { value: [1] }, { k: 1 }]);
  });
});

describe('a job’s transcript by instance', () => {
  it('keeps each instance’s answered calls in order, drops failed and untagged ones, and says when it was capped', () => {
    const failed = { ...call(3, '1', [user], { role: 'assistant', content: '' }), status: 500 };
    const other = call(4, '1', [user], { role: 'assistant', content: '5' });
    const untagged = call(5, undefined, [user], { role: 'assistant', content: '5' });
    const lines = [first, failed, other, second, untagged].map((line) => JSON.stringify(line));
    const read = callsByInstance(`${lines.join('\n')}\n`);
    expect([...read.calls.entries()].map(([instance, calls]) => [instance, calls.map((c) => c.seq)])).toEqual([
      ['0', [1, 2]],
      ['1', [4]],
    ]);
    expect(read.capped).toBe(false);
    const cap = JSON.stringify({ capped: { reason: 'calls', limit: 5, recorded_calls: 5, note: '' } });
    expect(callsByInstance(`${lines.join('\n')}\n${cap}\n`).capped).toBe(true);
  });

  it('makes each record a trajectory at <task>/<instance>/trajectory.json, each repeat in its own directory', () => {
    const job = { jobId: 'j-1', task: 'inspect_evals/gsm8k', status: 'SUCCEEDED', repeat: 1, host: 'h' } as JobResult;
    const record = { index: 0, score: 1, prompt_tokens: 30, completion_tokens: 3, cost: null, prompt: 'What is 2+3?', prediction: '5' };
    const transcript = callsByInstance([first, second].map((line) => JSON.stringify(line)).join('\n'));
    const trajectory = atifTrajectory('br-run', job, record, transcript, true);
    expect(trajectory).toMatchObject({
      path: 'inspect_evals.gsm8k/repeat-1/0/trajectory.json',
      session_id: 'br-run/inspect_evals/gsm8k/repeat-1/0',
      task: 'inspect_evals/gsm8k',
      record: { id: '0', input: 'What is 2+3?', output: '5', score: 1, metadata: { job: 'j-1', host: 'h' } },
      tools: TOOLS,
      capped: false,
    });
    expect(trajectory.calls.map((c) => c.seq)).toEqual([1, 2]);
    expect(atifTrajectory('br-run', job, { ...record, index: 7 }, transcript, false)).toMatchObject({
      path: 'inspect_evals.gsm8k/7/trajectory.json',
      calls: [],
    });
  });

  it('names directories that cannot climb out of the export directory', () => {
    expect(['..', '.', '', 'a/b', 'a\\b', 'x y:z', 'ok-1.2_3'].map(pathSegment)).toEqual(['_..', '_.', '_', 'a.b', 'a.b', 'x_y_z', 'ok-1.2_3']);
    expect(trajectoryPath('../etc', '..', undefined)).toBe('...etc/_../trajectory.json');
  });
});

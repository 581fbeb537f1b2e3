// Reasoning models' thinking in answer text (gateway/thinking.ts, gateway/stream-observer.ts): one rule for
// whole and streamed answers, the thinking found however the stream is cut, answers cut off while
// thinking counted; and the per-instance figures the gateway keeps for tagged calls
// (gateway/instance-usage.ts) joined to records (activities/records-file.ts).

import { describe, expect, it } from 'vitest';
import { withGatewayUsage } from '../../activities/records-file.js';
import type { InstanceRecord } from '../../contract/records.js';
import { addToInstance, instanceOf, instanceTable, type InstanceUsage } from '../../gateway/instance-usage.js';
import { StreamObserver } from '../../gateway/stream-observer.js';
import { endsInThinking, StreamedThinking, stripThinking, wholeAnswerThinking } from '../../gateway/thinking.js';
import { thinkingAnswer } from '../../reference-model/reference-answer.js';

describe('stripping thinking from a whole answer', () => {
  it('removes everything through the first </think>, and the whitespace after it', () => {
    expect(stripThinking('<think>2 + 2 is 4, I think.</think>\n\nThe answer is 4.')).toBe('The answer is 4.');
    // The chat template opened the thinking in the prompt: only the closing tag is in the answer.
    expect(stripThinking('2 + 2 is 4.</think> The answer is 4.')).toBe('The answer is 4.');
    expect(stripThinking('<think>a</think>The answer is <think>not</think> 4.')).toBe('The answer is <think>not</think> 4.');
  });

  it('leaves an answer without thinking as it is, and empties one cut off inside it', () => {
    expect(stripThinking('The answer is 4.')).toBe('The answer is 4.');
    expect(stripThinking('  <think>2 + 2 is')).toBe('');
    expect(endsInThinking('  <think>2 + 2 is')).toBe(true);
    expect(endsInThinking('<think>x</think>4')).toBe(false);
    expect(endsInThinking('4 <think>')).toBe(false);
  });
});

/** Feeds the text cut every `size` characters; returns what was forwarded and whether it ended inside thinking. */
function streamed(text: string, size: number, strip: boolean): { out: string; inThinking: boolean } {
  const thinking = new StreamedThinking(strip);
  let out = '';
  for (let i = 0; i < text.length; i += size) out += thinking.feed(text.slice(i, i + size));
  const inThinking = thinking.inThinking;
  return { out: out + thinking.end(), inThinking };
}

describe('thinking in a streamed answer', () => {
  const answers = [
    '<think>2 + 2 is 4, I think.</think>\n\nThe answer is 4.',
    '2 + 2 is 4.</think> The answer is 4.',
    'The answer is 4.',
    '<think>2 + 2 is',
    '',
  ];

  it('strips by the same rule as a whole answer, however the stream is cut', () => {
    for (const text of answers)
      for (const size of [1, 2, 3, 7, 100]) expect(streamed(text, size, true).out, `${JSON.stringify(text)} in pieces of ${size}`).toBe(stripThinking(text));
  });

  it('when only watching, forwards every piece as it came and still tells an answer cut off inside its thinking', () => {
    for (const text of answers)
      for (const size of [1, 3, 100]) {
        const { out, inThinking } = streamed(text, size, false);
        expect(out).toBe(text);
        expect(inThinking, `${JSON.stringify(text)} in pieces of ${size}`).toBe(endsInThinking(text));
      }
    // A long thinking never closed is told with a bounded memory of it.
    expect(streamed(`<think>${'step '.repeat(100_000)}`, 5, false).inThinking).toBe(true);
  });
});

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const delta = (content: string, finish: string | null = null) => sse({ choices: [{ index: 0, delta: { content }, finish_reason: finish }] });

describe('the stream observer with thinking', () => {
  it('rewrites only the events whose text changes, and puts what it held back into the finishing event', () => {
    const observer = new StreamObserver(0, { dropUsageEvent: false, stripThinking: true });
    const chunks = [delta('<think>hm'), delta('m</thi'), delta('nk> The answer'), delta(' is 4.'), delta('', 'stop'), 'data: [DONE]\n\n'];
    const out = chunks.map((c) => observer.feed(Buffer.from(c)).toString()).join('') + observer.end().toString();
    const texts = out
      .split('\n\n')
      .filter((e) => e && e !== 'data: [DONE]')
      .map((e) => (JSON.parse(e.slice('data: '.length)) as { choices: Array<{ delta: { content: string } }> }).choices[0]!.delta.content);
    expect(texts).toEqual(['', '', 'The answer', ' is 4.', '']);
    expect(out).toContain(delta(' is 4.'));
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('releases a held answer that never thought at its finish, and counts answers cut off while thinking', () => {
    const plain = new StreamObserver(0, { dropUsageEvent: false, stripThinking: true });
    const held = [delta('The answer'), delta(' is 4.', 'stop')].map((c) => plain.feed(Buffer.from(c)).toString()).join('');
    expect(held).toContain('"content":"The answer is 4."');
    expect(plain.endedInThinking).toBe(0);

    const cut = new StreamObserver(0, { dropUsageEvent: false, stripThinking: false });
    for (const c of [delta('<think>step step'), delta(' step', 'length')]) cut.feed(Buffer.from(c));
    const parsedOut = new StreamObserver(0, { dropUsageEvent: false, stripThinking: false });
    // A server that parses the thinking out: reasoning_content deltas, and no text before the cut.
    parsedOut.feed(Buffer.from(sse({ choices: [{ index: 0, delta: { reasoning_content: 'step step' }, finish_reason: 'length' }] })));
    expect([cut.endedInThinking, parsedOut.endedInThinking]).toEqual([1, 1]);
  });
});

describe('the stream observer with odd streams', () => {
  const feedAll = (observer: StreamObserver, chunks: string[]) =>
    chunks.map((c) => observer.feed(Buffer.from(c)).toString()).join('') + observer.end().toString();

  it('passes events that are not objects through, and still meters the usage after them', () => {
    const observer = new StreamObserver(0, { dropUsageEvent: false, stripThinking: true });
    const out = feedAll(observer, [
      'data: null\n\n',
      'data: [1]\n\n',
      sse({ choices: [null, 3] }),
      sse({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }),
    ]);
    expect(out.startsWith('data: null\n\ndata: [1]\n\n')).toBe(true);
    expect(observer.usage).toEqual({ promptTokens: 3, completionTokens: 1 });
  });

  it('releases held text when the stream ends without a finish, and puts it in a delta when the finish has none', () => {
    const cut = new StreamObserver(0, { dropUsageEvent: false, stripThinking: true });
    expect(feedAll(cut, [delta('The answer'), delta(' is 4.')])).toContain('"delta":{"content":"The answer is 4."}');
    const bare = new StreamObserver(0, { dropUsageEvent: false, stripThinking: true });
    const out = feedAll(bare, [delta('<think>x</think>'), sse({ choices: [{ index: 0, finish_reason: 'stop' }] })]);
    expect(out).not.toContain('"text"');
    const stripped = new StreamObserver(0, { dropUsageEvent: false, stripThinking: true });
    expect(feedAll(stripped, [delta('The answer is 4.'), sse({ choices: [{ index: 0, finish_reason: 'stop' }] })])).toContain(
      '"delta":{"content":"The answer is 4."}',
    );
  });
});

describe('a whole answer with thinking', () => {
  it('strips each choice in place and counts those cut off while thinking', () => {
    const answer = {
      choices: [
        { index: 0, message: { role: 'assistant', content: '<think>x</think> 4' }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: '<think>x x' }, finish_reason: 'length' },
        { index: 2, message: { role: 'assistant', content: '', reasoning_content: 'x x' }, finish_reason: 'length' },
        { index: 3, text: '<think>y</think>5', finish_reason: 'stop' },
      ],
    };
    expect(wholeAnswerThinking(answer, true)).toEqual({ endedInThinking: 2, changed: true });
    expect(answer.choices.map((c) => c.message?.content ?? c.text)).toEqual(['4', '', '', '5']);
    expect(wholeAnswerThinking({ choices: [{ message: { content: '4' }, finish_reason: 'length' }] }, true)).toEqual({ endedInThinking: 0, changed: false });
  });

  it("matches the reference model's thinking answers", () => {
    const short = thinkingAnswer('reference-thinking', 'The answer is 4.', 32)!;
    expect(short).toEqual({ text: '<think>step step step step step step step step</think> The answer is 4.', reasoningTokens: 8, finish: 'stop' });
    expect(stripThinking(short.text)).toBe('The answer is 4.');
    const cut = thinkingAnswer('reference-thinking40', 'The answer is 4.', 32)!;
    expect(cut.finish).toBe('length');
    expect(endsInThinking(cut.text)).toBe(true);
    expect(thinkingAnswer('reference-acc80', 'The answer is 4.', 32)).toBeUndefined();
  });
});

describe('usage per instance', () => {
  const call = (status: number, promptTokens: number, completionTokens: number, extra = {}) => ({
    status,
    latencyMs: 10,
    promptTokens,
    completionTokens,
    cost: 0.5,
    retries: 0,
    throttled: 0,
    queued: false,
    ...extra,
  });

  it('adds each tagged call to its instance, and joins the figures to the record, filling what the benchmark left out', () => {
    const instances: Record<string, InstanceUsage> = {};
    addToInstance(instances, '7', call(200, 10, 4, { reasoningTokens: 3 }));
    addToInstance(instances, '7', call(500, 0, 0));
    addToInstance(instances, '8', call(200, 5, 2, { endedInThinking: 1 }));
    expect(instances).toEqual({
      '7': { calls: 2, errors: 1, prompt_tokens: 10, completion_tokens: 4, reasoning_tokens: 3, cost: 1, latency_ms: 20 },
      '8': { calls: 1, errors: 0, prompt_tokens: 5, completion_tokens: 2, ended_in_thinking: 1, cost: 0.5, latency_ms: 10 },
    });
    const byId = new Map(Object.entries(instances));
    const reported: InstanceRecord = { index: 7, score: 1, prompt_tokens: 99, completion_tokens: null, cost: null };
    expect(withGatewayUsage(reported, byId)).toEqual({ index: 7, score: 1, prompt_tokens: 99, completion_tokens: 4, cost: 1, gateway: instances['7'] });
    const untagged: InstanceRecord = { index: 'x', score: 0, prompt_tokens: null, completion_tokens: null, cost: null };
    expect(withGatewayUsage(untagged, byId)).toEqual({ index: 'x', score: 0, prompt_tokens: null, completion_tokens: null, cost: null });
  });

  it("keeps an instance named __proto__ as an instance, not as every object's prototype", () => {
    const instances = instanceTable();
    addToInstance(instances, '__proto__', call(200, 1, 1));
    expect(Object.keys(instances)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).calls).toBeUndefined();
    expect(instanceTable({ a: instances['__proto__']! }).a!.calls).toBe(1);
  });

  it('reads the tag from the header, trimmed and capped', () => {
    expect(instanceOf(' 42 ')).toBe('42');
    expect(instanceOf(['a', 'b'])).toBe('a');
    expect(instanceOf('')).toBeUndefined();
    expect(instanceOf(undefined)).toBeUndefined();
    expect(instanceOf('x'.repeat(1000))).toHaveLength(256);
  });
});

// A job's transcript (gateway/transcript.ts): one redacted line per call, capped with the cap said, carried on
// after a restart; a streamed answer reassembled (gateway/stream-assembly.ts); and how `br transcripts`
// shows a call (cli/commands/transcripts.ts).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callText } from '../../cli/commands/transcripts.js';
import { StreamAssembler } from '../../gateway/stream-assembly.js';
import { linesOfInstance, parseTranscript } from '../../gateway/transcript-chat.js';
import { TranscriptWriter, transcriptBody, type TranscriptCall } from '../../gateway/transcript.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-transcript-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const call = (seq: number, extra: Partial<TranscriptCall> = {}): TranscriptCall => ({
  seq,
  at: '2026-12-02T00:00:00.000Z',
  path: '/v1/chat/completions',
  status: 200,
  latency_ms: 12,
  ...extra,
});
const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('a transcript file', () => {
  it("keeps the cap's line among one instance's calls, in br transcripts --instance and the API alike", async () => {
    const file = path.join(scratch, 'instances', 'transcript.jsonl');
    const writer = new TranscriptWriter(file, { maxCalls: 3, maxBytes: 1 << 20 }, []);
    for (const [seq, instance] of [
      [1, 'a'],
      [2, 'b'],
      [3, 'a'],
      [4, 'a'],
    ] as const)
      writer.write(call(seq, { instance }));
    await writer.close();
    const { lines } = parseTranscript(readFileSync(file, 'utf8'));
    const shown = linesOfInstance(lines, 'a').map((l) => ('seq' in l ? l.seq : l.capped.reason));
    expect(shown).toEqual([1, 3, 'calls']);
    expect(linesOfInstance(lines, undefined)).toHaveLength(4);
  });

  it('redacts the key and the token wherever they appear, and stops at its calls cap saying so', async () => {
    const file = path.join(scratch, 'calls', 'transcript.jsonl');
    const writer = new TranscriptWriter(file, { maxCalls: 2, maxBytes: 1 << 20 }, ['sk-upstream-secret-1', 'brj-0123456789', 'EMPTY']);
    writer.write(call(1, { request: { messages: [{ role: 'user', content: 'my key is sk-upstream-secret-1 and brj-0123456789' }] } }));
    writer.write(call(2, { response: 'EMPTY' }));
    writer.write(call(3));
    writer.write(call(4));
    await writer.close();
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('sk-upstream-secret-1');
    expect(text).not.toContain('brj-0123456789');
    expect(text).toContain('my key is [redacted] and [redacted]');
    // A short "secret" (no key: EMPTY) is not hunted for in ordinary text.
    expect(linesOf(file)[1]!.response).toBe('EMPTY');
    expect(linesOf(file).map((l) => l.seq ?? l.capped)).toEqual([
      1,
      2,
      { reason: 'calls', limit: 2, recorded_calls: 2, note: 'transcript stopped at its 2 calls: later calls of this job are metered but not recorded' },
    ]);

    // After a restart the writer reopens the file: still capped, nothing appended.
    const again = new TranscriptWriter(file, { maxCalls: 2, maxBytes: 1 << 20 }, []);
    again.write(call(5));
    await again.close();
    expect(linesOf(file)).toHaveLength(3);
  });

  it('carries on counting after a restart, and stops at its bytes cap', async () => {
    const file = path.join(scratch, 'bytes', 'transcript.jsonl');
    const first = new TranscriptWriter(file, { maxCalls: 10, maxBytes: 400 }, []);
    first.write(call(1));
    await first.close();
    const second = new TranscriptWriter(file, { maxCalls: 10, maxBytes: 400 }, []);
    second.write(call(2));
    second.write(call(3, { response: 'x'.repeat(500) }));
    second.write(call(4));
    await second.close();
    expect(linesOf(file).map((l) => l.seq ?? (l.capped as { reason: string }).reason)).toEqual([1, 2, 'bytes']);
  });

  it('keeps a body that is not JSON as its text, cut at 64 KB', () => {
    expect(transcriptBody(Buffer.from('{"a":1}'))).toEqual({ a: 1 });
    expect(transcriptBody(Buffer.from('upstream exploded'))).toBe('upstream exploded');
    expect(transcriptBody(Buffer.from('y'.repeat(70_000)))).toBe(`${'y'.repeat(65_536)}… (70000 bytes)`);
    expect(transcriptBody(undefined)).toBeUndefined();
  });
});

describe('a streamed answer reassembled', () => {
  it('joins text, thinking and tool calls per choice into one chat.completion', () => {
    const assembler = new StreamAssembler();
    const chunks = [
      { id: 'c1', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
      { id: 'c1', model: 'm', choices: [{ index: 0, delta: { reasoning_content: 'Let me ' } }] },
      { id: 'c1', model: 'm', choices: [{ index: 0, delta: { reasoning_content: 'look.', content: 'Reading' } }] },
      {
        id: 'c1',
        model: 'm',
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read_', arguments: '{"pa' } }] } }],
      },
      { id: 'c1', model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: 'file', arguments: 'th":"/a"}' } }] } }] },
      { id: 'c1', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      { id: 'c1', model: 'm', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } },
    ];
    for (const chunk of chunks) assembler.add(chunk);
    expect(assembler.answer()).toEqual({
      id: 'c1',
      model: 'm',
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Reading',
            reasoning_content: 'Let me look.',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"/a"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 9, completion_tokens: 4 },
    });
  });

  it('joins text completions, and takes a Responses API stream as its completed response', () => {
    const text = new StreamAssembler();
    for (const piece of ['The ', 'answer']) text.add({ choices: [{ index: 0, text: piece }] });
    text.add({ choices: [{ index: 0, text: '', finish_reason: 'stop' }] });
    expect(text.answer()).toEqual({ object: 'text_completion', choices: [{ index: 0, text: 'The answer', finish_reason: 'stop' }] });
    const responses = new StreamAssembler();
    responses.add({ type: 'response.output_text.delta', delta: 'Hi' });
    responses.add({ type: 'response.completed', response: { status: 'completed', output: [] } });
    expect(responses.answer()).toEqual({ status: 'completed', output: [] });
  });
});

describe('a call as br transcripts shows it', () => {
  it('shows what is new in the request and the answer, tool calls and results included, long texts folded', () => {
    const shown = callText(
      call(3, {
        instance: 'fs-1',
        usage: { prompt_tokens: 40, completion_tokens: 7, cost: 0 },
        request: {
          messages: [
            { role: 'system', content: 'You operate on files.' },
            { role: 'user', content: 'Create a.txt' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', function: { name: 'write_file', arguments: '{}' } }] },
            { role: 'tool', tool_call_id: 'call_1', content: 'x'.repeat(50) },
          ],
        },
        response: { choices: [{ message: { role: 'assistant', content: 'Done.' } }] },
      }),
      20,
    );
    expect(shown).toBe(
      [
        '#3  instance fs-1  /v1/chat/completions  200  12 ms  40 in / 7 out tokens',
        `  tool (call_1): ${'x'.repeat(20)}… (50 characters; --full shows all)`,
        '  assistant: Done.',
        '',
        '',
      ].join('\n'),
    );
    expect(callText({ capped: { reason: 'calls', limit: 2, recorded_calls: 2, note: 'stopped' } }, 20)).toBe('-- stopped\n');
  });
});

// A run's instances as the dashboard lists them (filter, search, one page kept of a stream), and a
// transcript read as a chat: each call's new turns, its tool calls and the tool results sent back.

import { describe, expect, it } from 'vitest';
import type { InstanceRecord } from '../../contract/records.js';
import { callTurns, parseTranscript } from '../../gateway/transcript-chat.js';
import type { TranscriptCall } from '../../gateway/transcript.js';
import { InstancePage, instanceRow, matchesFilter } from '../../runs/instance-list.js';

const record = (index: number | string, score: number, extra: Partial<InstanceRecord> = {}): InstanceRecord => ({
  index,
  score,
  prompt_tokens: null,
  completion_tokens: null,
  cost: null,
  ...extra,
});

describe('instance list', () => {
  it('keeps only the failures (score below 1) when asked', () => {
    expect([record(1, 1), record(2, 0), record(3, 0.5)].filter((r) => matchesFilter(r, { failed: true })).map((r) => r.index)).toEqual([2, 3]);
  });

  it('searches the id and the texts, case-insensitively, objects as their JSON', () => {
    const r = record('fs-3', 1, { prompt: 'Create the file Notes/hello.txt', prediction: { path: '/tmp/x' } });
    expect(matchesFilter(r, { search: 'notes/HELLO' })).toBe(true);
    expect(matchesFilter(r, { search: 'FS-3' })).toBe(true);
    expect(matchesFilter(r, { search: '/tmp/x' })).toBe(true);
    expect(matchesFilter(r, { search: 'absent' })).toBe(false);
    expect(matchesFilter(r, { search: '  ' })).toBe(true);
  });

  it("keeps one page of a stream and counts the rest, building only the page's rows", () => {
    const page = new InstancePage(20, 10);
    let built = 0;
    for (let i = 0; i < 10_000; i++)
      page.offer(() => {
        built += 1;
        return instanceRow({ jobId: 'j', task: 't' }, record(i, 1));
      });
    expect([page.total, page.rows.length, built, page.rows[0]!.id, page.nextOffset]).toEqual([10_000, 10, 10, '20', 30]);
    const last = new InstancePage(9_995, 10);
    for (let i = 0; i < 10_000; i++) last.offer(() => instanceRow({ jobId: 'j', task: 't' }, record(i, 1)));
    expect([last.rows.length, last.nextOffset]).toEqual([5, undefined]);
  });

  it("takes the gateway's calls and latency for the instance, and its tokens and cost as the record gives them", () => {
    const row = instanceRow(
      { jobId: 'j', task: 't', repeat: 2 },
      record(7, 0, { prompt_tokens: 12, completion_tokens: 3, cost: 0.5, gateway: { calls: 3, latency_ms: 140, errors: 0 } }),
    );
    expect(row).toEqual({
      jobId: 'j',
      task: 't',
      repeat: 2,
      id: '7',
      score: 0,
      promptTokens: 12,
      completionTokens: 3,
      cost: 0.5,
      calls: 3,
      latencyMs: 140,
      shard: null,
      host: null,
      carriedFrom: null,
    });
  });

  it("names a shard's place, its host, and where a carried instance was evaluated", () => {
    const job = { jobId: 'j.s001', task: 't', host: 'h2', shard: { index: 1, count: 4 } };
    expect(instanceRow(job, record(3, 1))).toMatchObject({ shard: '2 of 4', host: 'h2', carriedFrom: null });
    expect(instanceRow(job, record(3, 1, { carried: true, carried_from: 'br-1.000-t.s001' })).carriedFrom).toBe('br-1.000-t.s001');
    expect(instanceRow(job, record(3, 1, { carried: true })).carriedFrom).toBe('an earlier attempt');
  });
});

describe('transcript as a chat', () => {
  const call = (seq: number, messages: unknown[], answer: unknown): TranscriptCall => ({
    seq,
    at: '2026-12-02T07:00:00Z',
    path: '/v1/chat/completions',
    status: 200,
    latency_ms: 10,
    request: { model: 'm', messages },
    response: { choices: [{ message: answer }] },
  });

  it('shows the first call whole, a later one from the tool result on, and each tool call with its arguments', () => {
    const system = { role: 'system', content: 'You operate on files.' };
    const user = { role: 'user', content: [{ type: 'text', text: 'Create notes/a.txt' }] };
    const toolCall = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'write_file', arguments: '{"path":"a"}' } }],
    };
    const result = { role: 'tool', tool_call_id: 'c1', content: 'Wrote a' };
    const first = callTurns(call(1, [system, user], toolCall));
    expect(first.asked.map((t) => [t.role, t.text])).toEqual([
      ['system', 'You operate on files.'],
      ['user', 'Create notes/a.txt'],
    ]);
    expect(first.answered).toEqual([{ role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'write_file', arguments: '{"path":"a"}' }] }]);
    const second = callTurns(call(2, [system, user, toolCall, result], { role: 'assistant', content: 'Done.', reasoning_content: 'it worked' }));
    expect(second.asked).toEqual([{ role: 'tool', text: 'Wrote a', toolCalls: [], toolCallId: 'c1' }]);
    expect(second.answered).toEqual([{ role: 'assistant', text: 'Done.', reasoning: 'it worked', toolCalls: [] }]);
  });

  it('reads the lines of a transcript file, counting half-written and foreign ones', () => {
    const text = `${JSON.stringify(call(1, [], { role: 'assistant', content: 'x' }))}\n{"seq": 2, "pa\n42\n\n`;
    const { lines, unreadable } = parseTranscript(text);
    expect([lines.length, unreadable]).toEqual([1, 2]);
  });
});

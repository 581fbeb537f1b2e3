// The gateway's pure pieces: the route allow-list, surgical JSON edits of request bodies, SSE framing
// on bytes, and the usage fields of every metered API. No server, no network.

import { describe, expect, it } from 'vitest';
import { checkRoute } from '../../gateway/gateway-routes.js';
import { applyJsonEdits, diffJsonObjects } from '../../gateway/json-text-edit.js';
import { upstreamRequest } from '../../gateway/request-body.js';
import { SseSplitter, sseData } from '../../gateway/sse-splitter.js';
import { StreamObserver } from '../../gateway/stream-observer.js';
import { carriesOutput, usageOf } from '../../gateway/usage-fields.js';
import { NO_GENERATION_SETTINGS } from '../../runs/generation.js';

describe('the route allow-list', () => {
  it.each([
    ['POST', '/v1/chat/completions', '/chat/completions'],
    ['POST', '/v1/completions', '/completions'],
    ['POST', '/v1/embeddings', '/embeddings'],
    ['POST', '/v1/responses', '/responses'],
    ['GET', '/v1/models', '/models'],
    ['GET', '/v1/models/gpt-4o', '/models/gpt-4o'],
    ['GET', '/v1/models/meta-llama/Llama-3.1-8B', '/models/meta-llama/Llama-3.1-8B'],
    ['POST', '/v1/chat/completions?api-version=1', '/chat/completions'],
    ['POST', '/v1/chat/%63ompletions', '/chat/completions'],
  ])('allows %s %s, sent upstream as %s', (method, target, upstreamPath) => {
    expect(checkRoute(method, target)).toMatchObject({ allowed: true, route: { upstreamPath } });
  });

  it.each([
    ['POST', '/v1/fine_tuning/jobs'],
    ['DELETE', '/v1/files/file-abc'],
    ['GET', '/v1/files'],
    ['POST', '/v1/..%2f..%2fadmin'],
    ['POST', '/v1/..%2Ffiles'],
    ['POST', '/v1/chat/..%5cfiles'],
    ['POST', '/v1/chat/completions/../../files'],
    ['POST', '/v1/%2e%2e/v1/files'],
    ['POST', '/v1/./chat/completions'],
    ['POST', '/v1//chat/completions'],
    ['POST', '/v1/chat/completions/'],
    ['GET', '/v1/chat/completions'],
    ['POST', '/v1/models'],
    ['DELETE', '/v1/models/ft:gpt-4o:org:custom'],
    ['GET', '/v1/models/..'],
    ['POST', '/chat/completions'],
    ['POST', '/v2/chat/completions'],
    ['POST', 'http://evil/v1/chat/completions'],
    ['POST', '/v1/chat/completions%'],
  ])('refuses %s %s and names what it forwards', (method, target) => {
    const check = checkRoute(method, target);
    expect(check.allowed).toBe(false);
    expect(check.allowed ? '' : check.reason).toContain('it forwards POST /v1/chat/completions');
  });

  it('re-encodes a model id segment by segment, so a double-encoded slash stays data', () => {
    expect(checkRoute('GET', '/v1/models/a%252fb')).toMatchObject({ allowed: true, route: { upstreamPath: '/models/a%252fb' } });
  });
});

describe('surgical JSON edits', () => {
  const edit = (text: string, after: (body: Record<string, unknown>) => Record<string, unknown>) => {
    const before = JSON.parse(text) as Record<string, unknown>;
    return applyJsonEdits(text, diffJsonObjects(before, after(before)));
  };

  it('changes only the overridden field: big integers, 1.0 and spacing elsewhere survive', () => {
    const text = '{ "seed": 9007199254740993, "temperature": 1.0,\n  "max_tokens": 32, "x": [1e2, {"y": 0.10}] }';
    expect(edit(text, (b) => ({ ...b, max_tokens: 42 }))).toBe(
      '{ "seed": 9007199254740993, "temperature": 1.0,\n  "max_tokens": 42, "x": [1e2, {"y": 0.10}] }',
    );
  });

  // An added member is written as jsonc-parser writes one: `"key": value`.
  it('adds a missing field at the end and a nested field inside an existing object', () => {
    const text = '{"a":1.50,"stream_options":{"n":12345678901234567890}}';
    expect(edit(text, (b) => ({ ...b, stream_options: { ...(b.stream_options as object), include_usage: true }, seed: 7 }))).toBe(
      '{"a":1.50,"stream_options":{"n":12345678901234567890,"include_usage": true},"seed": 7}',
    );
    expect(edit('{}', () => ({ seed: 7 }))).toBe('{"seed": 7}');
    expect(edit(' {\n} ', () => ({ seed: 7 }))).toBe(' {"seed": 7\n} ');
  });

  it('deletes a field with its comma wherever it stands', () => {
    expect(edit('{"a":1,"b":2,"c":3}', ({ b: _, ...rest }) => rest)).toBe('{"a":1,"c":3}');
    expect(edit('{"a":1,"b":2,"c":3}', ({ c: _, ...rest }) => rest)).toBe('{"a":1,"b":2}');
    expect(edit('{"a":1}', () => ({}))).toBe('{}');
    expect(edit('{"a":1,"b":2}', (b) => ({ ...b, b: undefined, c: undefined }))).toBe('{"a":1}');
  });

  // JSON.parse reads the last of duplicate keys; jsonc-parser would edit the first, an override the
  // upstream never sees. The earlier duplicates go, so every parser reads the edited one.
  it('edits the last of duplicate keys, the one JSON.parse reads, and drops the earlier ones', () => {
    expect(edit('{"t":0,"t":0.5}', (b) => ({ ...b, t: 1 }))).toBe('{"t":1}');
    expect(edit('{"t":0,"x":1,"t":0.5,"t":2}', (b) => ({ ...b, t: 1 }))).toBe('{"x":1,"t":1}');
    expect(edit('{"t":0,"x":1,"t":0.5}', ({ t: _, ...rest }) => rest)).toBe('{"x":1}');
    expect(edit('{"o":{"a":1},"o":{"b":2}}', (b) => ({ ...b, o: { ...(b.o as object), c: 3 } }))).toBe('{"o":{"b":2,"c": 3}}');
  });

  it('skips strings holding braces, quotes and escapes when finding fields', () => {
    const text = '{"messages":[{"content":"} \\" {\\"max_tokens\\": 1 ]"}],"max_tokens":5}';
    expect(edit(text, (b) => ({ ...b, max_tokens: 6 }))).toBe('{"messages":[{"content":"} \\" {\\"max_tokens\\": 1 ]"}],"max_tokens":6}');
  });
});

describe('the body sent upstream', () => {
  const raw = (text: string) => Buffer.from(text);

  it('is the client bytes themselves when nothing overrides a field', () => {
    const body = raw('{"model":"m", "seed": 9007199254740993, "temperature": 1.0}');
    const request = upstreamRequest('chat/completions', body, NO_GENERATION_SETTINGS);
    expect(request.ok && request.payload).toBe(body);
  });

  it('asks for stream usage by editing only stream_options, and says to strip the usage event', () => {
    const request = upstreamRequest('chat/completions', raw('{"model":"m","stream":true,"seed":9007199254740993}'), NO_GENERATION_SETTINGS);
    expect(request).toMatchObject({ ok: true, stream: true, stripUsageEvent: true, model: 'm' });
    expect(request.ok && request.payload.toString()).toBe('{"model":"m","stream":true,"seed":9007199254740993,"stream_options": {"include_usage":true}}');
    const asked = upstreamRequest('chat/completions', raw('{"stream":true,"stream_options":{"include_usage":true}}'), NO_GENERATION_SETTINGS);
    expect(asked).toMatchObject({ ok: true, stripUsageEvent: false });
  });

  it('applies generation settings to those fields only', () => {
    const request = upstreamRequest('chat/completions', raw('{"seed": 9007199254740993, "top_p": 1.0, "max_tokens": 32}'), {
      set: { temperature: 0 },
      maxTokensAdd: 10,
    });
    expect(request.ok && request.payload.toString()).toBe('{"seed": 9007199254740993, "top_p": 1.0, "max_tokens": 42,"temperature": 0}');
  });

  it('leaves Responses and embeddings bodies alone, streamed or not', () => {
    const body = raw('{"model":"m","input":"hi","stream":true}');
    const request = upstreamRequest('responses', body, { set: { temperature: 0 } });
    expect(request).toMatchObject({ ok: true, stream: true, stripUsageEvent: false });
    expect(request.ok && request.payload).toBe(body);
  });

  it.each([
    ['null', 'got null'],
    ['[{"model":"m"}]', 'got an array'],
    ['42', 'got a number'],
    ['"text"', 'got a string'],
    ['', 'got an empty body'],
    ['{"model":', 'not valid JSON'],
  ])('refuses %j: %s', (text, problem) => {
    const request = upstreamRequest('chat/completions', raw(text), NO_GENERATION_SETTINGS);
    expect(request.ok).toBe(false);
    expect(request.ok ? '' : request.message).toContain(problem);
  });
});

describe('SSE framing on bytes', () => {
  const split = (chunks: Array<string | Buffer>) => {
    const splitter = new SseSplitter();
    const events = chunks.flatMap((c) => splitter.push(Buffer.isBuffer(c) ? c : Buffer.from(c)).map((e) => e.toString()));
    return { events, rest: splitter.end().toString() };
  };

  it('ends events at LF LF, CRLF CRLF and CR CR, with their exact bytes', () => {
    expect(split(['data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d']).events).toEqual(['data: a\n\n', 'data: b\r\n\r\n', 'data: c\r\r']);
    expect(split(['data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d']).rest).toBe('data: d');
  });

  it('waits on a CR that ends a chunk, so a CRLF split across writes is not two line ends', () => {
    expect(split(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual({ events: ['data: a\r\ndata: b\r\n\r\n'], rest: '' });
  });

  it('keeps a UTF-8 character whole when the upstream splits it across writes', () => {
    const bytes = Buffer.from('data: {"c":"é€😀"}\n\n');
    const { events } = split([bytes.subarray(0, 16), bytes.subarray(16, 19), bytes.subarray(19)]);
    expect(events).toEqual(['data: {"c":"é€😀"}\n\n']);
  });

  it('reads data lines as the spec does: one optional space, joined with LF, comments skipped', () => {
    expect(sseData(': keep-alive\r\nevent: x\r\ndata:{"a":\r\ndata:  1}\r\n\r\n')).toBe('{"a":\n 1}');
    expect(sseData('event: ping\n\n')).toBeUndefined();
    expect(sseData('data\n\n')).toBe('');
  });
});

describe('the stream observer', () => {
  const usageChunk = 'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}\r\n\r\n';
  const contentChunk = 'data: {"choices":[{"delta":{"content":"h\u00e9"}}]}\r\n\r\n';

  it('drops the usage event it asked for, byte for byte around it, and meters it', () => {
    const observer = new StreamObserver(performance.now(), { dropUsageEvent: true, stripThinking: false });
    const all = Buffer.from(contentChunk + usageChunk + 'data: [DONE]\r\n\r\n');
    const out = [observer.feed(all.subarray(0, 33)), observer.feed(all.subarray(33, 120)), observer.feed(all.subarray(120)), observer.end()];
    expect(Buffer.concat(out).toString()).toBe(contentChunk + 'data: [DONE]\r\n\r\n');
    expect(observer.usage).toEqual({ promptTokens: 7, completionTokens: 3 });
    expect(observer.firstTokenAt).toBeGreaterThanOrEqual(0);
  });

  it('forwards every chunk as it came when nothing is to be dropped', () => {
    const observer = new StreamObserver(performance.now(), { dropUsageEvent: false, stripThinking: false });
    const all = Buffer.from(contentChunk + usageChunk);
    const parts = [all.subarray(0, 40), all.subarray(40)];
    expect(parts.map((p) => observer.feed(p))).toEqual(parts);
    expect(observer.end().length).toBe(0);
    expect(observer.usage?.promptTokens).toBe(7);
  });

  it("meters the Responses API's streamed response.completed event", () => {
    const observer = new StreamObserver(performance.now(), { dropUsageEvent: false, stripThinking: false });
    observer.feed(Buffer.from('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\n'));
    observer.feed(
      Buffer.from(
        'event: response.completed\ndata: {"type":"response.completed","response":{"usage":{"input_tokens":11,"output_tokens":4,"total_tokens":15}}}\n\n',
      ),
    );
    expect(observer.usage).toEqual({ promptTokens: 11, completionTokens: 4 });
    expect(observer.firstTokenAt).toBeDefined();
  });
});

describe('usage fields', () => {
  it('reads chat, embeddings and Responses usage, and the upstream cost when given', () => {
    expect(usageOf({ usage: { prompt_tokens: 5, completion_tokens: 2, cost: 0.01 } })).toEqual({ promptTokens: 5, completionTokens: 2, cost: 0.01 });
    expect(usageOf({ usage: { prompt_tokens: 5, total_tokens: 5 } })).toEqual({ promptTokens: 5, completionTokens: 0 });
    expect(usageOf({ object: 'response', usage: { input_tokens: 9, output_tokens: 1 } })).toEqual({ promptTokens: 9, completionTokens: 1 });
    expect(usageOf({ choices: [], usage: null })).toBeUndefined();
    expect(usageOf([1])).toBeUndefined();
  });

  it('marks output in chat deltas, completion text and Responses delta events, not in role-only chunks', () => {
    expect(carriesOutput({ choices: [{ delta: { role: 'assistant' } }] })).toBe(false);
    expect(carriesOutput({ choices: [{ delta: { reasoning_content: 'hm' } }] })).toBe(true);
    expect(carriesOutput({ choices: [{ text: 'x' }] })).toBe(true);
    expect(carriesOutput({ type: 'response.created', response: {} })).toBe(false);
    expect(carriesOutput({ type: 'response.output_text.delta', delta: 'x' })).toBe(true);
  });
});

// The stages of one call through the gateway (gateway/gateway-stages.ts), each alone: where a call goes, the body
// it sends upstream, which answers are retried and how the run's limit learns from them, relaying a whole or a
// streamed answer, and the transcript line a call ends with. No server, no network.

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { answerVerdict, callTarget, preparedBody, relayStream, relayWhole, transcriptLine } from '../../gateway/gateway-stages.js';
import { NO_GENERATION_SETTINGS } from '../../runs/generation.js';
import { unansweredSample } from '../../runs/usage.js';

const settings = { generation: NO_GENERATION_SETTINGS, maxBodyBytes: 1024 };
const ANSWER = {
  choices: [{ message: { role: 'assistant', content: '<think>2 + 2</think>4' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 7, completion_tokens: 3 },
};

describe('a call through the gateway, stage by stage', () => {
  it('goes to an allowed route with the query the job sent, or is refused with 404 before its body is read', () => {
    expect(callTarget('POST', '/v1/chat/completions?api-version=1')).toEqual({
      ok: true,
      endpoint: 'chat/completions',
      pathAndQuery: '/chat/completions?api-version=1',
    });
    expect(callTarget('DELETE', '/v1/files/x')).toMatchObject({ ok: false, status: 404, type: 'not_found' });
  });

  it('sends a POST body with the run settings applied, no body for a GET, and refuses an oversized or malformed one', () => {
    const sent = preparedBody('POST', 'chat/completions', Buffer.from('{"model":"m","messages":[]}'), settings);
    expect(sent).toMatchObject({ ok: true, request: { model: 'm', stream: false, truncated: false } });
    expect(preparedBody('GET', 'models', Buffer.alloc(0), settings)).toEqual({ ok: true });
    expect(preparedBody('POST', 'chat/completions', undefined, settings)).toEqual({
      ok: false,
      status: 413,
      message: 'request body over 1024 bytes',
      type: 'request_too_large',
    });
    expect(preparedBody('POST', 'chat/completions', Buffer.from('{"model":'), settings)).toMatchObject({
      ok: false,
      status: 400,
      type: 'invalid_request_error',
    });
  });

  it.each([
    // status, Retry-After, retries so far: retry, throttle the run's limit, count as succeeded, count as throttled
    [200, undefined, 0, { retry: false, throttle: false, succeeded: true, throttled: false }],
    [400, undefined, 0, { retry: false, throttle: false, succeeded: true, throttled: false }],
    [429, undefined, 0, { retry: true, throttle: true, succeeded: false, throttled: true }],
    [429, undefined, 5, { retry: false, throttle: true, succeeded: false, throttled: true }],
    [503, undefined, 1, { retry: true, throttle: false, succeeded: false, throttled: false }],
    [503, '2', 1, { retry: true, throttle: true, succeeded: false, throttled: false }],
  ] as const)('answers %s (Retry-After %s, after %s retries of 5): %o', (status, retryAfter, retries, verdict) => {
    expect(answerVerdict(status, retryAfter, retries, 5)).toEqual(verdict);
  });

  it('relays a whole answer with its usage read, its thinking noted and, asked to, stripped; an error as it came', () => {
    const body = Buffer.from(JSON.stringify(ANSWER));
    const kept = relayWhole(200, body, false);
    expect(kept.forwarded).toBe(body);
    expect(kept.usage).toMatchObject({ promptTokens: 7, completionTokens: 3 });
    const stripped = relayWhole(200, body, true);
    expect(JSON.parse(stripped.forwarded.toString()).choices[0].message.content).toBe('4');
    expect(stripped.answer()).toMatchObject({ choices: [{ message: { content: '4' } }] });
    const refused = relayWhole(500, Buffer.from('upstream broke'), true);
    expect(refused.usage).toBeUndefined();
    expect(refused.endedInThinking).toBe(0);
    expect(refused.forwarded.toString()).toBe('upstream broke');
  });

  it('relays a stream event by event, drops the usage-only event it asked for, and reassembles it for the transcript', async () => {
    const events = [
      { choices: [{ index: 0, delta: { role: 'assistant', content: 'The answer' } }] },
      { choices: [{ index: 0, delta: { content: ' is 4.' }, finish_reason: 'stop' }] },
      { choices: [], usage: { prompt_tokens: 5, completion_tokens: 4 } },
    ];
    const chunks = [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n'].map((t) => Buffer.from(t));
    const out = new PassThrough();
    const received: Buffer[] = [];
    out.on('data', (chunk: Buffer) => received.push(chunk));
    const relayed = await relayStream(chunks, out, performance.now(), { dropUsageEvent: true, stripThinking: false }, true);
    const text = Buffer.concat(received).toString();
    expect(text).toContain('The answer');
    expect(text).not.toContain('prompt_tokens');
    expect(relayed.forwarded.toString()).toBe(text);
    expect(relayed.usage).toMatchObject({ promptTokens: 5, completionTokens: 4 });
    expect(relayed.ttftMs).toBeGreaterThanOrEqual(0);
    expect(relayed.answer()).toMatchObject({ choices: [{ message: { content: 'The answer is 4.' } }] });
  });

  it('ends with a transcript line of what was sent and answered, with usage only for an answered call', () => {
    const at = new Date('2026-12-05T10:00:00Z');
    const sent = Buffer.from('{"model":"m"}');
    const answered = transcriptLine(
      { seq: 3, at, instance: '7', path: '/v1/chat/completions', sent },
      { ...unansweredSample(200, 12.34567), promptTokens: 5, completionTokens: 2, cost: 0.5 },
      { response: { ok: true } },
    );
    expect(answered).toEqual({
      seq: 3,
      at: '2026-12-05T10:00:00.000Z',
      instance: '7',
      path: '/v1/chat/completions',
      status: 200,
      latency_ms: 12.346,
      request: { model: 'm' },
      response: { ok: true },
      usage: { prompt_tokens: 5, completion_tokens: 2, cost: 0.5 },
    });
    expect(transcriptLine({ seq: 4, at, path: '/v1/x' }, unansweredSample(404, 1), { error: 'no' })).toEqual({
      seq: 4,
      at: '2026-12-05T10:00:00.000Z',
      path: '/v1/x',
      status: 404,
      latency_ms: 1,
      error: 'no',
    });
  });
});

// What the gateway learns from a streamed answer as it passes through (gateway/stream-observer.ts): the
// time to the first generated token, the usage the upstream reports, and dropping the usage-only event
// that the gateway, not the client, asked for. Everything else reaches the client unchanged.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { StreamObserver } from '../../gateway/stream-observer.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const event = (data: unknown) => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const roleOnly = event({ choices: [{ delta: { role: 'assistant' } }] });
const token = (text: string) => event({ choices: [{ delta: { content: text } }] });
const usageOnly = event({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 3 } });
const done = event('[DONE]');

/** Feeds the chunks and returns every byte the observer forwarded, `end()` included. */
function passThrough(observer: StreamObserver, chunks: string[]): string {
  const out = chunks.map((chunk) => Buffer.from(observer.feed(Buffer.from(chunk))));
  return Buffer.concat([...out, Buffer.from(observer.end())]).toString('utf8');
}

describe('StreamObserver', () => {
  it('forwards a stream byte for byte when nothing is to be dropped, however it is chunked', () => {
    const stream = roleOnly + token('Hel') + token('lo') + usageOnly + done;
    for (const size of [1, 7, 64, stream.length]) {
      const chunks = stream.match(new RegExp(`[^]{1,${size}}`, 'g'))!;
      expect(passThrough(new StreamObserver(0, { dropUsageEvent: false, stripThinking: false }), chunks), `chunks of ${size}`).toBe(stream);
    }
  });

  it('drops only the usage-only event it asked for and still meters it', () => {
    const observer = new StreamObserver(0, { dropUsageEvent: true, stripThinking: false });
    expect(passThrough(observer, [roleOnly + token('Hi'), usageOnly.slice(0, 10), usageOnly.slice(10) + done])).toBe(roleOnly + token('Hi') + done);
    expect(observer.usage).toEqual({ promptTokens: 12, completionTokens: 3 });
  });

  it('keeps a final chunk that carries both a token and usage, since the client needs the token', () => {
    const last = event({ choices: [{ delta: { content: '!' } }], usage: { prompt_tokens: 5, completion_tokens: 1 } });
    const observer = new StreamObserver(0, { dropUsageEvent: true, stripThinking: false });
    expect(passThrough(observer, [token('Hi') + last + done])).toBe(token('Hi') + last + done);
    expect(observer.usage).toEqual({ promptTokens: 5, completionTokens: 1 });
  });

  it('times the first token from the first chunk with generated text, not from a role-only chunk', () => {
    const now = vi.spyOn(performance, 'now');
    const observer = new StreamObserver(1000, { dropUsageEvent: false, stripThinking: false });
    now.mockReturnValue(1100);
    observer.feed(Buffer.from(roleOnly));
    expect(observer.firstTokenAt).toBeUndefined();
    now.mockReturnValue(1250);
    observer.feed(Buffer.from(token('Hel')));
    now.mockReturnValue(1900);
    observer.feed(Buffer.from(token('lo')));
    expect(observer.firstTokenAt).toBe(250);
  });

  it('counts reasoning text and legacy completion text as the first token', () => {
    const now = vi.spyOn(performance, 'now').mockReturnValue(40);
    const reasoning = new StreamObserver(0, { dropUsageEvent: false, stripThinking: false });
    reasoning.feed(Buffer.from(event({ choices: [{ delta: { reasoning_content: 'thinking' } }] })));
    const legacy = new StreamObserver(10, { dropUsageEvent: false, stripThinking: false });
    legacy.feed(Buffer.from(event({ choices: [{ text: 'Hi' }] })));
    expect([reasoning.firstTokenAt, legacy.firstTokenAt]).toEqual([40, 30]);
    expect(now).toHaveBeenCalled();
  });

  it('passes comments and data that is not JSON through untouched, without metering them', () => {
    const odd = ': keep-alive\n\n' + event('not json {') + done;
    const observer = new StreamObserver(0, { dropUsageEvent: true, stripThinking: false });
    expect(passThrough(observer, [odd])).toBe(odd);
    expect(observer.usage).toBeUndefined();
    expect(observer.firstTokenAt).toBeUndefined();
  });
});

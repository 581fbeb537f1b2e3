// What the model gateway forwards, byte for byte, and what it meters, against a scripted upstream: a
// small HTTP server in this file that records the exact bytes it receives and streams events ended
// by CRLF CRLF with UTF-8 characters split across writes.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ModelGateway, type GatewayRoute } from '../../gateway/model-gateway.js';
import { BUILT_IN_PRICES } from '../../gateway/price-table.js';
import type { GenerationSettings } from '../../runs/generation.js';

interface Received {
  method: string;
  url: string;
  authorization?: string;
  body: Buffer;
}

const received: Received[] = [];
let upstream: http.Server;
let upstreamUrl: string;
let scratch: string;

/** The stream the scripted upstream sends, as the writes it makes them in: é and 😀 are cut in two. */
const role = 'data: {"choices":[{"delta":{"role":"assistant"}}]}\r\n\r\n';
const first = 'data: {"choices":[{"delta":{"content":"h\u00e9llo \u20ac"}}]}\r\n\r\n';
const second = 'data: {"choices":[{"delta":{"content":" \u{1F600}"}}]}\r\n\r\n';
const usage = 'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5}}\r\n\r\n';
const done = 'data: [DONE]\r\n\r\n';
const STALL_MS = 400;

const responsesStream = [
  'event: response.created\ndata: {"type":"response.created","response":{"status":"in_progress","usage":null}}\n\n',
  'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\n',
  'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":21,"output_tokens":6,"total_tokens":27}}}\n\n',
];

/** Writes pieces of bytes with a pause between them, so each reaches the gateway as its own read. */
async function writeSlowly(res: http.ServerResponse, pieces: Buffer[], pauseMs = 15): Promise<void> {
  for (const piece of pieces) {
    res.write(piece);
    await new Promise((r) => setTimeout(r, pauseMs));
  }
}

function cut(text: string, inside: string): Buffer[] {
  const bytes = Buffer.from(text);
  const at = bytes.indexOf(Buffer.from(inside)) + 1; // one byte into a multi-byte character
  return [bytes.subarray(0, at), bytes.subarray(at)];
}

async function script(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): Promise<void> {
  const url = req.url ?? '';
  const text = body.toString();
  if (url === '/v1/chat/completions' && text.includes('"stream":true')) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    await writeSlowly(res, [Buffer.from(role), ...cut(first, '\u00e9')]);
    await new Promise((r) => setTimeout(r, STALL_MS));
    await writeSlowly(res, [...cut(second, '\u{1F600}'), ...(text.includes('"include_usage":true') ? cut(usage, '"usage"') : []), ...cut(done, '\r\n\r\n')]);
    return void res.end();
  }
  if (url === '/v1/responses') {
    if (text.includes('"model":"missing"'))
      return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such model","type":"invalid_request_error"}}');
    if (text.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await writeSlowly(
        res,
        responsesStream.map((e) => Buffer.from(e)),
      );
      return void res.end();
    }
    return void res
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"object":"response","output":[],"usage":{"input_tokens":9,"output_tokens":3,"total_tokens":12}}');
  }
  if (url.startsWith('/v1/models')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[{"id":"m"}]}');
  // Anything else, chat included: echo the exact bytes received, with usage to meter.
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: text, usage: { prompt_tokens: 4, completion_tokens: 2 } }));
}

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-gateway-forwarding-'));
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body });
      void script(req, res, body);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

let gateway: ModelGateway;
let port: number;
beforeEach(async () => {
  received.length = 0;
  gateway = new ModelGateway('forwarding-secret');
  port = await gateway.listen(0, '127.0.0.1');
});
afterEach(async () => {
  await gateway.close();
});

let jobs = 0;
function register(generation: GenerationSettings = { set: {} }): { token: string; counters: () => ReturnType<ModelGateway['unregister']> } {
  const jobId = `job-${++jobs}`;
  const route: GatewayRoute = {
    jobId,
    runId: 'run-forwarding',
    role: 'model',
    upstream: { baseUrl: upstreamUrl, apiKey: 'sk-real-key' },
    generation,
    prices: BUILT_IN_PRICES,
    limits: { concurrency: 4, maxRetries: 2 },
    usageFile: path.join(scratch, jobId, 'usage-model.json'),
  };
  return { token: gateway.register(route), counters: () => gateway.unregister(jobId, 'model') };
}

interface Answer {
  status: number;
  contentType?: string;
  body: Buffer;
  /** Milliseconds from the request to the first body bytes, and to the end. */
  firstBytesMs?: number;
  endMs: number;
}

/** A raw HTTP call: the path goes out exactly as written (fetch would resolve `..` itself). */
function send(method: string, target: string, token: string, body?: string | Buffer): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: target,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...(body !== undefined ? { 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let firstBytesMs: number | undefined;
        res.on('data', (c: Buffer) => {
          firstBytesMs ??= performance.now() - started;
          chunks.push(c);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            body: Buffer.concat(chunks),
            firstBytesMs,
            endMs: performance.now() - started,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const errorOf = (answer: Answer) => (JSON.parse(answer.body.toString()) as { error: { message: string; type: string } }).error;

describe('the routes the gateway forwards', () => {
  it('answers a JSON 404 to every route off the allow-list, and the upstream never sees one of them', async () => {
    const { token, counters } = register();
    const refused: Array<[string, string]> = [
      ['POST', '/v1/fine_tuning/jobs'],
      ['DELETE', '/v1/files/file-abc'],
      ['GET', '/v1/files'],
      ['POST', '/v1/..%2f..%2fadmin'],
      ['POST', '/v1/chat/completions/../../files'],
      ['POST', '/v1/%2e%2e/files'],
      ['GET', '/v1/chat/completions'],
      ['DELETE', '/v1/models/ft:gpt-4o:org:custom'],
    ];
    for (const [method, target] of refused) {
      const answer = await send(method, target, token, method === 'GET' ? undefined : '{"model":"m"}');
      expect(answer.status, `${method} ${target}`).toBe(404);
      expect(answer.contentType).toBe('application/json');
      expect(errorOf(answer)).toMatchObject({ type: 'not_found', message: expect.stringContaining(`${method} ${target.split('?')[0]}`) });
    }
    expect(received).toEqual([]);
    expect(counters()).toMatchObject({ requests: refused.length, errors: { '404': refused.length } });
  });

  it('forwards the model listing and a model by a slashed id, with the real key, and meters both', async () => {
    const { token, counters } = register();
    expect((await send('GET', '/v1/models', token)).status).toBe(200);
    expect((await send('GET', '/v1/models/meta-llama/Llama-3.1-8B', token)).status).toBe(200);
    expect(received.map((r) => [r.method, r.url, r.authorization])).toEqual([
      ['GET', '/v1/models', 'Bearer sk-real-key'],
      ['GET', '/v1/models/meta-llama/Llama-3.1-8B', 'Bearer sk-real-key'],
    ]);
    expect(counters()).toMatchObject({ requests: 2, errors: {} });
  });
});

describe('the request body the upstream receives', () => {
  const body =
    '{ "model": "m",\n  "seed": 9007199254740993, "temperature": 1.0, "logit_bias": {"50256": -100.00},\n  "messages": [{"role": "user", "content": "caf\u00e9 } \\" {"}], "max_tokens": 32 }';

  it('is the client bytes exactly when no override applies', async () => {
    const { token } = register();
    const answer = await send('POST', '/v1/chat/completions', token, body);
    expect(answer.status).toBe(200);
    expect(received[0]!.body.equals(Buffer.from(body))).toBe(true);
    expect((JSON.parse(answer.body.toString()) as { echo: string }).echo).toBe(body);
  });

  it('changes only the overridden fields when generation settings apply; other numbers keep their spelling', async () => {
    const { token } = register({ set: { top_p: 0.5 }, maxTokensAdd: 10 });
    await send('POST', '/v1/chat/completions', token, body);
    expect(received[0]!.body.toString()).toBe(body.replace('"max_tokens": 32 }', '"max_tokens": 42,"top_p": 0.5 }'));
  });

  it.each([
    ['null', 'got null'],
    ['[{"model":"m"}]', 'got an array'],
    ['7', 'got a number'],
    ['{"model": "m",', 'not valid JSON'],
    ['', 'got an empty body'],
  ])('refuses %j with a 400 that names the problem, without calling upstream or retrying', async (text, problem) => {
    const { token, counters } = register();
    const answer = await send('POST', '/v1/chat/completions', token, text);
    expect(answer.status).toBe(400);
    expect(errorOf(answer)).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining(problem) });
    expect(received).toEqual([]);
    expect(counters()).toMatchObject({ requests: 1, retries: 0, errors: { '400': 1 } });
  });
});

describe('a streamed answer', () => {
  const question = '{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}';

  it('reaches the client with the exact upstream bytes minus the usage event the gateway asked for, as it streams', async () => {
    const { token, counters } = register();
    const answer = await send('POST', '/v1/chat/completions', token, question);
    expect(answer.status).toBe(200);
    // The split é, € and 😀 arrive whole (no U+FFFD), CRLF CRLF endings untouched, no usage event.
    expect(answer.body.toString()).toBe(role + first + second + done);
    expect(answer.body.equals(Buffer.from(role + first + second + done))).toBe(true);
    // The first events were forwarded before the upstream's pause, not held until the end.
    expect(answer.firstBytesMs!).toBeLessThan(answer.endMs - STALL_MS / 2);
    expect(received[0]!.body.toString()).toBe(question.replace(/}$/, ',"stream_options": {"include_usage":true}}'));

    const metered = counters()!;
    expect(metered).toMatchObject({ requests: 1, promptTokens: 12, completionTokens: 5, errors: {} });
    expect(metered.ttftMs.count).toBe(1);
    // TTFT is the first content event, before the pause: CRLF-ended events are recognised as they come.
    expect(metered.ttftMs.sum).toBeLessThan(metered.latencyMs.sum - STALL_MS / 2);
  });

  it('keeps the usage event, byte for byte, for a client that asked for it', async () => {
    const { token, counters } = register();
    const asked = question.replace(/}$/, ',"stream_options":{"include_usage":true}}');
    const answer = await send('POST', '/v1/chat/completions', token, asked);
    expect(answer.body.equals(Buffer.from(role + first + second + usage + done))).toBe(true);
    expect(received[0]!.body.equals(Buffer.from(asked))).toBe(true);
    expect(counters()).toMatchObject({ requests: 1, promptTokens: 12, completionTokens: 5 });
  });
});

describe('metering the Responses API', () => {
  it('counts input_tokens / output_tokens, streamed or not, and an upstream 404 as an error, never as silence', async () => {
    const { token, counters } = register();
    const plain = await send('POST', '/v1/responses', token, '{"model":"gpt-4o","input":"hi"}');
    expect(plain.status).toBe(200);
    const streamed = await send('POST', '/v1/responses', token, '{"model":"gpt-4o","input":"hi","stream":true}');
    expect(streamed.body.toString()).toBe(responsesStream.join(''));
    const missing = await send('POST', '/v1/responses', token, '{"model":"missing","input":"hi"}');
    expect(missing.status).toBe(404);
    expect(received.map((r) => r.body.toString())).toEqual([
      '{"model":"gpt-4o","input":"hi"}',
      '{"model":"gpt-4o","input":"hi","stream":true}',
      '{"model":"missing","input":"hi"}',
    ]);

    const metered = counters()!;
    expect(metered).toMatchObject({ requests: 3, promptTokens: 9 + 21, completionTokens: 3 + 6, errors: { '404': 1 } });
    expect(metered.ttftMs.count).toBe(1);
    const price = BUILT_IN_PRICES['gpt-4o']!;
    expect(metered.cost).toBeCloseTo((30 * price.input + 9 * price.output) / 1e6, 12);
  });
});

describe('usage snapshots', () => {
  const routeTo = (jobId: string, usageFile: string): GatewayRoute => ({
    jobId,
    runId: 'run-snapshots',
    role: 'model',
    upstream: { baseUrl: upstreamUrl, apiKey: 'sk-real-key' },
    generation: { set: {} },
    prices: BUILT_IN_PRICES,
    limits: { concurrency: 1, maxRetries: 0 },
    usageFile,
  });

  it('a snapshot that cannot be written is said, naming the file, and does not throw out of the gateway', async () => {
    const blocked = new ModelGateway('snapshot-secret');
    await blocked.listen(0, '127.0.0.1');
    // A regular file where the job's directory belongs: no snapshot under it can be written.
    const notADir = path.join(scratch, 'not-a-dir');
    writeFileSync(notADir, '');
    const route = routeTo('job-unsaved', path.join(notADir, 'usage-model.json'));
    blocked.register(route);
    const said = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // close() takes a last snapshot of every live route, as the 2-second timer does.
      await expect(blocked.close()).resolves.toBeUndefined();
      expect(said.mock.calls.map((call) => String(call[0]))).toEqual([
        expect.stringContaining(`cannot save the usage of job job-unsaved (model) to ${route.usageFile}: EEXIST`),
      ]);
    } finally {
      said.mockRestore();
    }
  });

  it('a usage file that is not the JSON the gateway writes is refused by name when the route is registered again', () => {
    const usageFile = path.join(scratch, 'job-corrupt', 'usage-model.json');
    mkdirSync(path.dirname(usageFile), { recursive: true });
    writeFileSync(usageFile, '{"counters": {"requests": 3');
    expect(() => new ModelGateway('snapshot-secret').register(routeTo('job-corrupt', usageFile))).toThrow(
      `${usageFile}: expected the JSON usage snapshot the gateway writes`,
    );
  });
});

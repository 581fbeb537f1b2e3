// The deterministic reference model: its answer rule (FNV-1a hash of the expression against the
// accuracy in the model name), its scores on the arith demo data, and its OpenAI-compatible server.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedArithScore, readArithProblems, scoreArithReply } from '../../reference-model/expected-score.js';
import { countTokens, fnv1a32, parseAccuracy, referenceAnswer } from '../../reference-model/reference-answer.js';
import { startReferenceModel } from '../../reference-model/reference-model-server.js';
import type { ReferenceModelServer } from '../../reference-model/reference-model-server.js';

const run = promisify(execFile);
const ARITH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../benchmarks/arith');
const ARITH_TASKS = ['addition', 'multiplication'];
const RECORD_FIELDS = ['index', 'origin_query', 'prompt', 'prediction', 'ground_truth', 'score', 'prompt_tokens', 'completion_tokens', 'cost', 'raw_output'];

describe('reference answer (pure)', () => {
  it('fnv1a32 matches the standard FNV-1a 32-bit test vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('fnv1a32 hashes the UTF-8 bytes, not UTF-16 code units', () => {
    // "é" is 0xC3 0xA9 in UTF-8.
    let expected = 0x811c9dc5;
    for (const byte of [0xc3, 0xa9]) expected = Math.imul(expected ^ byte, 0x01000193) >>> 0;
    expect(fnv1a32('é')).toBe(expected);
  });

  it('reads the accuracy from acc<N> in the model name and defaults to 100', () => {
    expect(parseAccuracy('reference')).toBe(100);
    expect(parseAccuracy('gpt-4o')).toBe(100);
    expect(parseAccuracy('reference-acc80')).toBe(80);
    expect(parseAccuracy('reference-acc0')).toBe(0);
    expect(parseAccuracy('reference-acc100-fail429x2')).toBe(100);
  });

  it('rejects an accuracy above 100 with a message naming the model', () => {
    expect(() => parseAccuracy('reference-acc101')).toThrow(/reference-acc101.*0 to 100/);
  });

  it('answers the first expression, truncating division toward zero', () => {
    expect(referenceAnswer('reference', 'What is 37 + 58? And 1 + 1?')).toBe('The answer is 95.');
    expect(referenceAnswer('reference', 'What is 7 × 13?')).toBe('The answer is 91.');
    expect(referenceAnswer('reference', 'What is 7 x 13?')).toBe('The answer is 91.');
    expect(referenceAnswer('reference', 'What is 10 - -3?')).toBe('The answer is 13.');
    expect(referenceAnswer('reference', 'What is -7 / 2?')).toBe('The answer is -3.');
    expect(referenceAnswer('reference', 'What is 5 / 0?')).toBe('The answer is undefined.');
    expect(referenceAnswer('reference', 'Tell me a joke.')).toBe("I don't know.");
  });

  it('a wrong answer is the correct one plus 1', () => {
    expect(referenceAnswer('reference-acc0', 'What is 37 + 58?')).toBe('The answer is 96.');
    expect(referenceAnswer('reference-acc0', 'What is 5 / 0?')).toBe('The answer is 0.');
  });

  it('decides correctness from the hash of the normalized expression', () => {
    const bucket = fnv1a32('37 + 58') % 100;
    expect(referenceAnswer(`m-acc${bucket + 1}`, 'What is 37+58?')).toBe('The answer is 95.');
    expect(referenceAnswer(`m-acc${bucket}`, 'What is 037 +   58?')).toBe('The answer is 96.');
  });

  it('a sampled model answers the k-th asking of a question as draw k; a plain one ignores the draw', () => {
    const asked = 'What is 37 + 58?';
    const draws = Array.from({ length: 12 }, (_, draw) => referenceAnswer('m-acc50-sampled', asked, draw));
    expect(new Set(draws)).toEqual(new Set(['The answer is 95.', 'The answer is 96.']));
    expect(draws.map((answer, draw) => answer === (fnv1a32(`37 + 58#${draw}`) % 100 < 50 ? 'The answer is 95.' : 'The answer is 96.'))).not.toContain(false);
    expect(new Set(Array.from({ length: 5 }, (_, draw) => referenceAnswer('m-acc50', asked, draw))).size).toBe(1);
  });

  it('counts tokens as words plus punctuation characters', () => {
    expect(countTokens('The answer is 95.')).toBe(5);
    expect(countTokens("I don't know.")).toBe(5);
    expect(countTokens('   ')).toBe(0);
  });
});

describe('arith demo data', () => {
  it('reference answers every demo problem correctly', () => {
    for (const task of ARITH_TASKS) {
      for (const problem of readArithProblems(ARITH_DIR, task)) {
        expect(scoreArithReply(referenceAnswer('reference', problem.question), problem.answer), problem.question).toBe(true);
      }
    }
    expect(expectedArithScore(ARITH_DIR, 'reference')).toEqual({ perTask: { addition: 1, multiplication: 1 }, overall: 1 });
  });

  it('reference-acc80 is below 100% on each task and the tasks score differently', () => {
    const { perTask, overall } = expectedArithScore(ARITH_DIR, 'reference-acc80');
    expect(perTask).toEqual({ addition: 0.85, multiplication: 0.75 });
    expect(overall).toBeCloseTo(0.8, 12);
  });
});

describe('reference model server', () => {
  let server: ReferenceModelServer;

  beforeAll(async () => {
    server = await startReferenceModel();
  });
  afterAll(async () => {
    await server.close();
  });

  async function post(path: string, body: unknown, init: RequestInit = {}): Promise<Response> {
    return fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer test-key' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...init,
    });
  }

  async function runEvalArith(task: string, model: string, env: Record<string, string> = {}) {
    const outputDir = await mkdtemp(join(tmpdir(), 'arith-'));
    try {
      const { stdout } = await run('python3', [join(ARITH_DIR, 'eval_arith.py'), '--problems', 'problems.jsonl'], {
        cwd: join(ARITH_DIR, 'tasks', task),
        env: {
          PATH: process.env['PATH'] ?? '',
          BENCHROUTER_MODEL_ENDPOINT: server.url,
          BENCHROUTER_MODEL_NAME: model,
          BENCHROUTER_API_KEY: 'sk-arith',
          BENCHROUTER_OUTPUT_DIR: outputDir,
          ...env,
        },
      });
      const result = JSON.parse(await readFile(join(outputDir, 'result.json'), 'utf8')) as Record<string, number>;
      const records = (await readFile(join(outputDir, 'records.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      return { stdout, result, records };
    } finally {
      await rm(outputDir, { recursive: true, force: true });
    }
  }

  it('lists the reference models', async () => {
    const response = await fetch(`${server.url}/models`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { object: string; data: { id: string }[] };
    expect(body.object).toBe('list');
    expect(body.data.map((model) => model.id)).toEqual(['reference', 'reference-acc80', 'reference-acc50']);
  });

  it('answers the last user message in OpenAI chat format and records the request', async () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is 1 + 1?' },
      { role: 'assistant', content: 'The answer is 2.' },
      { role: 'user', content: [{ type: 'text', text: 'What is 37 + 58?' }] },
    ];
    const before = server.requests.length;
    const response = await post('/chat/completions', { model: 'reference', messages });
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe('reference');
    expect(body.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'The answer is 95.' }, finish_reason: 'stop' });
    const promptTokens = countTokens(['Be brief.', 'What is 1 + 1?', 'The answer is 2.', 'What is 37 + 58?'].join('\n'));
    expect(body.usage).toEqual({ prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5 });

    const recorded = server.requests[before];
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: 'Bearer test-key' },
      body: { model: 'reference', messages },
    });
  });

  it('serves a sampled model draw after draw: the same question asked again is answered afresh, in order', async () => {
    const ask = async () =>
      (
        (await (
          await post('/chat/completions', { model: 'reference-acc50-sampled-server', messages: [{ role: 'user', content: 'What is 12 * 7?' }] })
        ).json()) as any
      ).choices[0].message.content;
    const answers = [await ask(), await ask(), await ask(), await ask()];
    expect(answers).toEqual([0, 1, 2, 3].map((draw) => referenceAnswer('reference-acc50-sampled-server', 'What is 12 * 7?', draw)));
  });

  it('for reference-acc80, eval_arith.py scores exactly the accuracy computed from the data', async () => {
    const expected = expectedArithScore(ARITH_DIR, 'reference-acc80');
    for (const task of ARITH_TASKS) {
      const before = server.requests.length;
      const { stdout, result, records } = await runEvalArith(task, 'reference-acc80');
      const total = readArithProblems(ARITH_DIR, task).length;
      expect(result).toEqual({ accuracy: expected.perTask[task], correct: expected.perTask[task]! * total, total });
      expect(records).toHaveLength(total);
      for (const record of records) expect(Object.keys(record).sort()).toEqual([...RECORD_FIELDS].sort());
      expect(records.reduce((sum, record) => sum + (record['score'] as number), 0)).toBe(result['correct']);
      expect(stdout).toContain(`5/${total}`);

      const seen = server.requests.slice(before);
      expect(seen).toHaveLength(total);
      expect(seen[0]).toMatchObject({
        path: '/v1/chat/completions',
        headers: { authorization: 'Bearer sk-arith' },
        body: { model: 'reference-acc80', temperature: 0, max_tokens: 32 },
      });
    }
  });

  it('eval_arith.py retries through injected 429s and still scores exactly', async () => {
    const expected = expectedArithScore(ARITH_DIR, 'reference-acc80-fail429x2');
    const before = server.requests.length;
    const { result } = await runEvalArith('addition', 'reference-acc80-fail429x2');
    expect(result['accuracy']).toBe(expected.perTask['addition']);
    expect(server.requests.length - before).toBe(20 + 2);
  });

  it('eval_arith.py exits non-zero naming a missing environment variable', async () => {
    const failure = await run('python3', [join(ARITH_DIR, 'eval_arith.py'), '--problems', 'problems.jsonl'], {
      cwd: join(ARITH_DIR, 'tasks', 'addition'),
      env: { PATH: process.env['PATH'] ?? '', BENCHROUTER_MODEL_NAME: 'reference' },
    }).catch((error: unknown) => error as { code: number; stderr: string });
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toMatch(/missing required environment variable.*BENCHROUTER_MODEL_ENDPOINT/);
  });

  it('streams chat chunks that concatenate to the non-streamed content, with a usage chunk when asked', async () => {
    const request = { model: 'reference-acc50', messages: [{ role: 'user', content: 'What is 12 * 34?' }] };
    const plain = (await (await post('/chat/completions', request)).json()) as any;

    const streamed = await post('/chat/completions', { ...request, stream: true, stream_options: { include_usage: true } });
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const events = parseSse(await streamed.text());
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as any);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const contentChunks = chunks.filter((chunk) => chunk.choices[0]?.delta?.content);
    expect(contentChunks.length).toBeGreaterThanOrEqual(2);
    expect(contentChunks.length).toBeLessThanOrEqual(3);
    expect(contentChunks.map((chunk) => chunk.choices[0].delta.content).join('')).toBe(plain.choices[0].message.content);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: plain.usage });

    const withoutUsage = parseSse(await (await post('/chat/completions', { ...request, stream: true })).text());
    expect(
      withoutUsage
        .slice(0, -1)
        .map((event) => JSON.parse(event))
        .some((chunk: any) => chunk.usage),
    ).toBe(false);
  });

  it('serves text completions, streamed and not, with the same answers', async () => {
    const plain = (await (await post('/completions', { model: 'reference', prompt: 'What is 7 x 6?' })).json()) as any;
    expect(plain).toMatchObject({ object: 'text_completion', choices: [{ index: 0, text: 'The answer is 42.', finish_reason: 'stop' }] });

    const events = parseSse(await (await post('/completions', { model: 'reference', prompt: 'What is 7 x 6?', stream: true })).text());
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event) as any);
    expect(chunks.map((chunk) => chunk.choices[0].text).join('')).toBe('The answer is 42.');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  it('answers 429 with Retry-After: 0 for the first K chat requests of a fail429x<K> model', async () => {
    const model = `reference-fail429x2-${Date.now()}`;
    const request = { model, messages: [{ role: 'user', content: 'What is 2 + 2?' }] };
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await post('/chat/completions', request);
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe('0');
      expect(((await response.json()) as any).error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    }
    const third = await post('/chat/completions', request);
    expect(third.status).toBe(200);
    expect(((await third.json()) as any).choices[0].message.content).toBe('The answer is 4.');
    // The count is per exact model name.
    expect((await post('/chat/completions', { ...request, model: `${model}-other` })).status).toBe(429);
  });

  it('delays the response by delay<MS>', async () => {
    const started = performance.now();
    const response = await post('/chat/completions', { model: 'reference-delay150', messages: [{ role: 'user', content: '1 + 1' }] });
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('returns deterministic 16-dimensional unit embeddings, as floats or base64', async () => {
    const embed = async (input: unknown, extra: object = {}) =>
      ((await (await post('/embeddings', { model: 'reference', input, ...extra })).json()) as any).data.map((item: { embedding: unknown }) => item.embedding);
    const [first] = (await embed('hello')) as number[][];
    const [again, other] = (await embed(['hello', 'world'])) as number[][];
    expect(first).toHaveLength(16);
    expect(Math.hypot(...first!)).toBeCloseTo(1, 10);
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);

    const [encoded] = (await embed('hello', { encoding_format: 'base64' })) as string[];
    const decoded = Array.from(new Float32Array(new Uint8Array(Buffer.from(encoded!, 'base64')).buffer));
    decoded.forEach((value, index) => expect(value).toBeCloseTo(first![index]!, 6));
  });

  it('answers an unknown path with a 404 OpenAI-style error', async () => {
    const response = await fetch(`${server.url}/nope`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.message).toContain('/v1/nope');
  });

  it('answers malformed JSON with a 400 OpenAI-style error', async () => {
    const response = await post('/chat/completions', '{"model": ');
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('rejects an invalid accuracy in the model name with a 400', async () => {
    const response = await post('/chat/completions', { model: 'reference-acc150', messages: [{ role: 'user', content: '1 + 1' }] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.message).toMatch(/acc150/);
  });

  it('rejects a body over 1 MB with a 413', async () => {
    const response = await post('/chat/completions', { model: 'reference', padding: 'x'.repeat(1024 * 1024) });
    expect(response.status).toBe(413);
  });
});

function parseSse(text: string): string[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

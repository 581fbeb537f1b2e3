// The model gateway: metering, retries, streaming, caching, overrides, judge and tokens, against
// the reference model. Whole runs use the real dev server, worker and Docker; the streaming and
// token cases talk to a real gateway over HTTP directly.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelGateway, type GatewayRoute } from '../gateway/model-gateway.js';
import { BUILT_IN_PRICES } from '../gateway/price-table.js';
import { loadTokenizerFile, middleTruncate } from '../gateway/prompt-truncation.js';
import { expectedArithScore } from '../reference-model/expected-score.js';
import type { RunResult } from '../runs/run-spec.js';
import { br, fixturesDir, repoRoot, startHarness, type Harness } from './support/harness.js';

const arithDir = path.join(repoRoot, 'benchmarks', 'arith');

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('gateway');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-gateway-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const chatRequestsOf = (model: string) => h.model.requests.filter((r) => r.path === '/v1/chat/completions' && (r.body as { model?: string }).model === model);

describe('a run through the gateway', () => {
  it('meters tokens and cost equal to what the reference model returned, call by call', async () => {
    const model = 'reference-acc80';
    const before = chatRequestsOf(model).length;
    const run = await h.run(arithDir, { model });
    const answered = chatRequestsOf(model).slice(before);

    expect(run.status).toBe('COMPLETED');
    expect(run.overall).toBe(expectedArithScore(arithDir, model).overall);
    const promptTokens = answered.reduce((sum, r) => sum + r.usage!.prompt_tokens, 0);
    const completionTokens = answered.reduce((sum, r) => sum + r.usage!.completion_tokens, 0);
    const price = BUILT_IN_PRICES.reference!;
    expect(run.usage!.model).toMatchObject({ requests: 40, promptTokens, completionTokens, errors: {}, retries: 0 });
    expect(run.usage!.model.cost).toBeCloseTo((promptTokens * price.input + completionTokens * price.output) / 1e6, 12);
    for (const job of run.jobs) {
      expect(job.usage!.model.requests).toBe(20);
      expect(job.usage!.model.latencyMs!.p50).toBeGreaterThan(0);
    }
    // The container never saw the upstream: every request the model received came from the gateway.
    expect(answered.every((r) => r.headers.authorization === 'Bearer EMPTY')).toBe(true);
  });

  it('takes the cost the upstream reports when it reports one', async () => {
    const model = 'reference-acc80-cost';
    const before = chatRequestsOf(model).length;
    const run = await h.run(arithDir, { model, tasks: ['addition'] });
    const reported = chatRequestsOf(model)
      .slice(before)
      .reduce((sum, r) => sum + r.usage!.cost!, 0);
    expect(reported).toBeGreaterThan(0);
    expect(run.usage!.model.cost).toBeCloseTo(reported, 12);
  });

  it('retries 429 answers from the upstream, counts them, and the run still succeeds', async () => {
    const model = 'reference-acc80-fail429x3';
    const run = await h.run(arithDir, { model, tasks: ['addition'] });
    expect(run.status).toBe('COMPLETED');
    expect(run.jobs[0]!.result!.overall).toBe(expectedArithScore(arithDir, model).perTask.addition);
    expect(run.usage!.model).toMatchObject({ requests: 20, retries: 3, throttled: 3, errors: {} });
  });

  it('applies generation overrides to the body the upstream receives, and records them in the run', async () => {
    const model = 'reference-overrides';
    const before = chatRequestsOf(model).length;
    const run = await h.run(arithDir, { model, tasks: ['addition'], gen: { temperature: 0.7, seed: 11 }, maxTokensAdd: 10, thinking: false });
    expect(run.status).toBe('COMPLETED');
    for (const request of chatRequestsOf(model).slice(before)) {
      // eval_arith.py asks for temperature 0 and max_tokens 32.
      expect(request.body).toMatchObject({ temperature: 0.7, seed: 11, max_tokens: 42, chat_template_kwargs: { enable_thinking: false } });
    }
  });

  it("middle-truncates each prompt over --truncation-tokens with the model's tokenizer, and the run says how many", async () => {
    const model = 'reference-truncated';
    const tokenizerFile = path.join(fixturesDir, 'tokenizer', 'tiny-bpe.json');
    const before = chatRequestsOf(model).length;
    const run = await h.run(arithDir, { model, tasks: ['addition'], truncationTokens: 6, tokenizer: tokenizerFile });
    expect(run.status).toBe('COMPLETED');

    // What eval_arith.py sends as the user message, and what the gateway must make of it.
    const questions = readFileSync(path.join(arithDir, 'tasks', 'addition', 'problems.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { question: string }).question);
    const { tokenizer } = loadTokenizerFile(tokenizerFile);
    const expected = questions.map((q) => middleTruncate(tokenizer, q, 6) ?? q);
    // Python's tokenizers, on the same file: 16 tokens, the first 3 and last 3 of which decode to these.
    expect(expected[0]).toBe('Wha42?');
    expect(expected.filter((text, i) => text !== questions[i])).toHaveLength(20);

    const received = chatRequestsOf(model).slice(before);
    const userTexts = received.map((r) => (r.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === 'user')!.content);
    expect(userTexts.sort()).toEqual([...expected].sort());
    // The system prompt is not the prompt: it reaches the model as eval_arith.py wrote it.
    const systems = new Set(received.map((r) => (r.body as { messages: Array<{ role: string; content: string }> }).messages[0]!.content));
    expect(systems.size).toBe(1);
    expect(run.usage!.model.truncated).toBe(20);
    expect(run.jobs[0]!.usage!.model.truncated).toBe(20);
  });

  it("gives each instance the harness tags its own figures, meters a reasoning model's thinking and, with --strip-thinking, hides it", async () => {
    const run = await h.run(arithDir, { model: 'reference-thinking', tasks: ['addition'], stripThinking: true });
    expect(run.status).toBe('COMPLETED');
    expect(run.overall).toBe(1);
    // Each of the 20 answers thought 8 words: the upstream said so in completion_tokens_details.
    expect(run.usage!.model).toMatchObject({ requests: 20, reasoningTokens: 160 });
    expect(run.usage!.model.endedInThinking).toBeUndefined();
    const printed = await br(['records', run.runId, '--json'], h.env);
    expect(printed.code).toBe(0);
    const records = printed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { raw_output: string; completion_tokens: number; gateway: Record<string, number> });
    expect(records).toHaveLength(20);
    for (const record of records) {
      // arith records the text it was given: the answer, its thinking gone.
      expect(record.raw_output).toMatch(/^The answer is -?\d+\.$/);
      expect(record.gateway).toMatchObject({ calls: 1, errors: 0, reasoning_tokens: 8, completion_tokens: record.completion_tokens });
    }
    expect(records.reduce((sum, r) => sum + r.gateway.prompt_tokens!, 0)).toBe(run.usage!.model.promptTokens);

    // 40 words of thinking under arith's max_tokens of 32: every answer is cut off inside it, and scores 0.
    const cut = await h.run(arithDir, { model: 'reference-thinking40', tasks: ['addition'] });
    expect(cut.overall).toBe(0);
    expect(cut.usage!.model).toMatchObject({ requests: 20, endedInThinking: 20, reasoningTokens: 20 * 32 });
    const cutRecords = (await br(['records', cut.runId, '--json'], h.env)).stdout.trim().split('\n');
    expect(cutRecords.map((line) => (JSON.parse(line) as { gateway: { ended_in_thinking?: number } }).gateway.ended_in_thinking)).toEqual(Array(20).fill(1));
  });

  it('with --cache, a rerun makes zero upstream requests and gives identical results', async () => {
    const model = 'reference-acc80-cached';
    const first = await br(['run', arithDir, '--model', model, '--endpoint', h.model.url, '--cache', '--json'], h.env);
    expect(first.code).toBe(0);
    const original = JSON.parse(first.stdout);
    expect(original.usage.model).toMatchObject({ cacheHits: 0, cacheMisses: 40 });
    const upstreamCalls = chatRequestsOf(model).length;

    const again = await br(['rerun', original.runId, '--json'], h.env);
    expect(again.code).toBe(0);
    const rerun = JSON.parse(again.stdout);
    expect(chatRequestsOf(model).length).toBe(upstreamCalls);
    expect(rerun.usage.model).toMatchObject({ requests: 40, cacheHits: 40, cacheMisses: 0, cost: 0 });
    expect(rerun.overall).toBe(original.overall);
    expect(rerun.jobs.map((j: { result: unknown }) => j.result)).toEqual(original.jobs.map((j: { result: unknown }) => j.result));
  });

  it('with --cache, repeats resample (each makes its own calls) and a rerun replays every repeat as it was', async () => {
    // A sampled model answers each asking of a question afresh; one job at a time, repeat k asks each question the k-th time.
    const model = 'reference-acc50-sampled-cached';
    const args = ['--model', model, '--endpoint', h.model.url, '--cache', '--repeats', '3', '--concurrency', '1', '--json'];
    const first = await br(['run', arithDir, ...args], h.env);
    expect(first.code, first.stderr).toBe(0);
    const original = JSON.parse(first.stdout) as RunResult;
    const scores = (run: RunResult) => run.jobs.map((j) => [j.task, j.repeat, j.result?.overall]);
    const expected = [0, 1, 2].flatMap((repeat) =>
      Object.entries(expectedArithScore(arithDir, model, repeat).perTask).map(([task, score]) => [task, repeat, score]),
    );
    expect(scores(original)).toEqual(expected);
    // The spread is a real one: per-repeat means 0.425, 0.475 and 0.7 (with one cache shared by repeats it was 0).
    expect(original.overallStd).toBeCloseTo(Math.sqrt(((0.425 - 0.5333) ** 2 + (0.475 - 0.5333) ** 2 + (0.7 - 0.5333) ** 2) / 2), 3);
    expect(original.usage!.model).toMatchObject({ requests: 120, cacheHits: 0, cacheMisses: 120 });
    const upstreamCalls = chatRequestsOf(model).length;

    const again = await br(['rerun', original.runId, '--json'], h.env);
    expect(again.code, again.stderr).toBe(0);
    const rerun = JSON.parse(again.stdout) as RunResult;
    expect(chatRequestsOf(model).length).toBe(upstreamCalls);
    expect(rerun.usage!.model).toMatchObject({ requests: 120, cacheHits: 120, cacheMisses: 0 });
    expect(scores(rerun)).toEqual(expected);
  });

  it('gives a benchmark a judge through the optional variables, metered on its own', async () => {
    const run = await h.run(path.join(fixturesDir, 'benchmarks', 'judge-probe'), {
      model: 'reference',
      judgeModel: 'reference-judge',
      judgeEndpoint: h.model.url,
    });
    expect(run.jobs[0]).toMatchObject({ status: 'SUCCEEDED', result: { overall: 1, raw_metrics: { judge_model: 'reference-judge' } } });
    expect(run.usage!.model.requests).toBe(1);
    expect(run.usage!.judge!.requests).toBe(1);
  });
});

describe('the gateway itself', () => {
  const route = (jobId: string): GatewayRoute => ({
    jobId,
    runId: 'run-direct',
    role: 'model',
    upstream: { baseUrl: h.model.url, apiKey: 'sk-upstream-only' },
    generation: { set: {} },
    prices: BUILT_IN_PRICES,
    limits: { concurrency: 4, maxRetries: 2 },
    usageFile: path.join(scratch, jobId, 'usage-model.json'),
  });
  const chat = (url: string, token: string, body: object) =>
    fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });

  it('passes a streamed answer through intact, measures TTFT, and keeps its own usage request out of the stream', async () => {
    const gateway = new ModelGateway('test-secret');
    const port = await gateway.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}/v1`;
    try {
      const token = gateway.register(route('stream-job'));
      const question = { model: 'reference', messages: [{ role: 'user', content: 'What is 12 + 30?' }] };
      const plain = (await (await chat(url, token, question)).json()) as { choices: Array<{ message: { content: string } }> };

      const streamed = await (await chat(url, token, { ...question, stream: true })).text();
      const events = streamed
        .split('\n\n')
        .filter(Boolean)
        .map((e) => e.replace(/^data: /, ''));
      expect(events.at(-1)).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { choices: Array<{ delta: { content?: string } }>; usage?: unknown });
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(plain.choices[0]!.message.content);
      // The gateway asked the upstream for usage; the client did not, so it gets no usage event.
      expect(chunks.every((c) => c.choices.length > 0 && !c.usage)).toBe(true);

      const withUsage = await (await chat(url, token, { ...question, stream: true, stream_options: { include_usage: true } })).text();
      expect(withUsage).toContain('"usage":{"prompt_tokens"');

      const counters = gateway.unregister('stream-job', 'model')!;
      expect(counters.requests).toBe(3);
      expect(counters.ttftMs.count).toBe(2);
      expect(counters.completionTokens).toBeGreaterThan(0);
      expect(h.model.requests.filter((r) => r.headers.authorization === 'Bearer sk-upstream-only').length).toBeGreaterThanOrEqual(3);
    } finally {
      await gateway.close();
    }
  });

  it('streams /v1/completions intact too, and meters them', async () => {
    const gateway = new ModelGateway('test-secret');
    const port = await gateway.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}/v1`;
    try {
      const token = gateway.register(route('completions-job'));
      const complete = (body: object) =>
        fetch(`${url}/completions`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
        });
      const question = { model: 'reference', prompt: 'What is 9 * 9?' };
      const plain = (await (await complete(question)).json()) as { choices: Array<{ text: string }> };
      const streamed = await (await complete({ ...question, stream: true })).text();
      const chunks = streamed
        .split('\n\n')
        .filter((e) => e && e !== 'data: [DONE]')
        .map((e) => JSON.parse(e.replace(/^data: /, '')) as { choices: Array<{ text: string }> });
      expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe(plain.choices[0]!.text);
      expect(plain.choices[0]!.text).toBe('The answer is 81.');
      const counters = gateway.unregister('completions-job', 'model')!;
      expect(counters.requests).toBe(2);
      expect(counters.ttftMs.count).toBe(1);
    } finally {
      await gateway.close();
    }
  });

  it('strips thinking from whole and streamed answers alike, and counts the thinking tokens of both', async () => {
    const gateway = new ModelGateway('test-secret');
    const port = await gateway.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}/v1`;
    try {
      const token = gateway.register({ ...route('thinking-job'), generation: { set: {}, stripThinking: true } });
      const question = { model: 'reference-thinking', messages: [{ role: 'user', content: 'What is 12 + 30?' }] };
      const whole = (await (await chat(url, token, question)).json()) as { choices: Array<{ message: { content: string } }> };
      expect(whole.choices[0]!.message.content).toBe('The answer is 42.');
      const streamed = await (await chat(url, token, { ...question, stream: true })).text();
      const text = streamed
        .split('\n\n')
        .filter((e) => e && e !== 'data: [DONE]')
        .map((e) => (JSON.parse(e.replace(/^data: /, '')) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '')
        .join('');
      expect(text).toBe('The answer is 42.');
      expect(gateway.unregister('thinking-job', 'model')).toMatchObject({ requests: 2, reasoningTokens: 16 });
    } finally {
      await gateway.close();
    }
  });

  it('answers 401 to a wrong token and to a token whose job has ended', async () => {
    const gateway = new ModelGateway('test-secret');
    const port = await gateway.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}/v1`;
    try {
      const question = { model: 'reference', messages: [{ role: 'user', content: 'What is 1 + 1?' }] };
      expect((await chat(url, 'brj-not-a-real-token', question)).status).toBe(401);
      const token = gateway.register(route('ending-job'));
      expect((await chat(url, token, question)).status).toBe(200);
      gateway.unregister('ending-job', 'model');
      const after = await chat(url, token, question);
      expect(after.status).toBe(401);
      expect(((await after.json()) as { error: { type: string } }).error.type).toBe('invalid_api_key');
    } finally {
      await gateway.close();
    }
  });

  it("answers a retryable 503 (Retry-After), not a 401, to a job's token before its route is restored after a restart, and 401 once the grace is over", async () => {
    const question = { model: 'reference', messages: [{ role: 'user', content: 'What is 3 + 4?' }] };
    const restarted = new ModelGateway('restore-secret');
    const url = `http://127.0.0.1:${await restarted.listen(0, '127.0.0.1')}/v1`;
    try {
      const token = restarted.tokenFor('restoring-job', 'model');
      const early = await chat(url, token, question);
      expect(early.status).toBe(503);
      expect(early.headers.get('retry-after')).toBe('5');
      expect(((await early.json()) as { error: { type: string } }).error.type).toBe('gateway_restoring');
      restarted.register(route('restoring-job'));
      expect((await chat(url, token, question)).status).toBe(200);
    } finally {
      await restarted.close();
    }
    const graceOver = new ModelGateway('restore-secret', 0);
    const lateUrl = `http://127.0.0.1:${await graceOver.listen(0, '127.0.0.1')}/v1`;
    try {
      expect((await chat(lateUrl, graceOver.tokenFor('never-restored-job', 'model'), question)).status).toBe(401);
    } finally {
      await graceOver.close();
    }
  });

  it('re-issues the same token for a job after a restart, and carries on counting', async () => {
    const first = new ModelGateway('host-secret');
    const token = first.register(route('restart-job'));
    await first.listen(0, '127.0.0.1').then(async (port) => {
      await chat(`http://127.0.0.1:${port}/v1`, token, { model: 'reference', messages: [{ role: 'user', content: 'What is 2 + 2?' }] });
    });
    await first.close(); // saves the job's counters

    const second = new ModelGateway('host-secret');
    expect(second.register(route('restart-job'))).toBe(token);
    expect(second.unregister('restart-job', 'model')!.requests).toBe(1);
    expect(new ModelGateway('other-host').tokenFor('restart-job', 'model')).not.toBe(token);
  });
});

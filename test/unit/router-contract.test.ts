// The router contract's pure parts: router.yaml's problems, what the exported input holds (no test
// outcome leaves BenchRouter) and how choices.jsonl is read and scored.

import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashedTfidfEmbedder } from '../../analysis/hashed-tfidf-embedder.js';
import { buildQueryPool } from '../../analysis/query-pool.js';
import { parseRouterChoices, RouterChoicesError } from '../../analysis/router-choices.js';
import { queryId, writeRouterInput } from '../../analysis/router-input.js';
import { analyzeRouting } from '../../analysis/routing-analysis.js';
import { splitQueries } from '../../analysis/train-test-split.js';
import { builtinRouterDirs, inspectRouter } from '../../contract/load-router.js';
import { cachedEmbedder, embeddingCacheFile } from '../../analysis/embedding-cache.js';
import { embedViaEndpoint, openAiEmbedder } from '../../analysis/openai-embeddings-client.js';
import { startReferenceModel } from '../../reference-model/reference-model-server.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-router-unit-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Two models on 20 queries: a answers the even ones, b the odd ones; b costs twice as much.
const records = Array.from({ length: 20 }, (_, index) =>
  (['a', 'b'] as const).map((model) => ({
    benchmark: 'quiz/easy',
    model,
    index,
    prompt: `q${index}`,
    score: (index % 2 === 0) === (model === 'a') ? 1 : 0,
    cost: model === 'a' ? 1 : 2,
  })),
).flat();
const pool = buildQueryPool(records);
const split = splitQueries(pool, { seed: 42, trainRatio: 0.5, splitUnit: 'instance' });
const right = (row: number) => (Number(pool.queryIndex[row]) % 2 === 0 ? 'a' : 'b');

function router(dir: string, yaml: string, dockerfile = true): string {
  const where = path.join(scratch, dir);
  mkdirSync(where, { recursive: true });
  writeFileSync(path.join(where, 'router.yaml'), yaml);
  if (dockerfile) writeFileSync(path.join(where, 'Dockerfile'), 'FROM benchrouter/base:bookworm\n');
  return where;
}

describe('router.yaml', () => {
  it('names the file and field of every problem', () => {
    const dir = router('bad', 'name: Bad\ncommand: 3\nneeds: {embedings: true}\ntimeout: -1\n', false);
    const messages = inspectRouter(dir).problems.map((p) => `${path.basename(p.file)}: ${p.field}: ${p.message}`);
    expect(messages).toEqual([
      'router.yaml: name: expected a lower-case name of letters, digits, ".", "_" or "-", got "Bad"',
      'router.yaml: command: expected a shell command string, got 3',
      'router.yaml: timeout: expected a positive number of seconds, got -1',
      'router.yaml: needs: unknown field "embedings"',
      'Dockerfile: : file not found: a router directory is its image build context and needs a Dockerfile',
    ]);
  });

  it('fills the defaults', () => {
    const { router: loaded, problems } = inspectRouter(router('good', 'name: good\ncommand: python3 route.py\n'));
    expect(problems).toEqual([]);
    expect(loaded).toMatchObject({
      name: 'good',
      timeoutSeconds: 3600,
      needs: { embeddings: false, costs: false, pair: false },
      resources: { memory: '2g', cpus: 1, pids: 512 },
    });
  });

  it('every built-in router directory (one per method trained here) keeps the contract', () => {
    const dirs = builtinRouterDirs();
    expect(dirs.map((d) => path.basename(d))).toEqual(['embedllm', 'frugalgpt', 'graphrouter', 'hybridllm', 'knn', 'routellm', 'routerdc']);
    for (const dir of dirs) expect(inspectRouter(dir).problems, dir).toEqual([]);
  });
});

describe('router input', () => {
  it('holds the training records in LLMRouterBench layout and the test queries without any score', () => {
    const dir = path.join(scratch, 'input');
    const manifest = writeRouterInput(dir, pool, split, { seed: 42, trainRatio: 0.5, splitUnit: 'instance', embeddingsModel: null });
    expect(manifest).toMatchObject({ models: ['a', 'b'], datasets: ['quiz/easy'], train_queries: 10, test_queries: 10 });
    expect(readdirSync(path.join(dir, 'results', 'bench', 'quiz', 'easy')).sort()).toEqual(['a', 'b']);
    const file = path.join(dir, 'results', 'bench', 'quiz', 'easy', 'a', readdirSync(path.join(dir, 'results', 'bench', 'quiz', 'easy', 'a'))[0]!);
    const body = JSON.parse(readFileSync(file, 'utf8')) as { model_name: string; records: Array<{ id: string; score: number }> };
    expect(body.model_name).toBe('a');
    expect(body.records.map((r) => r.id)).toEqual(Array.from(split.train, (row) => queryId(pool, row)));
    const test = readFileSync(path.join(dir, 'test.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(test.map((q) => q['id'])).toEqual(Array.from(split.test, (row) => queryId(pool, row)));
    for (const q of test) expect(Object.keys(q).sort()).toEqual(['dataset', 'id', 'index', 'prompt']);
    expect(readdirSync(dir)).toContain('routing_io.py');
  });
});

describe('choices.jsonl', () => {
  const lines = (pick: (row: number) => string, extra = '') =>
    Array.from(split.test, (row) => JSON.stringify({ id: queryId(pool, row), model: pick(row) })).join('\n') + extra;

  it('is scored like any method: the right model everywhere is the Oracle, at its cost', async () => {
    const perfect = parseRouterChoices(lines(right), 'choices.jsonl', pool, split.test, 'mine', 1.5);
    const report = await analyzeRouting(pool, { seed: 42, trainRatio: 0.5, k: 2, nInit: 1 }, hashedTfidfEmbedder({ dim: 16 }), undefined, [perfect]);
    const mine = report.methods.find((m) => m.name === 'mine')!;
    const oracle = report.methods.find((m) => m.name === 'Oracle')!;
    expect(mine).toMatchObject({ kind: 'router', acc: 1, cost: oracle.cost, gapToOracle: 0, trainSeconds: 1.5 });
  });

  it('turns settings into a cost-aware row: always a is half right at half the price', async () => {
    const withSettings = lines(right, `\n${Array.from(split.test, (row) => JSON.stringify({ id: queryId(pool, row), model: 'a', setting: 0 })).join('\n')}\n`);
    const parsed = parseRouterChoices(withSettings, 'choices.jsonl', pool, split.test, 'mine', null);
    const report = await analyzeRouting(pool, { seed: 42, trainRatio: 0.5, k: 2, nInit: 1 }, hashedTfidfEmbedder({ dim: 16 }), undefined, [parsed]);
    const sweep = report.costAware.find((r) => r.name === 'mine (cost settings)')!;
    const a = report.models.find((m) => m.model === 'a')!;
    expect(sweep.settings).toEqual([{ alpha: 0, acc: a.acc, cost: a.cost, onFrontier: true }]);
  });

  it('refuses unknown ids and models, second choices and missing queries, naming file and line', () => {
    const first = queryId(pool, split.test[0]!);
    const bad = [
      JSON.stringify({ id: 'nope:1', model: 'a' }),
      JSON.stringify({ id: first, model: 'c' }),
      JSON.stringify({ id: first, model: 'a' }),
      JSON.stringify({ id: first, model: 'b' }),
      JSON.stringify({ id: first, model: 'a', setting: 'cheap' }),
      'not json',
    ].join('\n');
    let error: RouterChoicesError | undefined;
    try {
      parseRouterChoices(bad, 'out/choices.jsonl', pool, split.test, 'mine', null);
    } catch (e) {
      error = e as RouterChoicesError;
    }
    expect(error).toBeInstanceOf(RouterChoicesError);
    expect(error!.problems.map((p) => `${p.file}: ${p.field}: ${p.message}`)).toEqual([
      'out/choices.jsonl:1: id: "nope:1" is not a test query of this split',
      'out/choices.jsonl:2: model: expected one of the pool\'s models (a, b), got "c"',
      `out/choices.jsonl:4: id: a second choice for "${first}"`,
      'out/choices.jsonl:5: setting: expected a number (α, a threshold…), got "cheap"',
      expect.stringMatching(/^out\/choices\.jsonl:6: : not valid JSON/),
      `out/choices.jsonl: : 9 of 10 test queries have no choice (the first: "${queryId(pool, split.test[1]!)}")`,
    ]);
  });
});

describe('embeddings by text hash', () => {
  it('a rerun makes no call and gives the same vectors; a repeated text is embedded once', async () => {
    const server = await startReferenceModel({ port: 0, recordRequests: true });
    try {
      const file = embeddingCacheFile(path.join(scratch, 'embeddings'), 'embed-small');
      const stats: Array<{ cached: number; embedded: number }> = [];
      const embedder = () => cachedEmbedder(openAiEmbedder({ endpoint: server.url, model: 'embed-small', batchSize: 2 }), file, (s) => stats.push(s));
      const texts = ['one', 'two', 'one', 'three'];
      const first = await embedder().embed(texts, new Int32Array());
      const calls = server.requests.filter((r) => r.path === '/v1/embeddings').length;
      expect(calls).toBe(2);
      const second = await embedder().embed([...texts, 'four'], new Int32Array());
      expect(server.requests.filter((r) => r.path === '/v1/embeddings').length).toBe(calls + 1);
      expect(stats).toEqual([
        { cached: 1, embedded: 3 },
        { cached: 4, embedded: 1 },
      ]);
      expect(second.data.subarray(0, 4 * first.dim)).toEqual(first.data);
    } finally {
      await server.close();
    }
  });

  it('a failed call is an error naming the query, never a zero vector', async () => {
    const server = await startReferenceModel({ port: 0 });
    const url = server.url;
    await server.close();
    await expect(embedViaEndpoint(['alpha', 'beta', 'gamma'], { endpoint: url, model: 'm', batchSize: 2, attempts: 1 })).rejects.toThrow(
      /^embedding query 0 \(prompt "alpha"\) and 1 more in its batch failed: /,
    );
  });
});

// Reading LLMRouterBench's release layout: the newest file per (dataset, split, model) by its
// timestamp suffix, demo files skipped, null scores as 0, and queries missing for a model dropped.

import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { modelOutcomeSchema, parseModelOutcome } from '../../analysis/model-outcome.js';
import { loadLlmRouterBench } from '../../analysis/load-llmrouterbench.js';
import { timestampOf } from '../../analysis/llmrouterbench-file.js';
import { buildQueryPool } from '../../analysis/query-pool.js';
import { InputError } from '../../contract/problems.js';

const fixture = path.join(import.meta.dirname, '..', 'fixtures', 'llmrouterbench');
const bench = path.join(fixture, 'results', 'bench');

describe('loadLlmRouterBench', () => {
  let load: Awaited<ReturnType<typeof loadLlmRouterBench>>;
  beforeAll(async () => {
    load = await loadLlmRouterBench(fixture);
  });

  it('uses the newest non-demo file per (dataset, split, model), in path order', () => {
    expect(load.files.map((f) => path.relative(bench, f))).toEqual([
      'codey/test/model-a/codey-test-model-a-20250115_000000.json',
      'codey/test/model-b/codey-test-model-b-20250116_000000.json',
      'mathx/test/model-a/mathx-test-model-a-20250301_090000.json',
      'mathx/test/model-b/mathx-test-model-b-20250201_000000.json',
    ]);
    // The newer demo file is skipped rather than shadowing the real one; the older file is superseded.
    expect(load.skippedDemo.map((f) => path.basename(f))).toEqual(['mathx-test-model-a-20250401_000000.json']);
    expect(load.superseded.map((f) => path.basename(f))).toEqual(['mathx-test-model-a-20250101_120000.json']);
    expect(load.records).toHaveLength(13);
  });

  it('joins on (dataset, index): a null score counts as 0 and a query one model lacks is dropped', () => {
    const pool = buildQueryPool(load.records);
    expect(pool.datasets).toEqual(['codey', 'mathx']);
    expect(pool.models).toEqual(['model-a', 'model-b']);
    expect(pool.dropped).toEqual({ total: 1, byDataset: { mathx: 1 } });
    const mathx = [...pool.queryDataset.keys()].filter((q) => pool.datasets[pool.queryDataset[q]!] === 'mathx');
    expect(mathx.map((q) => pool.queryIndex[q])).toEqual(['0', '1', '2']);
    // model-a's newest file: 1, 1, 0; model-b: null → 0, then 1, 1.
    expect(mathx.map((q) => [pool.scores[q * 2], pool.scores[q * 2 + 1]])).toEqual([
      [1, 0],
      [1, 1],
      [0, 1],
    ]);
    expect(pool.queryText[mathx[0]!]).toBe('Solve: 1+1');
  });

  it('accepts the results/bench directory itself', async () => {
    expect((await loadLlmRouterBench(bench)).files).toEqual(load.files);
  });

  it('reads the same records, files and skips on two threads as on one', async () => {
    // The fixture is far below the size at which the loader takes a second thread by itself.
    const twoThreads = await loadLlmRouterBench(fixture, 2);
    expect(load.threads).toBe(1);
    expect(twoThreads.threads).toBe(2);
    expect({ ...twoThreads, threads: 1 }).toEqual(load);
    expect(twoThreads.records.map((r) => Object.keys(r))).toEqual(load.records.map((r) => Object.keys(r)));
  });

  it('orders files by their YYYYMMDD_HHMMSS suffix', () => {
    expect(timestampOf('/x/d-s-m-20250301_090000.json')).toBe(20250301090000);
  });

  it.each([1, 2] as const)('names the file and field of a bad record, and a file that is not JSON (%i thread(s))', async (threads) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-llmrouterbench-'));
    try {
      cpSync(fixture, dir, { recursive: true });
      const file = path.join(dir, 'results', 'bench', 'codey', 'test', 'model-b', 'codey-test-model-b-20250116_000000.json');
      writeFileSync(file, JSON.stringify({ dataset_name: 'codey', split: 'test', model_name: 'model-b', records: [{ index: 0, score: 'yes' }] }));
      await expect(loadLlmRouterBench(dir, threads)).rejects.toThrow(InputError);
      await expect(loadLlmRouterBench(dir, threads)).rejects.toThrow(`${file}: records[0].score: expected a number in [0, 1] or null`);
      const broken = path.join(dir, 'results', 'bench', 'mathx', 'test', 'model-b', 'mathx-test-model-b-20250201_000000.json');
      writeFileSync(broken, '{"records": [');
      // Files that cannot be read are named first, then the bad records of the files used.
      const error = await loadLlmRouterBench(dir, threads).catch((e: unknown) => e as Error);
      expect((error as Error).message.split('\n').filter((l) => l.includes(dir))).toEqual([
        expect.stringMatching(new RegExp(`^${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON`)),
        `${file}: records[0].score: expected a number in [0, 1] or null`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says what layout it expected for a directory without result files', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-llmrouterbench-'));
    try {
      await expect(loadLlmRouterBench(dir)).rejects.toThrow(/no result files: expected <dataset>\/<split>\/<model>\/\*\.json/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads records through a fast path that gives what the schema gives, and the schema's error otherwise", () => {
    const origin = { benchmark: 'b', model: 'm', group: 'g' };
    const cases: unknown[] = [
      {
        index: 0,
        score: 1,
        cost: 0.1,
        prompt: 'p',
        origin_query: ['chat', 'turns'],
        prediction: null,
        ground_truth: { x: 1 },
        prompt_tokens: 3,
        completion_tokens: null,
        raw_output: 'dropped',
      },
      { index: 'a-1', score: null },
      { index: 2, score: NaN, cost: NaN },
      { index: 2.5, score: 1 },
      { index: 2, score: 1, cost: Infinity },
      { index: 2, score: 1.5 },
      { index: 2, score: 1, prompt_tokens: -1 },
      'not an object',
    ];
    for (const raw of cases) {
      const fast = parseModelOutcome(raw, origin);
      const schema = modelOutcomeSchema.safeParse({ ...(typeof raw === 'object' ? raw : { record: raw }), ...origin });
      expect(fast.success).toBe(schema.success);
      if (fast.success) expect(fast.data).toEqual(schema.data);
      else expect(fast.error.issues.map((i) => i.message)).toEqual(schema.error!.issues.map((i) => i.message));
    }
  });
});

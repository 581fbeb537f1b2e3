// The routing analysis's numbers, pinned bit for bit before it was made fast enough for a full
// release (issue 38, item 5): the digests below were taken from the code as it was at commit 1db183f,
// on these very inputs. A faster path (the product kernel, k-means, the loader) may change how the
// numbers are computed, never the numbers: a report, a neighbour list or a center that differs in one
// bit fails here.

import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embedHashedTfidf, hashedTfidfEmbedder, TWO_THREADS_MIN_TEXTS } from '../../analysis/hashed-tfidf-embedder.js';
import { kmeans } from '../../analysis/kmeans.js';
import { nearestTrainQueries } from '../../analysis/knn-router.js';
import { searchNeighbours } from '../../analysis/analysis-thread.js';
import { loadLlmRouterBench } from '../../analysis/load-llmrouterbench.js';
import { productABt } from '../../analysis/matrix-product.js';
import { PythonRandom } from '../../analysis/python-random.js';
import { buildQueryPool } from '../../analysis/query-pool.js';
import { analyzeRouting, LLMROUTERBENCH_DEFINITIONS, reportFigures } from '../../analysis/routing-analysis.js';
import { writeLlmRouterBenchTree } from '../../perf/llmrouterbench-tree.js';

const digest = (data: ArrayBufferView | string) =>
  createHash('sha256')
    .update(typeof data === 'string' ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
    .digest('hex');

/** Unit rows of uniform noise, as Float32 like the embeddings. */
function randomRows(rows: number, dim: number, seed: number): Float32Array {
  const rng = new PythonRandom(seed);
  const data = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let j = 0; j < dim; j++) {
      data[r * dim + j] = rng.random() - 0.5;
      sum += data[r * dim + j]! ** 2;
    }
    for (let j = 0; j < dim; j++) data[r * dim + j]! /= Math.sqrt(sum);
  }
  return data;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'br-scale-pins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the routing analysis gives the numbers it gave before it was made fast', () => {
  it.each([1, 2] as const)(
    'the whole report on a release-shaped tree (loader on %i thread(s), split, baselines, embedder, both routers, α sweeps, frontier)',
    async (threads) => {
      if (!existsSync(path.join(dir, 'results'))) writeLlmRouterBenchTree(dir, { models: 7, datasets: 3, promptsPerDataset: 150 });
      const load = await loadLlmRouterBench(dir, threads);
      const pool = buildQueryPool(load.records, LLMROUTERBENCH_DEFINITIONS.missingRecords);
      const report = await analyzeRouting(
        pool,
        { splitUnit: LLMROUTERBENCH_DEFINITIONS.splitUnit, oracleRule: LLMROUTERBENCH_DEFINITIONS.oracleRule, nInit: 3 },
        hashedTfidfEmbedder(),
      );
      expect(report.pool.testQueries).toBe(135);
      expect(digest(JSON.stringify(reportFigures(report)))).toBe('268040ce114071c24420c081daba0e80a0e644820a96a0c9e5d47371256fef76');
    },
  );

  it("the embedder's vectors with the texts' terms extracted on two threads, as for a large pool: the same as on one", async () => {
    const rng = new PythonRandom(7);
    const words = ['alpha', 'beta', 'γάμμα', '数学', 'x+y=3', 'the', 'a', 'solve', '\n', 'NaN', 'route'];
    const texts = Array.from({ length: TWO_THREADS_MIN_TEXTS + 517 }, (_, i) =>
      i % 97 === 0 ? '' : Array.from({ length: 1 + rng.randbelow(i % 13 === 0 ? 900 : 60) }, () => words[rng.randbelow(words.length)]).join(' '),
    );
    const fit = Int32Array.from({ length: 3000 }, (_, i) => i * 1.5);
    const onTwo = await hashedTfidfEmbedder().embed(texts, fit);
    const onOne = embedHashedTfidf(texts, fit);
    expect(onTwo.rows).toBe(texts.length);
    expect(digest(onTwo.data)).toBe(digest(onOne.data));
  });

  it('A × Bᵀ, on shapes that are not multiples of the tiles', () => {
    const shapes = [
      [7, 13, 6],
      [33, 65, 130],
      [1, 1, 2],
      [64, 301, 128],
    ] as const;
    const digests = shapes.map(([aRows, bRows, dim]) => {
      const out = new Float64Array(aRows * bRows);
      productABt(randomRows(aRows, dim, aRows), aRows, randomRows(bRows, dim, bRows), bRows, dim, out);
      return digest(out);
    });
    expect(digests).toEqual([
      '2166aa9d82cc1b47f2c4a96ebce737abdf91a3a4c56e75cf8d9a4ba1d8dd1f6d',
      '4d156f46af2cf0f0e9a086bcc2147a3ff7de014344ae57d5f3d28cd21a0d45c7',
      '6f86f785fbb2f0e7525ae8e3065b288517eb3fb04bb79e37d1c261ff0f53a7db',
      '431d786001a7ab817618eba79d018c4600f376c3ba9ed557289732e315d92fe6',
    ]);
  });

  /** 700 unit rows with exact ties (duplicated rows); train the first 500, test the rest with one train row among them. */
  function tiedSearch() {
    const dim = 10;
    const data = randomRows(700, dim, 5);
    data.copyWithin(100 * dim, 0, 50 * dim);
    const train = Int32Array.from({ length: 500 }, (_, i) => i);
    const test = Int32Array.from({ length: 200 }, (_, i) => 500 + i);
    test[0] = 3;
    return { embeddings: { rows: 700, dim, data }, train, test };
  }
  const TIED_NEIGHBOURS = 'b953a365841e4412544e20b191993204c30400bdbe3383f4def513111c94b913';

  it('the kNN neighbours (ties: the earlier training query)', () => {
    const { embeddings, train, test } = tiedSearch();
    expect(digest(nearestTrainQueries(embeddings, train, test, 7).neighbours)).toBe(TIED_NEIGHBOURS);
  });

  it('the kNN neighbours found on a thread of their own, as the analysis searches a large pool: the same', async () => {
    const { embeddings, train, test } = tiedSearch();
    const onThread = await searchNeighbours(embeddings, train, test, 7, true);
    expect(onThread.k).toBe(7);
    expect(onThread.seconds).toBeGreaterThan(0);
    expect(digest(onThread.neighbours)).toBe(TIED_NEIGHBOURS);
  });

  it('k-means centers, labels and inertia, on dims with and without a remainder of 4', () => {
    const digests = [6, 32, 130].map((dim) => {
      const x = { rows: 900, dim, data: randomRows(900, dim, dim) };
      const result = kmeans(x, { k: 12, nInit: 3, rng: new PythonRandom(42) });
      return digest(JSON.stringify([digest(result.centers), digest(result.labels), result.inertia, result.iterations]));
    });
    expect(digests).toEqual([
      '49a8c82de5496e361dc54e086f5cc87d85d189394b552b1ac3526040db321852',
      '222129f61bf0b968baf77d5bc9520cb4902fe4e9323a939cd001ec9a2811f818',
      '035aa273b293db0bcf43a7d22064092d600cbb0686330296d57cfb13f79fb179',
    ]);
  });
});

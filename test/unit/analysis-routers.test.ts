// The routers on a synthetic pool with planted structure (each model strong on one topic of queries,
// every score a Bernoulli draw): the cluster router learns the structure, beats Best Single, and
// beats a kNN router with k = 1, which copies one neighbour's noise.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { embedHashedTfidf, hashedTfidfEmbedder } from '../../analysis/hashed-tfidf-embedder.js';
import { normalizeRows } from '../../analysis/embedding-matrix.js';
import { kmeans } from '../../analysis/kmeans.js';
import { PythonRandom } from '../../analysis/python-random.js';
import { analyzeRecords, METHOD, reportFigures } from '../../analysis/routing-analysis.js';
import { syntheticPool } from '../../analysis/synthetic-pool.js';

const synthetic = syntheticPool({ models: 6, topics: 6, datasets: 3, queriesPerDataset: 200, strong: 0.9, weak: 0.3, seed: 11 });
const method = (report: Awaited<ReturnType<typeof analyzeRecords>>, name: string) => report.methods.find((m) => m.name === name)!;

describe('routers on planted structure', () => {
  it('the cluster router has a positive Gain@B and beats kNN with k = 1', async () => {
    const report = await analyzeRecords(synthetic.records, { knnK: 1 }, hashedTfidfEmbedder());
    const cluster = method(report, METHOD.clusterRouter);
    const knn1 = method(report, METHOD.knnRouter);
    expect(cluster.gainOverBestSingle).toBeGreaterThan(0.5);
    expect(cluster.acc).toBeGreaterThan(knn1.acc + 0.1);
    // Each topic's specialist answers 90% of its queries: a router that learnt the topics gets close.
    expect(cluster.acc).toBeGreaterThan(0.8);
    expect(cluster.gapToOracle).toBeGreaterThan(0);
  });

  it('is deterministic for a seed (all but the measured training times)', async () => {
    const a = await analyzeRecords(synthetic.records, { nInit: 2 }, hashedTfidfEmbedder());
    const b = await analyzeRecords(synthetic.records, { nInit: 2 }, hashedTfidfEmbedder());
    expect(reportFigures(b)).toEqual(reportFigures(a));
  });

  it('says how long each in-process router trained, in both tables; baselines train nothing', async () => {
    const report = await analyzeRecords(synthetic.records, { nInit: 2 }, hashedTfidfEmbedder());
    const trained = Object.fromEntries(
      [...report.methods, ...report.costAware].filter((r) => r.trainSeconds !== undefined).map((r) => [r.name, r.trainSeconds]),
    );
    expect(Object.keys(trained).sort()).toEqual([METHOD.clusterRouter, METHOD.clusterCostAware, METHOD.knnRouter, METHOD.knnCostAware].sort());
    for (const seconds of Object.values(trained)) expect(seconds).toBeGreaterThan(0);
    // The kNN router and its cost-aware sweep share one search of the training queries.
    expect(trained[METHOD.knnCostAware]).toBe(trained[METHOD.knnRouter]);
  });

  it('sweeps α over 0, 0.01, …, 1 and puts every point on or under the frontier', async () => {
    const report = await analyzeRecords(synthetic.records, {}, hashedTfidfEmbedder());
    for (const router of report.costAware) {
      expect(router.settings.map((s) => s.alpha)).toEqual(Array.from({ length: 101 }, (_, i) => i / 100));
      expect(router.paretoDist).toBeGreaterThanOrEqual(0);
    }
    // α = 1 of the cost-aware cluster router routes by accuracy alone: the plain cluster router.
    const alphaOne = report.costAware[0]!.settings[100]!;
    expect(alphaOne.acc).toBeCloseTo(method(report, METHOD.clusterRouter).acc, 12);
    expect(report.frontier.length).toBeGreaterThan(0);
  });
});

describe('k-means', () => {
  it('finds planted clusters and keeps the restart with the lowest inertia', () => {
    // Three tight groups on the unit circle.
    const rng = new PythonRandom(3);
    const angles = [0, 2.1, 4.2];
    const data = new Float32Array(90 * 2);
    for (let i = 0; i < 90; i++) {
      const a = angles[i % 3]! + (rng.random() - 0.5) * 0.1;
      data[i * 2] = Math.cos(a);
      data[i * 2 + 1] = Math.sin(a);
    }
    const one = kmeans({ rows: 90, dim: 2, data }, { k: 3, nInit: 1, rng: new PythonRandom(1) });
    const ten = kmeans({ rows: 90, dim: 2, data }, { k: 3, nInit: 10, rng: new PythonRandom(1) });
    expect(ten.inertia).toBeLessThanOrEqual(one.inertia);
    for (let i = 3; i < 90; i++) expect(ten.labels[i]).toBe(ten.labels[i % 3]);
    expect(new Set(ten.labels).size).toBe(3);
  });
});

describe('offline embedder', () => {
  it('is deterministic, L2-normalized, and puts texts sharing words and spelling closer', () => {
    const texts = ['integrate the polynomial x squared', 'integrate the polynomial x cubed', 'write a python function to reverse a list'];
    const fit = Int32Array.from([0, 1, 2]);
    const e = normalizeRows(embedHashedTfidf(texts, fit, { dim: 64 }));
    expect(embedHashedTfidf(texts, fit, { dim: 64 }).data).toEqual(e.data);
    const row = (r: number) => e.data.subarray(r * 64, r * 64 + 64);
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);
    expect(dot(row(0), row(0))).toBeCloseTo(1, 5);
    expect(dot(row(0), row(1))).toBeGreaterThan(dot(row(0), row(2)) + 0.2);
  });

  it('gives the same vectors, bit for bit, as before its IDF logarithms were looked up per document frequency', () => {
    // The digest was taken from the embedder as it was (commit 6e05fb5) on these very texts: a
    // faster path may change how the numbers are computed, never the numbers.
    const { records } = syntheticPool({ models: 1, datasets: 2, queriesPerDataset: 300, topics: 6, seed: 11 });
    const vectors = embedHashedTfidf(
      records.map((r) => r.prompt!),
      Int32Array.from({ length: 420 }, (_, i) => i),
    );
    expect(createHash('sha256').update(vectors.data).digest('hex')).toBe('1f6ae3863347c0fd8b00e36d6ff70c5e99ae1e2078909306a0a236954f5ebefb');
  });
});

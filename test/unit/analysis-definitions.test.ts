// Every definition of the routing analysis against values computed by hand on small pools: the join,
// Acc and cost, the baselines, the relative metrics, the cost setting, the Pareto frontier and
// ParetoDist, and the routers' scoring rules, with ties and missing queries.

import { describe, expect, it } from 'vitest';
import { balanceInto } from '../../analysis/balance-score.js';
import { computeBaselines, modelOutcomes } from '../../analysis/baselines.js';
import { nearestClusters, rankByAccuracy, rankByBalance, routeByRanks, type ClusterModel } from '../../analysis/cluster-router.js';
import { costSave, perfGain } from '../../analysis/cost-setting.js';
import type { ModelOutcome } from '../../analysis/model-outcome.js';
import { nearestTrainQueries, neighbourStats, routeByNeighbourBalance, routeByNeighbourScore } from '../../analysis/knn-router.js';
import { outcomeOfChoice, querySet } from '../../analysis/outcome.js';
import { dominates, paretoDistance, paretoFrontier, stepCurve } from '../../analysis/pareto-frontier.js';
import { buildQueryPool } from '../../analysis/query-pool.js';
import { relativeMetrics } from '../../analysis/relative-metrics.js';

// Dataset A has queries 0–3, dataset B queries 4–5; models a, b, c cost 1, 2 and 3 per query.
//          a    b    c
// A q0     1    0    1
// A q1     0    1    1
// A q2     1    1    0
// A q3     0    0    0
// B q4     1    0    0
// B q5    .5   .5    1
const SCORES: Array<[string, number, [number, number, number]]> = [
  ['A', 0, [1, 0, 1]],
  ['A', 1, [0, 1, 1]],
  ['A', 2, [1, 1, 0]],
  ['A', 3, [0, 0, 0]],
  ['B', 4, [1, 0, 0]],
  ['B', 5, [0.5, 0.5, 1]],
];
const MODELS = ['a', 'b', 'c'];
// Models are given out of name order on purpose: the pool sorts them, so ties break by name.
const records: ModelOutcome[] = SCORES.flatMap(([benchmark, index, scores]) =>
  [2, 0, 1].map((m) => ({ benchmark, model: MODELS[m]!, index, score: scores[m]!, cost: m + 1 })),
);
const pool = buildQueryPool(records);
const test = querySet(pool, Int32Array.from([0, 1, 2, 3, 4, 5]));
// Train on A's q2 and q3, where a and b tie at 0.5: Best Single is a, the first by name.
const train = querySet(pool, Int32Array.from([2, 3]));
const models = modelOutcomes(pool, train, test);
const baselines = computeBaselines(pool, test, models, 42);

describe('joining records into a pool', () => {
  it('sorts models by name and keeps datasets and queries in first-seen order', () => {
    expect(pool.models).toEqual(['a', 'b', 'c']);
    expect(pool.datasets).toEqual(['A', 'B']);
    expect([...pool.queryDataset]).toEqual([0, 0, 0, 0, 1, 1]);
    expect(pool.scores[5 * 3 + 2]).toBe(1);
    expect(pool.costs[5 * 3 + 1]).toBe(2);
  });

  it('drops a query some model has no record for, counts it per dataset, and drops a dataset left empty', () => {
    const withGaps = buildQueryPool([
      ...records,
      { benchmark: 'B', model: 'a', index: 6, score: 1 },
      { benchmark: 'B', model: 'b', index: 6, score: 1 },
      { benchmark: 'C', model: 'a', index: 0, score: 1 },
      { benchmark: 'A', model: 'a', index: 0, score: 0 },
    ]);
    expect(withGaps.queryDataset).toHaveLength(6);
    expect(withGaps.datasets).toEqual(['A', 'B']);
    expect(withGaps.dropped).toEqual({ total: 2, byDataset: { B: 1, C: 1 } });
    // The duplicate record for (A, 0, a) is counted and the first one kept.
    expect(withGaps.duplicateRecords).toBe(1);
    expect(withGaps.scores[0]).toBe(1);
  });

  it('counts a null score and a missing cost as 0', () => {
    const p = buildQueryPool([{ benchmark: 'X', model: 'm', index: 'q1', score: null }]);
    expect(p.scores[0]).toBe(0);
    expect(p.costs[0]).toBe(0);
  });
});

describe('Acc and cost', () => {
  it('Acc is the macro mean over datasets of the mean score; cost is the sum over queries', () => {
    // a: A (1+0+1+0)/4 = 0.5, B (1+0.5)/2 = 0.75, Acc 0.625; cost 6 × 1.
    expect(models.test[0]!.acc).toBeCloseTo(0.625, 12);
    expect(models.test[0]!.cost).toBe(6);
    expect(models.test[0]!.datasetAcc).toEqual([0.5, 0.75]);
    // b: A 0.5, B 0.25 → 0.375, cost 12; c: A 0.5, B 0.5 → 0.5, cost 18.
    expect(models.test.map((o) => o.acc)).toEqual([0.625, 0.375, 0.5]);
    expect(models.test.map((o) => o.cost)).toEqual([6, 12, 18]);
  });

  it('leaves a dataset with no queries in the set out of the macro mean', () => {
    const onlyA = querySet(pool, Int32Array.from([0, 1]));
    const o = outcomeOfChoice(pool, onlyA, Int32Array.from([2, 2]));
    expect(o.datasetAcc).toEqual([1, null]);
    expect(o.acc).toBe(1);
  });
});

describe('baselines', () => {
  it('Random (expected) averages s and c over models per query', () => {
    // Per-query means: 2/3, 2/3, 2/3, 0 | 1/3, 2/3 → A 0.5, B 0.5 → Acc 0.5; cost 6 queries × mean 2.
    expect(baselines.randomExpected.acc).toBeCloseTo(0.5, 12);
    expect(baselines.randomExpected.cost).toBeCloseTo(12, 12);
  });

  it('Random (seeded draw) routes by random.seed(42); randrange(3) per test query', () => {
    // Python: random.seed(42); [random.randrange(3) for _ in range(6)] == [2, 0, 0, 2, 1, 0]
    // → c, a, a, c, b, a: scores 1, 0, 1, 0 | 0, 0.5 → A 0.5, B 0.25 → Acc 0.375; cost 3+1+1+3+2+1.
    expect(baselines.randomDraw.acc).toBeCloseTo(0.375, 12);
    expect(baselines.randomDraw.cost).toBe(11);
  });

  it('Best Single is the best model on train (a tie goes to the first by name), reported on test', () => {
    expect(baselines.bestSingle.model).toBe(0);
    expect(baselines.bestSingle.acc).toBeCloseTo(0.625, 12);
    expect(baselines.bestSingle.cost).toBe(6);
  });

  it('Dataset Oracle takes the best model per dataset on test (A is a three-way tie: a)', () => {
    expect(baselines.datasetOracle.modelByDataset).toEqual([0, 0]);
    expect(baselines.datasetOracle.acc).toBeCloseTo(0.625, 12);
    expect(baselines.datasetOracle.cost).toBe(6);
  });

  it('Oracle takes max_m s(m, q) per query and pays the cheapest model reaching it', () => {
    // Maxima 1, 1, 1, 0 | 1, 1 → A 0.75, B 1 → 0.875. Cheapest at the max: a, b, a, a (all 0: a) | a, c.
    expect(baselines.oracle.acc).toBeCloseTo(0.875, 12);
    expect(baselines.oracle.cost).toBe(1 + 2 + 1 + 1 + 1 + 3);
  });
});

describe('relative metrics', () => {
  it('Gain@R, Gain@B and Gap@O against Random, Best Single and Oracle', () => {
    const r = relativeMetrics(0.75, { random: 0.5, bestSingle: 0.625, oracle: 0.875 });
    expect(r.gainOverRandom).toBeCloseTo(0.5, 12);
    expect(r.gainOverBestSingle).toBeCloseTo(0.2, 12);
    expect(r.gapToOracle).toBeCloseTo(0.125 / 0.875, 12);
  });

  it('are undefined (null) when the reference accuracy is 0', () => {
    expect(relativeMetrics(0.3, { random: 0, bestSingle: 0, oracle: 0 })).toEqual({ gainOverRandom: null, gainOverBestSingle: null, gapToOracle: null });
  });
});

describe('cost setting', () => {
  const settings = [
    { acc: 0.5, cost: 5 },
    { acc: 0.6, cost: 9 },
    { acc: 0.7, cost: 8 },
    { acc: 0.8, cost: 12 },
  ];
  const bs = { acc: 0.6, cost: 10 };

  it('PerfGain is the best setting accuracy over Best Single', () => {
    expect(perfGain(settings, bs.acc)).toBeCloseTo(0.2 / 0.6, 12);
  });

  it('CostSave is the cheapest setting reaching Best Single accuracy (≥, so a tie counts)', () => {
    expect(costSave(settings, bs)).toBeCloseTo((10 - 8) / 10, 12);
    expect(costSave([{ acc: 0.6, cost: 4 }], bs)).toBeCloseTo(0.6, 12);
  });

  it('CostSave is n/a (null) when no setting reaches Best Single', () => {
    expect(costSave([{ acc: 0.59, cost: 1 }], bs)).toBeNull();
  });
});

describe('Pareto frontier and ParetoDist', () => {
  it('keeps the points no other point dominates, equal points included, by cost', () => {
    const points = [
      { cost: 1, acc: 0.5 },
      { cost: 2, acc: 0.7 },
      { cost: 2, acc: 0.6 }, // dominated by the point above: same cost, less accurate
      { cost: 3, acc: 0.7 }, // dominated: same accuracy, dearer
      { cost: 4, acc: 0.9 },
      { cost: 4, acc: 0.9 }, // equal to the one before: neither dominates the other
      { cost: 0.5, acc: 0.2 },
    ];
    expect(dominates(points[1]!, points[2]!)).toBe(true);
    expect(dominates(points[4]!, points[5]!)).toBe(false);
    expect(paretoFrontier(points)).toEqual([6, 0, 1, 4, 5]);
  });

  it('measures ParetoDist to the normalized step curve', () => {
    // Costs 0..10 and accuracies 0..1 normalize to [0, 1]². Frontier (0,0), (0.5,0.5), (1,1): the step
    // curve runs (0,0) → (0.5,0) → (0.5,0.5) → (1,0.5) → (1,1).
    const all = [
      { cost: 0, acc: 0 },
      { cost: 10, acc: 1 },
      { cost: 10, acc: 0.5 }, // on the curve (dominated, but on the region's edge): 0
      { cost: 5, acc: 0.5 }, // a frontier point: 0
      { cost: 8, acc: 0.2 }, // (0.8, 0.2): 0.3 to both x = 0.5 and y = 0.5 segments
    ];
    expect(stepCurve([all[0]!, all[3]!, all[1]!], all)).toEqual([
      { cost: 0, acc: 0 },
      { cost: 0.5, acc: 0 },
      { cost: 0.5, acc: 0.5 },
      { cost: 1, acc: 0.5 },
      { cost: 1, acc: 1 },
    ]);
    expect(paretoDistance(all.slice(2), all)).toBeCloseTo(0.3 / 3, 12);
  });

  it('extends the step curve to the highest cost of all points', () => {
    const all = [
      { cost: 0, acc: 1 },
      { cost: 4, acc: 0 }, // (1, 0): 1 below the curve's tail at accuracy 1
    ];
    expect(paretoDistance([all[1]!], all)).toBeCloseTo(1, 12);
  });
});

describe('routers', () => {
  it('the cost-aware score is α·ã + (1 − α)·(1 − c/max c); a tie goes to the first model', () => {
    const out = new Float64Array(3);
    balanceInto([0.2, 0.6, 1], [1, 2, 4], 0.5, out);
    // ã = 0, 0.5, 1; cost term = 0.75, 0.5, 0.
    expect([...out]).toEqual([0.375, 0.5, 0.5]);
    balanceInto([0.4, 0.4], [0, 0], 0.3, out);
    // Equal accuracies normalize to 1, zero costs give a cost term of 1.
    expect([...out.subarray(0, 2)]).toEqual([1, 1]);
  });

  // Two clusters in the plane: μ0 = (1, 0), μ1 = (0, 1); model 0 leads cluster 0, model 2 cluster 1.
  const model: ClusterModel = {
    k: 2,
    dim: 2,
    centers: Float64Array.from([1, 0, 0, 1]),
    members: Int32Array.from([5, 5]),
    meanScore: Float64Array.from([0.9, 0.5, 0.1, 0.1, 0.5, 0.9]),
    meanCost: Float64Array.from([3, 2, 1, 3, 2, 1]),
  };
  const query = { rows: 1, dim: 2, data: Float32Array.from([0.8, 0.6]) };

  it('weights the top_k nearest clusters by softmax(−β·d) with d = 1 − q·μ', () => {
    // d0 = 0.2, d1 = 0.4; β = 9: p0 = 1 / (1 + e^−1.8) ≈ 0.858149.
    const affinity = nearestClusters(model, query, Int32Array.from([0]), 2, 9);
    expect([...affinity.clusters]).toEqual([0, 1]);
    // The query is stored in float32, hence 6 digits.
    expect(affinity.weights[0]).toBeCloseTo(1 / (1 + Math.exp(-1.8)), 6);
    expect(affinity.weights[1]).toBeCloseTo(1 - 1 / (1 + Math.exp(-1.8)), 6);
  });

  it('scores models Σ p_c / (rank_c(m) + 1) and picks the argmax (first on ties)', () => {
    const ranks = rankByAccuracy(model, 3);
    expect([...ranks]).toEqual([0, 1, 2, 2, 1, 0]);
    // β = 9: model 0 gets 0.858/1 + 0.142/3 ≈ 0.905, model 2 gets 0.858/3 + 0.142 ≈ 0.428.
    expect([...routeByRanks(nearestClusters(model, query, Int32Array.from([0]), 2, 9), ranks, 3)]).toEqual([0]);
    // β = 0: both clusters weigh 0.5, models 0 and 2 tie at 2/3: the first wins.
    expect([...routeByRanks(nearestClusters(model, query, Int32Array.from([0]), 2, 0), ranks, 3)]).toEqual([0]);
    // top_k = 1: only cluster 0 counts.
    expect([...routeByRanks(nearestClusters(model, query, Int32Array.from([0]), 1, 9), ranks, 3)]).toEqual([0]);
  });

  it('ranks a cluster by mean train score, ties by name, and the cost-aware ranking by the α score', () => {
    const tied: ClusterModel = {
      ...model,
      k: 1,
      centers: Float64Array.from([1, 0]),
      members: Int32Array.from([1]),
      meanScore: Float64Array.from([0.5, 0.5, 0.2]),
      meanCost: Float64Array.from([2, 1, 1]),
    };
    expect([...rankByAccuracy(tied, 3)]).toEqual([0, 1, 2]);
    // α = 0: cost alone; models 1 and 2 tie on cost 1 (score 0.5), model 0 scores 0.
    expect([...rankByBalance(tied, 3, 0)]).toEqual([2, 0, 1]);
    // α = 1 ranks as accuracy alone.
    expect([...rankByBalance(model, 3, 1)]).toEqual([...rankByAccuracy(model, 3)]);
  });

  it('gives an empty cluster no ranking, so it adds nothing to any model', () => {
    const empty: ClusterModel = { ...model, members: Int32Array.from([0, 5]) };
    const ranks = rankByAccuracy(empty, 3);
    expect([...ranks.subarray(0, 3)]).toEqual([-1, -1, -1]);
    expect([...routeByRanks(nearestClusters(empty, query, Int32Array.from([0]), 1, 9), ranks, 3)]).toEqual([0]);
    expect([...routeByRanks(nearestClusters(empty, query, Int32Array.from([0]), 2, 9), ranks, 3)]).toEqual([2]);
  });

  it('kNN finds the most similar training queries (ties: the earlier one) and routes by their mean score', () => {
    const kPool = buildQueryPool([
      ...[0, 1, 2, 3].flatMap((index) =>
        MODELS.map((model, m) => ({
          benchmark: 'K',
          model,
          index,
          score: [
            [1, 0, 0],
            [0, 0, 1],
            [0, 1, 0],
            [0, 0, 0],
          ][index]![m]!,
          cost: m + 1,
        })),
      ),
    ]);
    // Train rows 0–2 at (1,0), (0,1), (1,0); test row 3 at (1,0).
    const embeddings = { rows: 4, dim: 2, data: Float32Array.from([1, 0, 0, 1, 1, 0, 1, 0]) };
    const trainRows = Int32Array.from([0, 1, 2]);
    const testRows = Int32Array.from([3]);
    expect([...nearestTrainQueries(embeddings, trainRows, testRows, 1).neighbours]).toEqual([0]);
    const two = nearestTrainQueries(embeddings, trainRows, testRows, 2);
    expect([...two.neighbours]).toEqual([0, 2]);
    const stats = neighbourStats(kPool, trainRows, two);
    // Neighbours 0 and 2: model a scores 1 and 0, b 0 and 1, c 0 and 0.
    expect([...stats.meanScore]).toEqual([0.5, 0.5, 0]);
    expect([...routeByNeighbourScore(stats)]).toEqual([0]);
    // α = 0 prefers the cheapest: c (cost 3 of max 3 → 0) loses to a (1 − 1/3).
    expect([...routeByNeighbourBalance(stats, 0)]).toEqual([0]);
  });
});

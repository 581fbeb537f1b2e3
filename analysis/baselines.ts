// The reference points every router is compared with, all measured on test: Random (its exact
// expectation and one seeded draw), Best Single, Dataset Oracle and the per-query Oracle.

import { outcomeOf, outcomeOfChoice, outcomeOfModel, type Outcome, type QuerySet } from './outcome.js';
import { PythonRandom } from './python-random.js';
import type { QueryPool } from './query-pool.js';

export interface Baselines {
  /** Expectation of routing each test query to a uniformly random model: the mean over models of s and c. */
  randomExpected: Outcome;
  /** One draw: `random.seed(seed)`, then `randrange(models)` per test query in order. */
  randomDraw: Outcome;
  /** The model with the highest macro Acc on train (ties: first by name), on test. */
  bestSingle: Outcome & { model: number };
  /** Per dataset, the model with the best mean test score (ties: first by name). */
  datasetOracle: Outcome & { modelByDataset: Array<number | null> };
  /** Per query max_m s(m, q), paying the cheapest model that reaches the max. */
  oracle: Outcome;
}

export interface ModelOutcomes {
  train: Outcome[];
  test: Outcome[];
}

export function modelOutcomes(pool: QueryPool, train: QuerySet, test: QuerySet): ModelOutcomes {
  return {
    train: pool.models.map((_, m) => outcomeOfModel(pool, train, m)),
    test: pool.models.map((_, m) => outcomeOfModel(pool, test, m)),
  };
}

export function computeBaselines(pool: QueryPool, test: QuerySet, models: ModelOutcomes, seed: number): Baselines {
  const M = pool.models.length;
  const n = test.rows.length;

  const meanScore = new Float64Array(n);
  const meanCost = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const base = test.rows[i]! * M;
    let s = 0;
    let c = 0;
    for (let m = 0; m < M; m++) {
      s += pool.scores[base + m]!;
      c += pool.costs[base + m]!;
    }
    meanScore[i] = s / M;
    meanCost[i] = c / M;
  }
  const randomExpected = outcomeOf(test, meanScore, meanCost);

  const rng = new PythonRandom(seed);
  const drawn = new Int32Array(n);
  for (let i = 0; i < n; i++) drawn[i] = rng.randbelow(M);
  const randomDraw = outcomeOfChoice(pool, test, drawn);

  const best = argmax(models.train.map((o) => o.acc));
  const bestSingle = { ...models.test[best]!, model: best };

  const modelByDataset = pool.datasets.map((_, d) => (test.datasetCount[d] ? argmax(models.test.map((o) => o.datasetAcc[d]!)) : null));
  const byDataset = new Int32Array(n);
  for (let i = 0; i < n; i++) byDataset[i] = modelByDataset[test.dataset[i]!]!;
  const datasetOracle = { ...outcomeOfChoice(pool, test, byDataset), modelByDataset };

  const cheapestBest = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const base = test.rows[i]! * M;
    let pick = 0;
    for (let m = 1; m < M; m++) {
      const s = pool.scores[base + m]!;
      const top = pool.scores[base + pick]!;
      if (s > top || (s === top && pool.costs[base + m]! < pool.costs[base + pick]!)) pick = m;
    }
    cheapestBest[i] = pick;
  }
  const oracle = outcomeOfChoice(pool, test, cheapestBest);

  return { randomExpected, randomDraw, bestSingle, datasetOracle, oracle };
}

/** Index of the largest value; the first one on ties. */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

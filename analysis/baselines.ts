// The reference points every router is compared with, all measured on test: Random (its exact
// expectation and one seeded draw), Best Single, Dataset Oracle and the per-query Oracle. Where a
// model has no record for a query (missing records kept), it is not a choice there.

import { compareAcc } from './accuracy-order.js';
import { outcomeOf, outcomeOfChoice, outcomeOfModel, type Outcome, type QuerySet } from './outcome.js';
import { PythonRandom } from './python-random.js';
import type { QueryPool } from './query-pool.js';

/**
 * What the Oracle counts as solved. `any-positive` (LLMRouterBench): a query is solved (1) when some
 * model scores above 0, paying the cheapest such model, else the cheapest model. `max-score`: the
 * query scores max_m s(m, q), paying the cheapest model reaching it. They agree on 0/1 scores.
 */
export type OracleRule = 'any-positive' | 'max-score';

export interface Baselines {
  /** Expectation of routing each test query to a uniformly random model: the mean over models of s and c. */
  randomExpected: Outcome;
  /** One draw: `random.seed(seed)`, then `randrange(models)` per test query in order. */
  randomDraw: Outcome;
  /** The model with the highest macro Acc on train (ties: first by name), on test. */
  bestSingle: Outcome & { model: number };
  /** Per dataset, the model with the best mean test score (ties: first by name). */
  datasetOracle: Outcome & { modelByDataset: Array<number | null> };
  /** Per query, the best any model does (by the oracle rule), paying the cheapest model that does it. */
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

export function computeBaselines(pool: QueryPool, test: QuerySet, models: ModelOutcomes, seed: number, oracleRule: OracleRule = 'max-score'): Baselines {
  const M = pool.models.length;
  const n = test.rows.length;
  const has = (cell: number) => !pool.available || pool.available[cell] === 1;

  const meanScore = new Float64Array(n);
  const meanCost = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const base = test.rows[i]! * M;
    let s = 0;
    let c = 0;
    let k = 0;
    for (let m = 0; m < M; m++) {
      if (!has(base + m)) continue;
      s += pool.scores[base + m]!;
      c += pool.costs[base + m]!;
      k++;
    }
    meanScore[i] = s / k;
    meanCost[i] = c / k;
  }
  const randomExpected = outcomeOf(test, meanScore, meanCost);

  // `rng.choice` over the query's records, which come in model order: the draw-th model that has one.
  const rng = new PythonRandom(seed);
  const drawn = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const base = test.rows[i]! * M;
    let k = 0;
    for (let m = 0; m < M; m++) if (has(base + m)) k++;
    let draw = rng.randbelow(k);
    let m = 0;
    for (; m < M; m++) if (has(base + m) && draw-- === 0) break;
    drawn[i] = m;
  }
  const randomDraw = outcomeOfChoice(pool, test, drawn);

  const best = argmaxOutcome(models.train);
  const bestSingle = { ...models.test[best]!, model: best };

  const modelByDataset = pool.datasets.map((_, d) => {
    if (!test.datasetCount[d]) return null;
    let pick = -1;
    for (let m = 0; m < M; m++) {
      const acc = models.test[m]!.datasetAcc[d];
      if (acc === null || acc === undefined) continue;
      if (pick === -1 || acc > models.test[pick]!.datasetAcc[d]!) pick = m;
    }
    return pick;
  });
  const byDataset = new Int32Array(n);
  for (let i = 0; i < n; i++) byDataset[i] = modelByDataset[test.dataset[i]!]!;
  const datasetOracle = { ...outcomeOfChoice(pool, test, byDataset), modelByDataset };

  const oracleScore = new Float64Array(n);
  const oracleCost = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const base = test.rows[i]! * M;
    let pick = -1;
    const solved = (m: number) => (oracleRule === 'any-positive' ? (pool.scores[base + m]! > 0 ? 1 : 0) : pool.scores[base + m]!);
    for (let m = 0; m < M; m++) {
      if (!has(base + m)) continue;
      if (pick === -1) {
        pick = m;
        continue;
      }
      const s = solved(m);
      const top = solved(pick);
      if (s > top || (s === top && pool.costs[base + m]! < pool.costs[base + pick]!)) pick = m;
    }
    oracleScore[i] = solved(pick);
    oracleCost[i] = pool.costs[base + pick]!;
  }
  const oracle = outcomeOf(test, oracleScore, oracleCost);

  return { randomExpected, randomDraw, bestSingle, datasetOracle, oracle };
}

/** The outcome with the highest Acc, compared exactly where Acc is a ratio of counts; the first one on ties. */
export function argmaxOutcome(outcomes: readonly Outcome[]): number {
  let best = 0;
  for (let i = 1; i < outcomes.length; i++) if (compareAcc(outcomes[i]!, outcomes[best]!) > 0) best = i;
  return best;
}

/** Index of the largest value; the first one on ties. */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

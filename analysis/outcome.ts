// How a choice of model per query scores on a set of queries: Acc, the macro mean over datasets of
// the mean score, and cost, the sum of c over the queries. Every baseline and router is measured here.

import { exactAccOf, type ExactAcc } from './accuracy-order.js';
import type { QueryPool } from './query-pool.js';

/** A set of pool rows (train or test) with what the macro mean needs precomputed. */
export interface QuerySet {
  rows: Int32Array;
  /** Per position: the dataset of rows[i]. */
  dataset: Int32Array;
  /** Per dataset: how many of the set's queries it has. */
  datasetCount: Int32Array;
}

export interface Outcome {
  /** Macro mean over the datasets present in the set of the mean score over their queries. */
  acc: number;
  /** Sum over the set's queries of the chosen model's cost, USD. */
  cost: number;
  /** Per dataset (pool order): mean score, or null when the set has none of its queries. */
  datasetAcc: Array<number | null>;
  /** Acc as an exact fraction of counts when scores are 0/1, for comparisons without float noise. */
  exactAcc: ExactAcc | null;
}

export function querySet(pool: QueryPool, rows: Int32Array): QuerySet {
  const dataset = new Int32Array(rows.length);
  const datasetCount = new Int32Array(pool.datasets.length);
  for (let i = 0; i < rows.length; i++) {
    const d = pool.queryDataset[rows[i]!]!;
    dataset[i] = d;
    datasetCount[d]!++;
  }
  return { rows, dataset, datasetCount };
}

/**
 * The outcome of per-position scores and costs (a model choice, or an expectation over models).
 * Positions with included[i] = 0 (a model's missing records) count nowhere, so a dataset
 * averages over the queries that were answered, as LLMRouterBench's per-model tables do.
 */
export function outcomeOf(set: QuerySet, score: Float64Array, cost: Float64Array, included?: Uint8Array): Outcome {
  const sums = new Float64Array(set.datasetCount.length);
  const counts = included ? new Int32Array(set.datasetCount.length) : set.datasetCount;
  let total = 0;
  for (let i = 0; i < set.rows.length; i++) {
    if (included && !included[i]) continue;
    sums[set.dataset[i]!]! += score[i]!;
    total += cost[i]!;
    if (included) counts[set.dataset[i]!]!++;
  }
  const datasetAcc: Array<number | null> = [];
  let accSum = 0;
  let present = 0;
  for (let d = 0; d < sums.length; d++) {
    const n = counts[d]!;
    if (n === 0) {
      datasetAcc.push(null);
      continue;
    }
    const mean = sums[d]! / n;
    datasetAcc.push(mean);
    accSum += mean;
    present++;
  }
  return { acc: present ? accSum / present : 0, cost: total, datasetAcc, exactAcc: exactAccOf(sums, counts) };
}

/** The outcome of routing position i of the set to model chosen[i]; a chosen model without a record there counts nowhere. */
export function outcomeOfChoice(pool: QueryPool, set: QuerySet, chosen: Int32Array): Outcome {
  const M = pool.models.length;
  const score = new Float64Array(set.rows.length);
  const cost = new Float64Array(set.rows.length);
  const included = pool.available ? new Uint8Array(set.rows.length) : undefined;
  for (let i = 0; i < set.rows.length; i++) {
    const cell = set.rows[i]! * M + chosen[i]!;
    score[i] = pool.scores[cell]!;
    cost[i] = pool.costs[cell]!;
    if (included) included[i] = pool.available![cell]!;
  }
  return outcomeOf(set, score, cost, included);
}

export function outcomeOfModel(pool: QueryPool, set: QuerySet, model: number): Outcome {
  return outcomeOfChoice(pool, set, new Int32Array(set.rows.length).fill(model));
}

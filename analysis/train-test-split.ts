// The per-dataset train/test split, identical to LLMRouterBench's for the same seed and query order:
// `random.seed(seed)` once, then per dataset `random.shuffle` of its queries and the first
// floor(n * train_ratio) to train.

import { PythonRandom } from './python-random.js';
import type { QueryPool } from './query-pool.js';

export interface TrainTestSplit {
  /** Query rows of the pool; within a dataset in first-seen order, datasets in pool order. */
  train: Int32Array;
  test: Int32Array;
}

export interface SplitOptions {
  seed: number;
  trainRatio: number;
}

export function splitQueries(pool: QueryPool, { seed, trainRatio }: SplitOptions): TrainTestSplit {
  if (!(trainRatio > 0 && trainRatio < 1)) throw new RangeError(`train ratio must be strictly between 0 and 1, got ${trainRatio}`);
  const byDataset: number[][] = pool.datasets.map(() => []);
  pool.queryDataset.forEach((d, q) => byDataset[d]!.push(q));

  const rng = new PythonRandom(seed);
  const train: number[] = [];
  const test: number[] = [];
  for (const queries of byDataset) {
    const order = queries.map((_, i) => i);
    rng.shuffle(order);
    // Python's int(n * ratio): the same IEEE product, truncated.
    const nTrain = Math.floor(queries.length * trainRatio);
    const inTrain = new Uint8Array(queries.length);
    for (let i = 0; i < nTrain; i++) inTrain[order[i]!] = 1;
    // Like LLMRouterBench, each side keeps the dataset's original query order.
    queries.forEach((q, i) => (inTrain[i] ? train : test).push(q));
  }
  return { train: Int32Array.from(train), test: Int32Array.from(test) };
}

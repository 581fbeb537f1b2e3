// The per-dataset train/test split, identical to LLMRouterBench's for the same seed and records:
// `random.seed(seed)` once, then per dataset `random.shuffle` of its split units and the first
// floor(n * train_ratio) units to train. The unit is a unique prompt text (upstream's) or an instance.

import { PythonRandom } from './python-random.js';
import type { QueryPool } from './query-pool.js';

export interface TrainTestSplit {
  /** Query rows of the pool: per dataset group, unit by unit in unit order, each unit's queries in pool order. */
  train: Int32Array;
  test: Int32Array;
}

/**
 * `prompt`: LLMRouterBench's unit. Queries of one dataset group (all splits of an LLMRouterBench
 * dataset) with the same prompt text are one unit, so a duplicated prompt never lands on both
 * sides; units are ordered by their lowest index. A query with an empty prompt is a unit of its own
 * (upstream would lump every empty prompt into one unit).
 * `instance`: every (benchmark, index) is a unit, shuffled per benchmark in first-seen order.
 */
export type SplitUnit = 'prompt' | 'instance';

export interface SplitOptions {
  seed: number;
  trainRatio: number;
  splitUnit?: SplitUnit;
}

export function splitQueries(pool: QueryPool, { seed, trainRatio, splitUnit = 'instance' }: SplitOptions): TrainTestSplit {
  if (!(trainRatio > 0 && trainRatio < 1)) throw new RangeError(`train ratio must be strictly between 0 and 1, got ${trainRatio}`);
  const rng = new PythonRandom(seed);
  const train: number[] = [];
  const test: number[] = [];
  for (const units of splitUnits(pool, splitUnit)) {
    const order = units.map((_, i) => i);
    rng.shuffle(order);
    // Python's int(n * ratio): the same IEEE product, truncated.
    const nTrain = Math.floor(units.length * trainRatio);
    const inTrain = new Uint8Array(units.length);
    for (let i = 0; i < nTrain; i++) inTrain[order[i]!] = 1;
    // Like LLMRouterBench, each side keeps the units' order.
    units.forEach((queries, i) => {
      const side = inTrain[i] ? train : test;
      for (const q of queries) side.push(q);
    });
  }
  return { train: Int32Array.from(train), test: Int32Array.from(test) };
}

/** Per block the split shuffles (a dataset group, or a benchmark), its units in order, each a list of query rows. */
export function splitUnits(pool: QueryPool, splitUnit: SplitUnit): number[][][] {
  const blockOf = (q: number) => (splitUnit === 'prompt' ? pool.datasetGroup[pool.queryDataset[q]!]! : pool.datasets[pool.queryDataset[q]!]!);
  const blocks = new Map<string, number[]>();
  for (let q = 0; q < pool.queryDataset.length; q++) {
    const block = blockOf(q);
    const queries = blocks.get(block);
    if (queries) queries.push(q);
    else blocks.set(block, [q]);
  }
  if (splitUnit === 'instance') return [...blocks.values()].map((queries) => queries.map((q) => [q]));

  return [...blocks.values()].map((queries) => {
    const byPrompt = new Map<string, number[]>();
    const units: number[][] = [];
    for (const q of queries) {
      const prompt = pool.queryPrompt[q]!;
      const unit = prompt ? byPrompt.get(prompt) : undefined;
      if (unit) unit.push(q);
      else {
        const fresh = [q];
        units.push(fresh);
        if (prompt) byPrompt.set(prompt, fresh);
      }
    }
    // Ordered by the lowest index in the unit; Array.prototype.sort is stable, as Python's is.
    const lowest = units.map((unit) => unit.map((q) => pool.queryOrder[q]!).reduce((a, b) => (compareIndex(b, a) < 0 ? b : a)));
    const order = units.map((_, i) => i).sort((a, b) => compareIndex(lowest[a]!, lowest[b]!));
    return order.map((i) => units[i]!);
  });
}

function compareIndex(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

// Python's random module reproduced bit for bit, and the per-dataset split equal to LLMRouterBench's.
// Expected values were produced with CPython 3.11.7:
//
//   import random, json
//   for seed in [0, 1, 42, 2**32 + 5, 2**40 + 7, -42]:
//       random.seed(seed)
//       print(seed, [random.getrandbits(32) for _ in range(3)], repr(random.random()))
//   def split(sizes, seed, ratio):
//       random.seed(seed)
//       out = []
//       for n in sizes:
//           idx = list(range(n)); random.shuffle(idx)
//           k = int(n * ratio)
//           out.append([idx[:k], idx[k:]])
//       return out
//   for seed in [42, 0, 7, 2024]:
//       print(seed, json.dumps(split([10, 7, 1, 3], seed, 0.7)))
//   random.seed(42); x = list(range(1000)); random.shuffle(x); print(x[:10], x[-5:])
//   random.seed(42); print([random.randrange(33) for _ in range(10)])

import { describe, expect, it } from 'vitest';
import type { ModelOutcome } from '../../analysis/model-outcome.js';
import { PythonRandom } from '../../analysis/python-random.js';
import { buildQueryPool } from '../../analysis/query-pool.js';
import { splitQueries } from '../../analysis/train-test-split.js';

describe('PythonRandom', () => {
  it.each([
    [0, [3626764237, 1654615998, 3255389356], 0.890243920837131],
    [1, [577090037, 2444712010, 3639700191], 0.8022650611681835],
    [42, [2746317213, 478163327, 107420369], 0.7415504997598329],
    [2 ** 32 + 5, [675479763, 2085189291, 1213270837], 0.8899258643720599],
    [2 ** 40 + 7, [2635837658, 3209733218, 3500038837], 0.937932416386988],
    [-42, [2746317213, 478163327, 107420369], 0.7415504997598329],
  ])('seed %d gives the same words and random() as CPython', (seed, words, next) => {
    const rng = new PythonRandom(seed);
    expect([rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(32)]).toEqual(words);
    expect(rng.random()).toBe(next);
  });

  it('shuffles a 1000-item list exactly as random.shuffle does', () => {
    const rng = new PythonRandom(42);
    const x = Array.from({ length: 1000 }, (_, i) => i);
    rng.shuffle(x);
    expect(x.slice(0, 10)).toEqual([776, 507, 895, 922, 33, 483, 85, 750, 354, 523]);
    expect(x.slice(-5)).toEqual([281, 759, 25, 114, 654]);
  });

  it('draws randrange(n) through _randbelow with rejection sampling', () => {
    const rng = new PythonRandom(42);
    expect(Array.from({ length: 10 }, () => rng.randbelow(33))).toEqual([7, 1, 17, 15, 14, 8, 6, 5, 27, 2]);
  });
});

describe('train/test split', () => {
  // Datasets of 10, 7, 1 and 3 queries, in that order, each query's index its position.
  const sizes = [10, 7, 1, 3];
  const records: ModelOutcome[] = sizes.flatMap((n, d) => Array.from({ length: n }, (_, index) => ({ benchmark: `d${d}`, model: 'm', index, score: 1 })));
  const pool = buildQueryPool(records);
  const indicesOf = (rows: Int32Array, d: number) => [...rows].filter((q) => pool.queryDataset[q] === d).map((q) => Number(pool.queryIndex[q]));

  it.each([
    [
      42,
      [
        [
          [7, 3, 2, 8, 5, 6, 9],
          [4, 0, 1],
        ],
        [
          [1, 2, 5, 6],
          [0, 3, 4],
        ],
        [[], [0]],
        [[1, 2], [0]],
      ],
    ],
    [
      0,
      [
        [
          [7, 8, 1, 5, 3, 4, 2],
          [0, 9, 6],
        ],
        [
          [6, 0, 3, 5],
          [1, 4, 2],
        ],
        [[], [0]],
        [[2, 1], [0]],
      ],
    ],
    [
      7,
      [
        [
          [8, 3, 1, 4, 7, 0, 9],
          [6, 2, 5],
        ],
        [
          [3, 2, 5, 6],
          [0, 1, 4],
        ],
        [[], [0]],
        [[1, 2], [0]],
      ],
    ],
    [
      2024,
      [
        [
          [6, 0, 9, 8, 3, 5, 1],
          [4, 2, 7],
        ],
        [
          [4, 0, 1, 2],
          [3, 6, 5],
        ],
        [[], [0]],
        [[0, 2], [1]],
      ],
    ],
  ])('seed %d puts the same queries in train and test as Python, dataset after dataset', (seed, expected) => {
    const split = splitQueries(pool, { seed, trainRatio: 0.7 });
    sizes.forEach((_, d) => {
      // Python lists train in shuffled order; the split keeps each side in the dataset's own order.
      const [train, test] = expected[d]!;
      expect(indicesOf(split.train, d)).toEqual([...train!].sort((a, b) => a - b));
      expect(indicesOf(split.test, d)).toEqual([...test!].sort((a, b) => a - b));
    });
  });

  it('truncates n × ratio as Python int() does (7 × 0.7 = 4.8999… gives 4)', () => {
    const split = splitQueries(pool, { seed: 1, trainRatio: 0.7 });
    expect(indicesOf(split.train, 1)).toHaveLength(4);
    expect(indicesOf(split.test, 1)).toHaveLength(3);
  });

  it('rejects a train ratio outside (0, 1)', () => {
    expect(() => splitQueries(pool, { seed: 1, trainRatio: 1 })).toThrow(/strictly between 0 and 1/);
  });
});

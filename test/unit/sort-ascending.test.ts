// The embedder's sort of a text's feature hashes gives Int32Array's own order on every shape of input,
// the hash-like inputs it is fast on and the ones it hands to the built-in sort.

import { describe, expect, it } from 'vitest';
import { sortAscending } from '../../analysis/hashed-terms.js';
import { PythonRandom } from '../../analysis/python-random.js';

function sortedBoth(values: Int32Array): [number[], number[]] {
  const into = new Int32Array(values.length + 8);
  const starts = new Int32Array((1 << 16) + 1);
  const ours = Array.from(sortAscending(values.slice(), values.length, into, starts));
  return [ours, Array.from(values.slice().sort())];
}

describe('sortAscending', () => {
  const rng = new PythonRandom(7);
  const hashes = (n: number) => Int32Array.from({ length: n }, () => (rng.random() * 2 ** 32) | 0);
  const cases: Record<string, Int32Array> = {
    empty: new Int32Array(0),
    one: Int32Array.of(-5),
    'hash-like, with repeats': Int32Array.from([...hashes(3000), ...hashes(50), ...hashes(50)]),
    'the extremes and zero': Int32Array.of(2 ** 31 - 1, -(2 ** 31), 0, -1, 1, -(2 ** 31), 2 ** 31 - 1),
    descending: Int32Array.from({ length: 500 }, (_, i) => 1000 - i * 7),
    'one feature thousands of times (a crowded bucket)': new Int32Array(5000).fill(123456),
    'two features interleaved in one bucket': Int32Array.from({ length: 4000 }, (_, i) => (i % 2 ? 17 : 16)),
    'clustered near zero': Int32Array.from({ length: 2000 }, () => Math.floor(rng.random() * 100) - 50),
  };
  for (const [name, values] of Object.entries(cases)) {
    it(name, () => {
      const [ours, builtIn] = sortedBoth(values);
      expect(ours).toEqual(builtIn);
    });
  }
});

// When the analysis thread cannot start (here: the bundle it is told to start from is not there), the main
// thread does all the work: the same files, terms and neighbours, no error.

import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_BUNDLE_KEY, extractTermsOnTwoThreads, searchNeighbours } from '../../analysis/analysis-thread.js';
import { extractTerms } from '../../analysis/hashed-terms.js';
import { nearestTrainQueries } from '../../analysis/knn-router.js';
import { loadLlmRouterBench } from '../../analysis/load-llmrouterbench.js';
import { PythonRandom } from '../../analysis/python-random.js';

const fixture = path.join(import.meta.dirname, '..', 'fixtures', 'llmrouterbench');

describe('an analysis thread that cannot start', () => {
  beforeAll(() => {
    // Where cli/launch.mjs says its bundle is; this module is fresh in this file, so no thread has started yet.
    (globalThis as Record<symbol, unknown>)[CLI_BUNDLE_KEY] = path.join(import.meta.dirname, 'no-such-bundle');
    return () => void delete (globalThis as Record<symbol, unknown>)[CLI_BUNDLE_KEY];
  });

  it('leaves the files to the main thread', async () => {
    const one = await loadLlmRouterBench(fixture, 1);
    const two = await loadLlmRouterBench(fixture, 2);
    expect(two.threads).toBe(2);
    expect({ ...two, threads: 1 }).toEqual(one);
  });

  it('leaves the terms and the neighbour search to the main thread', async () => {
    const texts = Array.from({ length: 1000 }, (_, i) => `text ${i} about ${i % 7} things`);
    expect(await extractTermsOnTwoThreads(texts, 4000)).toEqual(extractTerms(texts, 4000));
    const rng = new PythonRandom(3);
    const embeddings = { rows: 300, dim: 8, data: Float32Array.from({ length: 2400 }, () => rng.random()) };
    const train = Int32Array.from({ length: 200 }, (_, i) => i);
    const test = Int32Array.from({ length: 100 }, (_, i) => 200 + i);
    const found = await searchNeighbours(embeddings, train, test, 5, true);
    expect(found.neighbours).toEqual(nearestTrainQueries(embeddings, train, test, 5).neighbours);
  });
});

// The kNN router's neighbour search on a thread of its own, so that it runs beside the cluster router's
// k-means on a second core: the analysis's two heaviest steps then take about the time of the longer one
// (on LLMRouterBench's release shape, 1.2 s and 1.15 s). The thread runs this very module, loaded with the
// TypeScript loader the CLI ships with (tsx); the numbers are nearestTrainQueries' own, bit for bit.

import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { EmbeddingMatrix } from './embedding-matrix.js';
import { nearestTrainQueries } from './knn-router.js';

/** Below this many (test, train) pairs the search is done in place: a thread's start (~0.2 s) would cost more than it saves. */
export const THREAD_MIN_PAIRS = 20_000_000;
const TASK = 'benchrouter/neighbour-search';

interface SearchInput {
  task: typeof TASK;
  rows: number;
  dim: number;
  data: Float32Array;
  train: Int32Array;
  test: Int32Array;
  k: number;
}

export interface NeighbourSearch {
  k: number;
  neighbours: Int32Array;
  /** The search's own time, wherever it ran. */
  seconds: number;
}

function search(embeddings: EmbeddingMatrix, train: Int32Array, test: Int32Array, k: number): NeighbourSearch {
  const started = performance.now();
  const found = nearestTrainQueries(embeddings, train, test, k);
  return { ...found, seconds: (performance.now() - started) / 1000 };
}

/**
 * nearestTrainQueries, on a thread of its own when the search is large enough to be worth one (or `thread`
 * says so either way). Start it, do other work, then await it.
 */
export function searchNeighbours(
  embeddings: EmbeddingMatrix,
  train: Int32Array,
  test: Int32Array,
  k: number,
  thread = train.length * test.length >= THREAD_MIN_PAIRS,
): Promise<NeighbourSearch> {
  if (!thread) return Promise.resolve(search(embeddings, train, test, k));
  const input: SearchInput = { task: TASK, rows: embeddings.rows, dim: embeddings.dim, data: embeddings.data, train, test, k };
  return new Promise((resolve, reject) => {
    // The thread loads this module through tsx's API (the CLI runs as a bundle, with no TypeScript loader
    // of its own; and Node 20 applies no --import hooks to a thread's entry).
    const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`;
    const worker = new Worker(boot, { eval: true, workerData: input });
    let answered = false;
    worker.once('message', (result: NeighbourSearch) => {
      answered = true;
      resolve(result);
    });
    worker.once('error', (error) => reject(new Error(`the kNN neighbour search's thread failed: ${error.message}`, { cause: error })));
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the kNN neighbour search's thread exited with code ${code} before it answered`));
    });
  });
}

if (!isMainThread && (workerData as Partial<SearchInput> | null)?.task === TASK) {
  const input = workerData as SearchInput;
  const result = search({ rows: input.rows, dim: input.dim, data: input.data }, input.train, input.test, input.k);
  parentPort!.postMessage(result, [result.neighbours.buffer as ArrayBuffer]);
}

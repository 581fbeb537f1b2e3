// The kNN router: a test query goes to the model with the best mean score over its k most similar
// training queries (cosine similarity of normalized embeddings); the cost-aware variant applies the
// same α trade-off as the cluster router to the neighbours' mean scores and costs.

import { argmaxAllowed } from './allowed-argmax.js';
import { balanceTermsInto } from './balance-score.js';
import type { EmbeddingMatrix } from './embedding-matrix.js';
import { KernelHeap } from './kernel-heap.js';
import { copyRows, placeRowPairs, productBytes } from './matrix-product.js';
import type { QueryPool } from './query-pool.js';

/** Per test query, per model: mean score and mean cost over its neighbours, at [i * M + m]. */
export interface NeighbourStats {
  models: number;
  meanScore: Float64Array;
  meanCost: Float64Array;
}

const BLOCK_ROWS = 64; // test queries per similarity block: 64 × 8,400 train queries ≈ 4 MB

/**
 * The k nearest training queries of every test query, as positions in `train`, most similar first
 * (ties: the earlier training query). Similarities come from blocked A × Bᵀ products.
 */
export function nearestTrainQueries(embeddings: EmbeddingMatrix, train: Int32Array, test: Int32Array, k: number): { k: number; neighbours: Int32Array } {
  const kk = Math.min(k, train.length);
  const { dim, data } = embeddings;
  const nTrain = train.length;
  const neighbours = new Int32Array(test.length * kk);
  if (kk === 0 || test.length === 0) return { k: kk, neighbours };
  const blockRows = Math.min(BLOCK_ROWS, test.length);
  // The training rows stay placed; the test rows are placed a block at a time.
  const heap = KernelHeap.sized(productBytes(blockRows, nTrain, dim, blockRows));
  const trainPairs = placeRowPairs(heap, data, dim, train);
  const testBlock = heap.f64(blockRows * dim);
  const stride = trainPairs.pairs * 2;
  const block = heap.f64(blockRows * stride);
  const bestSim = new Float64Array(kk);
  const bestIdx = new Int32Array(kk);
  for (let from = 0; from < test.length; from += BLOCK_ROWS) {
    const rows = Math.min(BLOCK_ROWS, test.length - from);
    copyRows(testBlock.view, data, dim, test.subarray(from, from + rows));
    heap.kernels.productABt(testBlock.at, rows, trainPairs.at, trainPairs.pairs, dim, block.at, stride);
    for (let r = 0; r < rows; r++) {
      const sims = block.view.subarray(r * stride, r * stride + nTrain);
      bestSim.fill(-Infinity);
      bestIdx.fill(-1);
      for (let j = 0; j < nTrain; j++) {
        const s = sims[j]!;
        if (!(s > bestSim[kk - 1]!)) continue;
        let p = kk - 1;
        while (p > 0 && bestSim[p - 1]! < s) {
          bestSim[p] = bestSim[p - 1]!;
          bestIdx[p] = bestIdx[p - 1]!;
          p--;
        }
        bestSim[p] = s;
        bestIdx[p] = j;
      }
      neighbours.set(bestIdx, (from + r) * kk);
    }
  }
  return { k: kk, neighbours };
}

export function neighbourStats(pool: QueryPool, train: Int32Array, nearest: { k: number; neighbours: Int32Array }): NeighbourStats {
  const M = pool.models.length;
  const { k, neighbours } = nearest;
  const n = k === 0 ? 0 : neighbours.length / k;
  const meanScore = new Float64Array(n * M);
  const meanCost = new Float64Array(n * M);
  // Per model, the neighbours it has a record for (all k unless records are missing).
  const answered = new Int32Array(M);
  for (let i = 0; i < n; i++) {
    answered.fill(0);
    for (let t = 0; t < k; t++) {
      const row = train[neighbours[i * k + t]!]! * M;
      for (let m = 0; m < M; m++) {
        if (pool.available && !pool.available[row + m]) continue;
        answered[m]!++;
        meanScore[i * M + m]! += pool.scores[row + m]!;
        meanCost[i * M + m]! += pool.costs[row + m]!;
      }
    }
    for (let m = 0; m < M; m++) {
      if (!answered[m]) continue;
      meanScore[i * M + m]! /= answered[m]!;
      meanCost[i * M + m]! /= answered[m]!;
    }
  }
  return { models: M, meanScore, meanCost };
}

/** The model with the best neighbour mean score (ties: first by name), among those allowed (see routeByRanks). */
export function routeByNeighbourScore(stats: NeighbourStats, allowed?: Uint8Array | null): Int32Array {
  return argmaxRows(stats.meanScore, stats.models, allowed);
}

/** The model with the best α·ã + (1 − α)·(1 − c/max c) over the neighbours' means (ties: first by name). */
export function routeByNeighbourBalance(stats: NeighbourStats, alpha: number, allowed?: Uint8Array | null): Int32Array {
  const M = stats.models;
  const { acc, cost } = balanceTerms(stats);
  const n = acc.length / M;
  const chosen = new Int32Array(n);
  const row = new Float64Array(M);
  for (let i = 0; i < n; i++) {
    for (let m = 0; m < M; m++) row[m] = alpha * acc[i * M + m]! + (1 - alpha) * cost[i * M + m]!;
    chosen[i] = argmaxAllowed(row, 0, M, allowed, i * M);
  }
  return chosen;
}

/** The α-free terms of every row's balance, computed once per NeighbourStats for the whole α sweep. */
const termsOf = new WeakMap<NeighbourStats, { acc: Float64Array; cost: Float64Array }>();

function balanceTerms(stats: NeighbourStats): { acc: Float64Array; cost: Float64Array } {
  let terms = termsOf.get(stats);
  if (terms) return terms;
  const M = stats.models;
  terms = { acc: new Float64Array(stats.meanScore.length), cost: new Float64Array(stats.meanScore.length) };
  for (let from = 0; from < stats.meanScore.length; from += M) {
    balanceTermsInto(
      stats.meanScore.subarray(from, from + M),
      stats.meanCost.subarray(from, from + M),
      terms.acc.subarray(from, from + M),
      terms.cost.subarray(from, from + M),
    );
  }
  termsOf.set(stats, terms);
  return terms;
}

function argmaxRows(values: Float64Array, M: number, allowed?: Uint8Array | null): Int32Array {
  const n = values.length / M;
  const chosen = new Int32Array(n);
  for (let i = 0; i < n; i++) chosen[i] = argmaxAllowed(values, i * M, M, allowed, i * M);
  return chosen;
}

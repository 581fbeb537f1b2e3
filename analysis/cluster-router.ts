// The cluster router (Avengers-style) and its cost-aware variant (Avengers-Pro-style): k-means over
// the training queries' embeddings, models ranked per cluster, and a query routed by its nearest
// clusters' rankings. Clustering and cluster affinities are computed once; each α only re-ranks.

import { argmaxAllowed } from './allowed-argmax.js';
import { balanceInto } from './balance-score.js';
import { gatherRows, type EmbeddingMatrix } from './embedding-matrix.js';
import { kmeans } from './kmeans.js';
import { PythonRandom } from './python-random.js';
import type { QueryPool } from './query-pool.js';

export interface ClusterRouterOptions {
  /** Clusters (default 32); fewer when there are fewer training queries. */
  k: number;
  /** Nearest clusters a query is routed by (default 1). */
  topK: number;
  /** Softmax sharpness over the nearest clusters' distances (default 9). */
  beta: number;
  /** k-means restarts (default 10). */
  nInit: number;
  seed: number;
}

export interface ClusterModel {
  k: number;
  dim: number;
  /** The k-means centers, not re-normalized, as Avengers uses them. */
  centers: Float64Array;
  /** Training queries per cluster; a cluster without any has no ranking. */
  members: Int32Array;
  /** Per cluster, per model: mean train score and mean train cost, at [c * M + m]. */
  meanScore: Float64Array;
  meanCost: Float64Array;
}

/** Per test query: its topK nearest clusters and their softmax weights, at [i * topK + t]. */
export interface ClusterAffinity {
  topK: number;
  clusters: Int32Array;
  weights: Float64Array;
}

export function trainClusterRouter(
  pool: QueryPool,
  embeddings: EmbeddingMatrix,
  train: Int32Array,
  options: Pick<ClusterRouterOptions, 'k' | 'nInit' | 'seed'>,
): ClusterModel {
  const M = pool.models.length;
  const clustering = kmeans(gatherRows(embeddings, train), { k: options.k, nInit: options.nInit, rng: new PythonRandom(options.seed) });
  const { k } = clustering;
  const members = new Int32Array(k);
  const meanScore = new Float64Array(k * M);
  const meanCost = new Float64Array(k * M);
  // Per cluster and model, the members the model has a record for (all of them unless records are missing).
  const answered = new Int32Array(k * M);
  for (let i = 0; i < train.length; i++) {
    const c = clustering.labels[i]!;
    members[c]!++;
    const row = train[i]! * M;
    for (let m = 0; m < M; m++) {
      if (pool.available && !pool.available[row + m]) continue;
      answered[c * M + m]!++;
      meanScore[c * M + m]! += pool.scores[row + m]!;
      meanCost[c * M + m]! += pool.costs[row + m]!;
    }
  }
  for (let c = 0; c < k; c++) {
    if (!members[c]) continue;
    for (let m = 0; m < M; m++) {
      if (!answered[c * M + m]) continue;
      meanScore[c * M + m]! /= answered[c * M + m]!;
      meanCost[c * M + m]! /= answered[c * M + m]!;
    }
  }
  return { k, dim: clustering.dim, centers: clustering.centers, members, meanScore, meanCost };
}

/** d_c = 1 − q·μ_c; the topK smallest (ties: lower cluster), weighted p_c = softmax(−β·d_c). */
export function nearestClusters(model: ClusterModel, embeddings: EmbeddingMatrix, queries: Int32Array, topK: number, beta: number): ClusterAffinity {
  const { k, dim, centers } = model;
  const top = Math.min(topK, k);
  const clusters = new Int32Array(queries.length * top);
  const weights = new Float64Array(queries.length * top);
  const distance = new Float64Array(k);
  const order = Array.from({ length: k }, (_, c) => c);
  for (let i = 0; i < queries.length; i++) {
    const row = queries[i]! * dim;
    for (let c = 0; c < k; c++) {
      let dot = 0;
      for (let j = 0; j < dim; j++) dot += embeddings.data[row + j]! * centers[c * dim + j]!;
      distance[c] = 1 - dot;
    }
    order.sort((a, b) => distance[a]! - distance[b]! || a - b);
    // Softmax of −β·d over the chosen clusters, shifted by the largest logit for stability.
    const maxLogit = -beta * distance[order[0]!]!;
    let total = 0;
    for (let t = 0; t < top; t++) {
      const w = Math.exp(-beta * distance[order[t]!]! - maxLogit);
      clusters[i * top + t] = order[t]!;
      weights[i * top + t] = w;
      total += w;
    }
    for (let t = 0; t < top; t++) weights[i * top + t]! /= total;
  }
  return { topK: top, clusters, weights };
}

/** rank_c(m), 0 for the best: by mean train score in the cluster (ties: first by name); -1 where the cluster is empty. */
export function rankByAccuracy(model: ClusterModel, M: number): Int32Array {
  return rankClusters(model, M, (c, m) => model.meanScore[c * M + m]!);
}

/**
 * The cost-aware ranking: α·ã_m + (1 − α)·(1 − c_m / max c), with ã_m the cluster's mean train
 * scores min–max normalized over models (1 for all when they are equal) and c_m the mean train
 * costs (the cost term is 1 when every cost is 0).
 */
export function rankByBalance(model: ClusterModel, M: number, alpha: number): Int32Array {
  const balanced = new Float64Array(model.k * M);
  for (let c = 0; c < model.k; c++) {
    const score = model.meanScore.subarray(c * M, c * M + M);
    const cost = model.meanCost.subarray(c * M, c * M + M);
    balanceInto(score, cost, alpha, balanced.subarray(c * M, c * M + M));
  }
  return rankClusters(model, M, (c, m) => balanced[c * M + m]!);
}

function rankClusters(model: ClusterModel, M: number, key: (c: number, m: number) => number): Int32Array {
  const ranks = new Int32Array(model.k * M).fill(-1);
  const order = Array.from({ length: M }, (_, m) => m);
  for (let c = 0; c < model.k; c++) {
    if (!model.members[c]) continue;
    order.sort((a, b) => key(c, b) - key(c, a) || a - b);
    order.forEach((m, rank) => (ranks[c * M + m] = rank));
  }
  return ranks;
}

/**
 * Model score Σ_c p_c / (rank_c(m) + 1) over the query's nearest clusters; the argmax (ties: first by
 * name) among the models that have a record for the query (allowed[i * M + m], when records are missing).
 */
export function routeByRanks(affinity: ClusterAffinity, ranks: Int32Array, M: number, allowed?: Uint8Array | null): Int32Array {
  const { topK, clusters, weights } = affinity;
  const n = clusters.length / topK;
  const chosen = new Int32Array(n);
  const score = new Float64Array(M);
  for (let i = 0; i < n; i++) {
    score.fill(0);
    for (let t = 0; t < topK; t++) {
      const c = clusters[i * topK + t]!;
      if (ranks[c * M] === -1) continue;
      const p = weights[i * topK + t]!;
      for (let m = 0; m < M; m++) score[m]! += p / (ranks[c * M + m]! + 1);
    }
    chosen[i] = argmaxAllowed(score, 0, M, allowed, i * M);
  }
  return chosen;
}

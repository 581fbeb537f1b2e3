// Seeded k-means: k-means++ seeding, Lloyd iterations accelerated with Hamerly's bounds (the same
// fixed point as plain Lloyd, with most point–center distances skipped), best of n_init restarts by
// inertia. The cluster router's clusters come from here.

import type { EmbeddingMatrix } from './embedding-matrix.js';
import type { PythonRandom } from './python-random.js';

export interface KMeansOptions {
  k: number;
  /** Restarts from fresh k-means++ seeds; the lowest inertia wins (the first on ties). */
  nInit: number;
  /** Default 300, as scikit-learn. */
  maxIter?: number;
  /** Drawn from in order: seeding of restart 1, then restart 2, … */
  rng: PythonRandom;
}

export interface KMeansResult {
  k: number;
  dim: number;
  /** Row-major k × dim. */
  centers: Float64Array;
  labels: Int32Array;
  /** Sum of squared distances of points to their centers. */
  inertia: number;
  iterations: number;
}

export function kmeans(x: EmbeddingMatrix, options: KMeansOptions): KMeansResult {
  if (x.rows === 0) throw new RangeError('k-means needs at least one point');
  const k = Math.min(options.k, x.rows);
  let best: KMeansResult | undefined;
  for (let run = 0; run < Math.max(1, options.nInit); run++) {
    const result = lloydHamerly(x, kmeansPlusPlus(x, k, options.rng), k, options.maxIter ?? 300);
    if (!best || result.inertia < best.inertia) best = result;
  }
  return best!;
}

/** Arthur & Vassilvitskii's seeding: the first center uniformly, each next one with probability ∝ D². */
export function kmeansPlusPlus(x: EmbeddingMatrix, k: number, rng: PythonRandom): Float64Array {
  const { rows: n, dim, data } = x;
  const centers = new Float64Array(k * dim);
  const nearest = new Float64Array(n).fill(Infinity);
  let chosen = rng.randbelow(n);
  for (let c = 0; c < k; c++) {
    for (let j = 0; j < dim; j++) centers[c * dim + j] = data[chosen * dim + j]!;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const d2 = squaredDistance(data, i * dim, centers, c * dim, dim);
      if (d2 < nearest[i]!) nearest[i] = d2;
      total += nearest[i]!;
    }
    if (c + 1 === k) break;
    if (total === 0) {
      chosen = rng.randbelow(n);
      continue;
    }
    const target = rng.random() * total;
    let cumulative = 0;
    chosen = n - 1;
    for (let i = 0; i < n; i++) {
      cumulative += nearest[i]!;
      if (cumulative > target && nearest[i]! > 0) {
        chosen = i;
        break;
      }
    }
  }
  return centers;
}

function lloydHamerly(x: EmbeddingMatrix, initial: Float64Array, k: number, maxIter: number): KMeansResult {
  const { rows: n, dim, data } = x;
  const centers = initial;
  const labels = new Int32Array(n);
  const upper = new Float64Array(n); // ≥ distance to own center
  const lower = new Float64Array(n); // ≤ distance to every other center
  for (let i = 0; i < n; i++) assignFully(data, i, centers, k, dim, labels, upper, lower);

  const sums = new Float64Array(k * dim);
  const counts = new Int32Array(k);
  const moved = new Float64Array(k);
  const halfGap = new Float64Array(k);
  let iterations = 0;
  while (iterations < maxIter) {
    iterations++;
    // Move each center to the mean of its points; an empty cluster keeps its center.
    sums.fill(0);
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const c = labels[i]!;
      counts[c]!++;
      const row = i * dim;
      const base = c * dim;
      for (let j = 0; j < dim; j++) sums[base + j]! += data[row + j]!;
    }
    let maxMove = 0;
    let secondMove = 0;
    let maxMover = -1;
    for (let c = 0; c < k; c++) {
      let shift = 0;
      if (counts[c]! > 0) {
        const base = c * dim;
        for (let j = 0; j < dim; j++) {
          const next = sums[base + j]! / counts[c]!;
          const delta = next - centers[base + j]!;
          shift += delta * delta;
          centers[base + j] = next;
        }
      }
      moved[c] = Math.sqrt(shift);
      if (moved[c]! > maxMove) {
        secondMove = maxMove;
        maxMove = moved[c]!;
        maxMover = c;
      } else if (moved[c]! > secondMove) secondMove = moved[c]!;
    }
    if (maxMove === 0) break;

    for (let i = 0; i < n; i++) {
      upper[i]! += moved[labels[i]!]!;
      lower[i]! -= labels[i] === maxMover ? secondMove : maxMove;
    }
    for (let c = 0; c < k; c++) {
      let closest = Infinity;
      for (let o = 0; o < k; o++) if (o !== c) closest = Math.min(closest, squaredDistance(centers, c * dim, centers, o * dim, dim));
      halfGap[c] = Math.sqrt(closest) / 2;
    }

    let changed = 0;
    for (let i = 0; i < n; i++) {
      const own = labels[i]!;
      const bound = Math.max(halfGap[own]!, lower[i]!);
      if (upper[i]! <= bound) continue;
      upper[i] = Math.sqrt(squaredDistance(data, i * dim, centers, own * dim, dim));
      if (upper[i]! <= bound) continue;
      assignFully(data, i, centers, k, dim, labels, upper, lower);
      if (labels[i] !== own) changed++;
    }
    if (changed === 0) break;
  }

  let inertia = 0;
  for (let i = 0; i < n; i++) inertia += squaredDistance(data, i * dim, centers, labels[i]! * dim, dim);
  return { k, dim, centers, labels, inertia, iterations };
}

/** Exact nearest and second-nearest center of point i (ties: the lower center index). */
function assignFully(data: Float32Array, i: number, centers: Float64Array, k: number, dim: number, labels: Int32Array, upper: Float64Array, lower: Float64Array): void {
  let best = Infinity;
  let second = Infinity;
  let label = 0;
  const row = i * dim;
  for (let c = 0; c < k; c++) {
    const d2 = squaredDistance(data, row, centers, c * dim, dim);
    if (d2 < best) {
      second = best;
      best = d2;
      label = c;
    } else if (d2 < second) second = d2;
  }
  labels[i] = label;
  upper[i] = Math.sqrt(best);
  lower[i] = Math.sqrt(second);
}

export function squaredDistance(a: ArrayLike<number>, aFrom: number, b: ArrayLike<number>, bFrom: number, dim: number): number {
  let sum = 0;
  for (let j = 0; j < dim; j++) {
    const d = a[aFrom + j]! - b[bFrom + j]!;
    sum += d * d;
  }
  return sum;
}

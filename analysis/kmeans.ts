// Seeded k-means: k-means++ seeding, Lloyd iterations accelerated with Elkan's triangle-inequality
// bounds (the same iterates as plain Lloyd, with most point–center distances skipped), best of
// n_init restarts by inertia. The cluster router's clusters come from here.

import type { EmbeddingMatrix } from './embedding-matrix.js';
import { KernelHeap, type KMeansRun, type Placed } from './kernel-heap.js';
import type { PythonRandom } from './python-random.js';

export interface KMeansOptions {
  k: number;
  /** Restarts from fresh k-means++ seeds; the lowest inertia wins (the first on ties). */
  nInit: number;
  /** Default 300, as scikit-learn. */
  maxIter?: number;
  /**
   * Stop when the squared center shifts sum to at most tol × the data's mean per-dimension
   * variance. Default 1e-4, as scikit-learn; 0 iterates to a fixed point.
   */
  tol?: number;
  /** Drawn from in order: the seeding of restart 1, then of restart 2, … */
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

/** The points in float64 in the kernels' memory, with their squared norms. */
interface Points {
  rows: number;
  dim: number;
  data: Placed<Float64Array>;
  norm2: Placed<Float64Array>;
  heap: KernelHeap;
}

export function kmeans(x: EmbeddingMatrix, options: KMeansOptions): KMeansResult {
  if (x.rows === 0) throw new RangeError('k-means needs at least one point');
  if (!(options.k >= 1)) throw new RangeError(`k-means needs at least one cluster, got k = ${options.k}`);
  const { rows: n, dim } = x;
  const k = Math.min(options.k, n);
  // Room for the points and for one restart's state at a time (released between restarts).
  const heap = KernelHeap.sized([n * dim * 8, n * 8, ...ElkanRun.bytes(n, dim, k), n * 8]);
  const data = heap.f64(n * dim);
  data.view.set(x.data.subarray(0, n * dim));
  const norm2 = heap.f64(n);
  for (let i = 0; i < n; i++) norm2.view[i] = heap.kernels.dot(data.at + i * dim * 8, data.at + i * dim * 8, dim);
  const points: Points = { rows: n, dim, data, norm2, heap };
  const tolerance = absoluteTolerance(x.data, n, dim, options.tol ?? 1e-4);
  const restart = heap.mark();
  let best: KMeansResult | undefined;
  for (let run = 0; run < Math.max(1, options.nInit); run++) {
    const result = lloydElkan(points, kmeansPlusPlus(points, k, options.rng), k, options.maxIter ?? 300, tolerance);
    // The run's arrays live in the heap, reused by the next restart: the best is copied out.
    if (!best || result.inertia < best.inertia) best = { ...result, centers: result.centers.slice(), labels: result.labels.slice() };
    heap.release(restart);
  }
  return best!;
}

/** Arthur & Vassilvitskii's seeding: the first center uniformly, each next one with probability ∝ D². */
function kmeansPlusPlus(x: Points, k: number, rng: PythonRandom): Placed<Float64Array> {
  const { rows: n, dim, data, norm2, heap } = x;
  const centers = heap.f64(k * dim);
  const nearest = heap.f64(n);
  nearest.view.fill(Infinity);
  let chosen = rng.randbelow(n);
  for (let c = 0; c < k; c++) {
    centers.view.set(data.view.subarray(chosen * dim, chosen * dim + dim), c * dim);
    const total = heap.kernels.seedStep(data.at, norm2.at, n, dim, centers.at, c, norm2.view[chosen]!, nearest.at);
    if (c + 1 === k) break;
    if (total === 0) {
      chosen = rng.randbelow(n);
      continue;
    }
    const target = rng.random() * total;
    let cumulative = 0;
    chosen = n - 1;
    for (let i = 0; i < n; i++) {
      cumulative += nearest.view[i]!;
      if (cumulative > target && nearest.view[i]! > 0) {
        chosen = i;
        break;
      }
    }
  }
  return centers;
}

/** One restart's state, in the kernels' memory: centers, assignments, Elkan's bounds and the running per-cluster sums. */
class ElkanRun {
  readonly labels: Placed<Int32Array>;
  /** ≥ the distance from each point to its own center. */
  readonly upper: Placed<Float64Array>;
  /** ≤ the distance from each point to each center, at [i * k + c]. */
  readonly lower: Placed<Float64Array>;
  readonly centerNorm2: Placed<Float64Array>;
  /** Half the distance between each pair of centers, and to each center's nearest other center. */
  readonly halfGap: Placed<Float64Array>;
  readonly halfNearest: Placed<Float64Array>;
  /** Sum and count of each cluster's points, kept up to date as points move (an M-step in O(k·dim)). */
  readonly sums: Placed<Float64Array>;
  readonly counts: Placed<Int32Array>;
  /** Scratch for one point's candidate centers and their distances (room for a padded group of 4). */
  private readonly candidates: Placed<Int32Array>;
  private readonly found: Placed<Float64Array>;
  /** The kernels' arguments for this restart's state, in their order. */
  private readonly run: KMeansRun;

  /** The byte lengths of the arrays a run places, centers included (placed by the seeding). */
  static bytes(n: number, dim: number, k: number): number[] {
    return [k * dim * 8, n * 4, n * 8, n * k * 8, k * 8, k * k * 8, k * 8, k * dim * 8, k * 4, (k + 4) * 4, (k + 4) * 8];
  }

  constructor(
    readonly x: Points,
    readonly centers: Placed<Float64Array>,
    readonly k: number,
  ) {
    const { rows: n, dim, heap } = x;
    this.labels = heap.i32(n);
    this.upper = heap.f64(n);
    this.lower = heap.f64(n * k);
    this.centerNorm2 = heap.f64(k);
    this.halfGap = heap.f64(k * k);
    this.halfNearest = heap.f64(k);
    this.sums = heap.f64(k * dim);
    this.counts = heap.i32(k);
    this.candidates = heap.i32(k + 4);
    this.found = heap.f64(k + 4);
    this.updateCenterNorms();
    const { data, norm2 } = x;
    this.run = [data.at, norm2.at, n, dim, centers.at, this.centerNorm2.at, k, this.labels.at, this.upper.at, this.lower.at, this.sums.at, this.counts.at];
    heap.kernels.assignExactly(...this.run);
  }

  /** M-step: each center to the mean of its points (an empty cluster stays put). Returns Σ shift². */
  moveCenters(moved: Float64Array): number {
    const { k } = this;
    const centers = this.centers.view;
    const sums = this.sums.view;
    const counts = this.counts.view;
    const { dim } = this.x;
    let total = 0;
    for (let c = 0; c < k; c++) {
      let shift = 0;
      if (counts[c]! > 0) {
        const base = c * dim;
        const inv = 1 / counts[c]!;
        for (let j = 0; j < dim; j++) {
          const next = sums[base + j]! * inv;
          const delta = next - centers[base + j]!;
          shift += delta * delta;
          centers[base + j] = next;
        }
      }
      moved[c] = Math.sqrt(shift);
      total += shift;
    }
    this.updateCenterNorms();
    // The bounds follow the centers: by the triangle inequality they stay valid.
    const labels = this.labels.view;
    const upper = this.upper.view;
    const lower = this.lower.view;
    for (let i = 0; i < labels.length; i++) {
      upper[i]! += moved[labels[i]!]!;
      const base = i * k;
      for (let c = 0; c < k; c++) {
        const l = lower[base + c]! - moved[c]!;
        lower[base + c] = l > 0 ? l : 0;
      }
    }
    return total;
  }

  /** E-step with Elkan's bounds (the kernel elkanAssign); returns how many points changed cluster. */
  assign(): number {
    this.updateGaps();
    return this.x.heap.kernels.elkanAssign(...this.run, this.halfGap.at, this.halfNearest.at, this.candidates.at, this.found.at);
  }

  inertia(): number {
    const { rows: n, dim, data, norm2, heap } = this.x;
    const labels = this.labels.view;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += heap.kernels.pointDistance(data.at, norm2.at, dim, i, this.centers.at, this.centerNorm2.at, labels[i]!) ** 2;
    return sum;
  }

  private centerDot(a: number, b: number): number {
    const { dim, heap } = this.x;
    return heap.kernels.dot(this.centers.at + a * dim * 8, this.centers.at + b * dim * 8, dim);
  }

  private updateCenterNorms(): void {
    for (let c = 0; c < this.k; c++) this.centerNorm2.view[c] = this.centerDot(c, c);
  }

  private updateGaps(): void {
    const { k } = this;
    const halfGap = this.halfGap.view;
    const halfNearest = this.halfNearest.view;
    const centerNorm2 = this.centerNorm2.view;
    for (let a = 0; a < k; a++) {
      for (let b = a + 1; b < k; b++) {
        const d2 = centerNorm2[a]! + centerNorm2[b]! - 2 * this.centerDot(a, b);
        halfGap[a * k + b] = halfGap[b * k + a] = Math.sqrt(Math.max(0, d2)) / 2;
      }
    }
    for (let a = 0; a < k; a++) {
      let nearest = Infinity;
      for (let b = 0; b < k; b++) if (b !== a && halfGap[a * k + b]! < nearest) nearest = halfGap[a * k + b]!;
      halfNearest[a] = nearest;
    }
  }
}

function lloydElkan(x: Points, initial: Placed<Float64Array>, k: number, maxIter: number, tol: number): KMeansResult {
  const run = new ElkanRun(x, initial, k);
  const moved = new Float64Array(k);
  let iterations = 0;
  let labelsMatchCenters = false;
  while (iterations < maxIter) {
    iterations++;
    const shift = run.moveCenters(moved);
    if (shift === 0) {
      labelsMatchCenters = true;
      break;
    }
    // Like scikit-learn: stop once the centers barely move, then bring the labels up to date below.
    if (shift <= tol) break;
    if (run.assign() === 0) {
      labelsMatchCenters = true;
      break;
    }
  }
  if (!labelsMatchCenters) run.assign();
  return { k, dim: x.dim, centers: run.centers.view, labels: run.labels.view, inertia: run.inertia(), iterations };
}

/** scikit-learn's absolute tolerance: tol × the mean over dimensions of the data's variance. */
function absoluteTolerance(data: Float32Array, n: number, dim: number, tol: number): number {
  if (tol === 0) return 0;
  const mean = new Float64Array(dim);
  const square = new Float64Array(dim);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < dim; j++) {
      const v = data[i * dim + j]!;
      mean[j]! += v;
      square[j]! += v * v;
    }
  }
  let variance = 0;
  for (let j = 0; j < dim; j++) variance += square[j]! / n - (mean[j]! / n) ** 2;
  return (tol * variance) / dim;
}

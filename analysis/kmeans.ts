// Seeded k-means: k-means++ seeding, Lloyd iterations accelerated with Elkan's triangle-inequality
// bounds (the same iterates as plain Lloyd, with most point–center distances skipped), best of
// n_init restarts by inertia. The cluster router's clusters come from here.

import type { EmbeddingMatrix } from './embedding-matrix.js';
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

/** The points in float64 (V8 then reads operands without conversion) with their squared norms. */
interface Points {
  rows: number;
  dim: number;
  data: Float64Array;
  norm2: Float64Array;
}

export function kmeans(x: EmbeddingMatrix, options: KMeansOptions): KMeansResult {
  if (x.rows === 0) throw new RangeError('k-means needs at least one point');
  const data = Float64Array.from(x.data);
  const norm2 = new Float64Array(x.rows);
  for (let i = 0; i < x.rows; i++) norm2[i] = dot(data, i * x.dim, data, i * x.dim, x.dim);
  const points: Points = { rows: x.rows, dim: x.dim, data, norm2 };
  const k = Math.min(options.k, x.rows);
  const tolerance = absoluteTolerance(points, options.tol ?? 1e-4);
  let best: KMeansResult | undefined;
  for (let run = 0; run < Math.max(1, options.nInit); run++) {
    const result = lloydElkan(points, kmeansPlusPlus(points, k, options.rng), k, options.maxIter ?? 300, tolerance);
    if (!best || result.inertia < best.inertia) best = result;
  }
  return best!;
}

/** Arthur & Vassilvitskii's seeding: the first center uniformly, each next one with probability ∝ D². */
function kmeansPlusPlus(x: Points, k: number, rng: PythonRandom): Float64Array {
  const { rows: n, dim, data, norm2 } = x;
  const centers = new Float64Array(k * dim);
  const nearest = new Float64Array(n).fill(Infinity);
  let chosen = rng.randbelow(n);
  for (let c = 0; c < k; c++) {
    centers.set(data.subarray(chosen * dim, chosen * dim + dim), c * dim);
    const centerNorm2 = norm2[chosen]!;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const d2 = Math.max(0, norm2[i]! + centerNorm2 - 2 * dot(data, i * dim, centers, c * dim, dim));
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

/** One restart's state: centers, assignments, Elkan's bounds and the running per-cluster sums. */
class ElkanRun {
  readonly labels: Int32Array;
  /** ≥ the distance from each point to its own center. */
  readonly upper: Float64Array;
  /** ≤ the distance from each point to each center, at [i * k + c]. */
  readonly lower: Float64Array;
  readonly centerNorm2: Float64Array;
  /** Half the distance between each pair of centers, and to each center's nearest other center. */
  readonly halfGap: Float64Array;
  readonly halfNearest: Float64Array;
  /** Sum and count of each cluster's points, kept up to date as points move (an M-step in O(k·dim)). */
  readonly sums: Float64Array;
  readonly counts: Int32Array;
  /** Scratch for one point's candidate centers and their distances (room for a padded group of 4). */
  private readonly candidates: Int32Array;
  private readonly candidateDistance: Float64Array;

  constructor(
    readonly x: Points,
    readonly centers: Float64Array,
    readonly k: number,
  ) {
    const { rows: n, dim } = x;
    this.labels = new Int32Array(n);
    this.upper = new Float64Array(n);
    this.lower = new Float64Array(n * k);
    this.centerNorm2 = new Float64Array(k);
    this.halfGap = new Float64Array(k * k);
    this.halfNearest = new Float64Array(k);
    this.sums = new Float64Array(k * dim);
    this.counts = new Int32Array(k);
    this.candidates = new Int32Array(k + 4);
    this.candidateDistance = new Float64Array(k + 4);
    this.updateCenterNorms();
    for (let i = 0; i < n; i++) this.assignExactly(i);
    for (let i = 0; i < n; i++) this.add(i, this.labels[i]!, 1);
  }

  distance(i: number, c: number): number {
    const { dim, data, norm2 } = this.x;
    return Math.sqrt(Math.max(0, norm2[i]! + this.centerNorm2[c]! - 2 * dot(data, i * dim, this.centers, c * dim, dim)));
  }

  /** Exact distances to every center: the nearest (ties: the lower index) and every lower bound. */
  assignExactly(i: number): void {
    const { k, lower } = this;
    let best = Infinity;
    let label = 0;
    for (let c = 0; c < k; c++) {
      const d = this.distance(i, c);
      lower[i * k + c] = d;
      if (d < best) {
        best = d;
        label = c;
      }
    }
    this.labels[i] = label;
    this.upper[i] = best;
  }

  add(i: number, c: number, sign: 1 | -1): void {
    const { dim, data } = this.x;
    const base = c * dim;
    const row = i * dim;
    for (let j = 0; j < dim; j++) this.sums[base + j]! += sign * data[row + j]!;
    this.counts[c]! += sign;
  }

  /** M-step: each center to the mean of its points (an empty cluster stays put). Returns Σ shift². */
  moveCenters(moved: Float64Array): number {
    const { k, centers, sums, counts } = this;
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
    const { labels, upper, lower } = this;
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

  /**
   * E-step with Elkan's bounds; returns how many points changed cluster. A point's surviving
   * candidate centers are measured together, four at a time (each loaded coordinate of the point
   * then feeds four products), which is faster than Elkan's one-by-one order even though it skips
   * a few less. The nearest center wins; a tie keeps the current one, then the lower index.
   */
  assign(): number {
    this.updateGaps();
    const { k, labels, upper, lower, halfGap, halfNearest, candidates, candidateDistance } = this;
    let changed = 0;
    for (let i = 0; i < labels.length; i++) {
      const was = labels[i]!;
      if (upper[i]! <= halfNearest[was]!) continue;
      const base = i * k;
      const gaps = was * k;
      let count = 0;
      for (let c = 0; c < k; c++) if (c !== was && upper[i]! > lower[base + c]! && upper[i]! > halfGap[gaps + c]!) candidates[count++] = c;
      if (count === 0) continue;
      // The upper bound may be loose: make it exact, and keep the candidates it does not rule out.
      const exact = this.distance(i, was);
      upper[i] = lower[base + was] = exact;
      let kept = 0;
      for (let t = 0; t < count; t++) {
        const c = candidates[t]!;
        if (exact > lower[base + c]! && exact > halfGap[gaps + c]!) candidates[kept++] = c;
      }
      if (kept === 0) continue;
      this.distances(i, kept);
      let own = was;
      for (let t = 0; t < kept; t++) {
        const c = candidates[t]!;
        const d = candidateDistance[t]!;
        lower[base + c] = d;
        if (d < upper[i]!) {
          own = c;
          upper[i] = d;
        }
      }
      if (own !== was) {
        labels[i] = own;
        this.add(i, was, -1);
        this.add(i, own, 1);
        changed++;
      }
    }
    return changed;
  }

  /** Distances from point i to candidates[0..count), into candidateDistance, four centers per pass. */
  private distances(i: number, count: number): void {
    const { candidates, candidateDistance, centers, centerNorm2 } = this;
    const { dim, data, norm2 } = this.x;
    const row = i * dim;
    for (let t = 0; t < count; t += 4) {
      // Past the end the last candidate is repeated; its duplicate results are simply not read.
      const c0 = candidates[t]!;
      const c1 = candidates[Math.min(t + 1, count - 1)]!;
      const c2 = candidates[Math.min(t + 2, count - 1)]!;
      const c3 = candidates[Math.min(t + 3, count - 1)]!;
      const b0 = c0 * dim;
      const b1 = c1 * dim;
      const b2 = c2 * dim;
      const b3 = c3 * dim;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let j = 0; j < dim; j++) {
        const v = data[row + j]!;
        s0 += v * centers[b0 + j]!;
        s1 += v * centers[b1 + j]!;
        s2 += v * centers[b2 + j]!;
        s3 += v * centers[b3 + j]!;
      }
      const n = norm2[i]!;
      candidateDistance[t] = Math.sqrt(Math.max(0, n + centerNorm2[c0]! - 2 * s0));
      candidateDistance[t + 1] = Math.sqrt(Math.max(0, n + centerNorm2[c1]! - 2 * s1));
      candidateDistance[t + 2] = Math.sqrt(Math.max(0, n + centerNorm2[c2]! - 2 * s2));
      candidateDistance[t + 3] = Math.sqrt(Math.max(0, n + centerNorm2[c3]! - 2 * s3));
    }
  }

  inertia(): number {
    let sum = 0;
    for (let i = 0; i < this.labels.length; i++) sum += this.distance(i, this.labels[i]!) ** 2;
    return sum;
  }

  private updateCenterNorms(): void {
    const { dim } = this.x;
    for (let c = 0; c < this.k; c++) this.centerNorm2[c] = dot(this.centers, c * dim, this.centers, c * dim, dim);
  }

  private updateGaps(): void {
    const { k, centers, halfGap, halfNearest } = this;
    const { dim } = this.x;
    for (let a = 0; a < k; a++) {
      for (let b = a + 1; b < k; b++) {
        const d2 = this.centerNorm2[a]! + this.centerNorm2[b]! - 2 * dot(centers, a * dim, centers, b * dim, dim);
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

function lloydElkan(x: Points, initial: Float64Array, k: number, maxIter: number, tol: number): KMeansResult {
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
  return { k, dim: x.dim, centers: run.centers, labels: run.labels, inertia: run.inertia(), iterations };
}

/** scikit-learn's absolute tolerance: tol × the mean over dimensions of the data's variance. */
function absoluteTolerance(x: Points, tol: number): number {
  const { rows: n, dim, data } = x;
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

/** a[aFrom ..] · b[bFrom ..] over dim entries, in four independent sums for instruction-level parallelism. */
function dot(a: Float64Array, aFrom: number, b: Float64Array, bFrom: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 4 <= dim; j += 4) {
    s0 += a[aFrom + j]! * b[bFrom + j]!;
    s1 += a[aFrom + j + 1]! * b[bFrom + j + 1]!;
    s2 += a[aFrom + j + 2]! * b[bFrom + j + 2]!;
    s3 += a[aFrom + j + 3]! * b[bFrom + j + 3]!;
  }
  for (; j < dim; j++) s0 += a[aFrom + j]! * b[bFrom + j]!;
  return s0 + s1 + s2 + s3;
}

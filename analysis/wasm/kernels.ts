// The routing analysis's numeric kernels, in AssemblyScript: the kNN router's similarity products and
// k-means's distances, compiled to WebAssembly with 128-bit SIMD (npm run generate:wasm-kernels writes
// the module into analysis/wasm/kernels.generated.ts; a unit test checks it is this source's build).
//
// Every kernel computes the same numbers, bit for bit, as the plain JavaScript it replaced: float64
// arithmetic with the same operations in the same order per output (a SIMD lane holds one output's own
// running sum, never a reassociated one), and float32 inputs promoted exactly. Only the time changes
// (A × Bᵀ: about a third of it).
//
// Memory is the caller's (imported); arguments are byte offsets into it. Matrices are row-major float64.

/**
 * out[i * outStride + j] = Σ_t a[i, t] · b[j, t], the sum in order of t, for a (aRows × dim) at `a` and
 * b given as `pairs` pairs of rows at `bp`, interleaved: pair p's entry t is (b[2p, t], b[2p + 1, t]),
 * 16 bytes at bp + (p · dim + t) · 16 (an odd row count is padded with a zero row by the caller).
 * Tiles of 4 rows of a × 2 pairs: each loaded value feeds four multiply-adds.
 */
export function productABt(a: usize, aRows: i32, bp: usize, pairs: i32, dim: i32, out: usize, outStride: i32): void {
  const rowBytes = (<usize>dim) << 3;
  const pairBytes = (<usize>dim) << 4;
  const outRowBytes = (<usize>outStride) << 3;
  for (let i = 0; i < aRows; i += 4) {
    // Past the last row the tile repeats it: the duplicate writes are identical and harmless.
    const i1 = min(i + 1, aRows - 1);
    const i2 = min(i + 2, aRows - 1);
    const i3 = min(i + 3, aRows - 1);
    const a0 = a + <usize>i * rowBytes;
    const a1 = a + <usize>i1 * rowBytes;
    const a2 = a + <usize>i2 * rowBytes;
    const a3 = a + <usize>i3 * rowBytes;
    const r0 = out + <usize>i * outRowBytes;
    const r1 = out + <usize>i1 * outRowBytes;
    const r2 = out + <usize>i2 * outRowBytes;
    const r3 = out + <usize>i3 * outRowBytes;
    for (let p = 0; p < pairs; p += 2) {
      const p1 = min(p + 1, pairs - 1);
      const b0 = bp + <usize>p * pairBytes;
      const b1 = bp + <usize>p1 * pairBytes;
      let c00 = f64x2.splat(0);
      let c01 = f64x2.splat(0);
      let c10 = f64x2.splat(0);
      let c11 = f64x2.splat(0);
      let c20 = f64x2.splat(0);
      let c21 = f64x2.splat(0);
      let c30 = f64x2.splat(0);
      let c31 = f64x2.splat(0);
      for (let t: usize = 0; t < <usize>dim; t++) {
        const y0 = v128.load(b0 + (t << 4));
        const y1 = v128.load(b1 + (t << 4));
        const x0 = v128.load64_splat(a0 + (t << 3));
        const x1 = v128.load64_splat(a1 + (t << 3));
        const x2 = v128.load64_splat(a2 + (t << 3));
        const x3 = v128.load64_splat(a3 + (t << 3));
        c00 = f64x2.add(c00, f64x2.mul(x0, y0));
        c01 = f64x2.add(c01, f64x2.mul(x0, y1));
        c10 = f64x2.add(c10, f64x2.mul(x1, y0));
        c11 = f64x2.add(c11, f64x2.mul(x1, y1));
        c20 = f64x2.add(c20, f64x2.mul(x2, y0));
        c21 = f64x2.add(c21, f64x2.mul(x2, y1));
        c30 = f64x2.add(c30, f64x2.mul(x3, y0));
        c31 = f64x2.add(c31, f64x2.mul(x3, y1));
      }
      const j0 = (<usize>p) << 4; // byte offset of column 2p
      const j1 = (<usize>p1) << 4;
      v128.store(r0 + j0, c00);
      v128.store(r0 + j1, c01);
      v128.store(r1 + j0, c10);
      v128.store(r1 + j1, c11);
      v128.store(r2 + j0, c20);
      v128.store(r2 + j1, c21);
      v128.store(r3 + j0, c30);
      v128.store(r3 + j1, c31);
    }
  }
}

/**
 * a · b over dim entries, in four running sums (entries j ≡ 0, 1, 2, 3 mod 4; the remainder goes to the
 * first), added as ((s0 + s1) + s2) + s3: two lanes of two vectors.
 */
export function dot(a: usize, b: usize, dim: i32): f64 {
  let s01 = f64x2.splat(0);
  let s23 = f64x2.splat(0);
  let j = 0;
  for (; j + 4 <= dim; j += 4) {
    const o = (<usize>j) << 3;
    s01 = f64x2.add(s01, f64x2.mul(v128.load(a + o), v128.load(b + o)));
    s23 = f64x2.add(s23, f64x2.mul(v128.load(a + o + 16), v128.load(b + o + 16)));
  }
  let s0 = f64x2.extract_lane(s01, 0);
  for (; j < dim; j++) s0 += load<f64>(a + ((<usize>j) << 3)) * load<f64>(b + ((<usize>j) << 3));
  return s0 + f64x2.extract_lane(s01, 1) + f64x2.extract_lane(s23, 0) + f64x2.extract_lane(s23, 1);
}

// k-means's points: n rows of dim at `data`, their squared norms at `norm2`. Centers: k rows at `centers`,
// squared norms at `centerNorm2`. assignExactly and elkanAssign take a restart's state in the same order
// (analysis/kernel-heap.ts's KMeansRun), elkanAssign then its scratch.

/** The distance from point i to center c: √max(0, |x|² + |μ|² − 2 x·μ). */
function distance(data: usize, norm2: usize, dim: i32, i: i32, centers: usize, centerNorm2: usize, c: i32): f64 {
  const rowBytes = (<usize>dim) << 3;
  const d2 =
    load<f64>(norm2 + ((<usize>i) << 3)) + load<f64>(centerNorm2 + ((<usize>c) << 3)) - 2 * dot(data + <usize>i * rowBytes, centers + <usize>c * rowBytes, dim);
  return sqrt(max<f64>(0, d2));
}

export function pointDistance(data: usize, norm2: usize, dim: i32, i: i32, centers: usize, centerNorm2: usize, c: i32): f64 {
  return distance(data, norm2, dim, i, centers, centerNorm2, c);
}

/**
 * k-means++'s step for a new center (row c of `centers`, squared norm `cn2`): each point's squared
 * distance to its nearest center so far, at `nearest`, lowered to the new center's where nearer. Returns
 * their sum, in point order.
 */
export function seedStep(data: usize, norm2: usize, n: i32, dim: i32, centers: usize, c: i32, cn2: f64, nearest: usize): f64 {
  const rowBytes = (<usize>dim) << 3;
  const center = centers + <usize>c * rowBytes;
  let total: f64 = 0;
  for (let i = 0; i < n; i++) {
    const d2 = max<f64>(0, load<f64>(norm2 + ((<usize>i) << 3)) + cn2 - 2 * dot(data + <usize>i * rowBytes, center, dim));
    const at = nearest + ((<usize>i) << 3);
    if (d2 < load<f64>(at)) store<f64>(at, d2);
    total += load<f64>(at);
  }
  return total;
}

/**
 * Exact distances from every point to every center: each point's nearest (ties: the lower index) into
 * `labels` and `upper`, every distance into `lower` at [i · k + c]; then each cluster's sum and count.
 */
export function assignExactly(
  data: usize,
  norm2: usize,
  n: i32,
  dim: i32,
  centers: usize,
  centerNorm2: usize,
  k: i32,
  labels: usize,
  upper: usize,
  lower: usize,
  sums: usize,
  counts: usize,
): void {
  for (let i = 0; i < n; i++) {
    let best = Infinity;
    let label = 0;
    const base = lower + ((<usize>i * <usize>k) << 3);
    for (let c = 0; c < k; c++) {
      const d = distance(data, norm2, dim, i, centers, centerNorm2, c);
      store<f64>(base + ((<usize>c) << 3), d);
      if (d < best) {
        best = d;
        label = c;
      }
    }
    store<i32>(labels + ((<usize>i) << 2), label);
    store<f64>(upper + ((<usize>i) << 3), best);
  }
  for (let i = 0; i < n; i++) move(data, dim, i, sums, counts, load<i32>(labels + ((<usize>i) << 2)), 1);
}

/** Adds (sign 1) or takes (−1) point i to or from cluster c's sum and count. */
function move(data: usize, dim: i32, i: i32, sums: usize, counts: usize, c: i32, sign: f64): void {
  const row = data + ((<usize>i * <usize>dim) << 3);
  const sum = sums + ((<usize>c * <usize>dim) << 3);
  for (let j: usize = 0; j < <usize>dim; j++) store<f64>(sum + (j << 3), load<f64>(sum + (j << 3)) + sign * load<f64>(row + (j << 3)));
  const count = counts + ((<usize>c) << 2);
  store<i32>(count, load<i32>(count) + <i32>sign);
}

/**
 * Elkan's E-step: each point whose bounds do not rule every other center out is measured against the
 * candidates left, four centers at a time (each loaded coordinate of the point feeds four products; each
 * center's sum runs in order of j), and moves to the nearest (a tie keeps the current one, then the lower
 * index), its cluster sums following. `halfGap` holds half the distance between each pair of centers
 * (k × k), `halfNearest` half the distance to each center's nearest other; `candidates` and `found` are
 * scratch for k + 4 entries. Returns how many points changed cluster.
 */
export function elkanAssign(
  data: usize,
  norm2: usize,
  n: i32,
  dim: i32,
  centers: usize,
  centerNorm2: usize,
  k: i32,
  labels: usize,
  upper: usize,
  lower: usize,
  sums: usize,
  counts: usize,
  halfGap: usize,
  halfNearest: usize,
  candidates: usize,
  found: usize,
): i32 {
  const rowBytes = (<usize>dim) << 3;
  let changed = 0;
  for (let i = 0; i < n; i++) {
    const was = load<i32>(labels + ((<usize>i) << 2));
    const up = upper + ((<usize>i) << 3);
    if (load<f64>(up) <= load<f64>(halfNearest + ((<usize>was) << 3))) continue;
    const base = lower + ((<usize>i * <usize>k) << 3);
    const gaps = halfGap + ((<usize>was * <usize>k) << 3);
    let count = 0;
    for (let c = 0; c < k; c++) {
      const u = load<f64>(up);
      if (c !== was && u > load<f64>(base + ((<usize>c) << 3)) && u > load<f64>(gaps + ((<usize>c) << 3))) {
        store<i32>(candidates + ((<usize>count) << 2), c);
        count++;
      }
    }
    if (count === 0) continue;
    // The upper bound may be loose: make it exact, and keep the candidates it does not rule out.
    const exact = distance(data, norm2, dim, i, centers, centerNorm2, was);
    store<f64>(up, exact);
    store<f64>(base + ((<usize>was) << 3), exact);
    let kept = 0;
    for (let t = 0; t < count; t++) {
      const c = load<i32>(candidates + ((<usize>t) << 2));
      if (exact > load<f64>(base + ((<usize>c) << 3)) && exact > load<f64>(gaps + ((<usize>c) << 3))) {
        store<i32>(candidates + ((<usize>kept) << 2), c);
        kept++;
      }
    }
    if (kept === 0) continue;
    const row = data + <usize>i * rowBytes;
    const xn = load<f64>(norm2 + ((<usize>i) << 3));
    for (let t = 0; t < kept; t += 4) {
      // Past the end the last candidate is repeated; its duplicate results are simply not read.
      const c0 = load<i32>(candidates + ((<usize>t) << 2));
      const c1 = load<i32>(candidates + ((<usize>min(t + 1, kept - 1)) << 2));
      const c2 = load<i32>(candidates + ((<usize>min(t + 2, kept - 1)) << 2));
      const c3 = load<i32>(candidates + ((<usize>min(t + 3, kept - 1)) << 2));
      const b0 = centers + <usize>c0 * rowBytes;
      const b1 = centers + <usize>c1 * rowBytes;
      const b2 = centers + <usize>c2 * rowBytes;
      const b3 = centers + <usize>c3 * rowBytes;
      let s0: f64 = 0;
      let s1: f64 = 0;
      let s2: f64 = 0;
      let s3: f64 = 0;
      for (let j: usize = 0; j < <usize>dim; j++) {
        const v = load<f64>(row + (j << 3));
        s0 += v * load<f64>(b0 + (j << 3));
        s1 += v * load<f64>(b1 + (j << 3));
        s2 += v * load<f64>(b2 + (j << 3));
        s3 += v * load<f64>(b3 + (j << 3));
      }
      const at = found + ((<usize>t) << 3);
      store<f64>(at, sqrt(max<f64>(0, xn + load<f64>(centerNorm2 + ((<usize>c0) << 3)) - 2 * s0)));
      store<f64>(at + 8, sqrt(max<f64>(0, xn + load<f64>(centerNorm2 + ((<usize>c1) << 3)) - 2 * s1)));
      store<f64>(at + 16, sqrt(max<f64>(0, xn + load<f64>(centerNorm2 + ((<usize>c2) << 3)) - 2 * s2)));
      store<f64>(at + 24, sqrt(max<f64>(0, xn + load<f64>(centerNorm2 + ((<usize>c3) << 3)) - 2 * s3)));
    }
    let own = was;
    for (let t = 0; t < kept; t++) {
      const c = load<i32>(candidates + ((<usize>t) << 2));
      const d = load<f64>(found + ((<usize>t) << 3));
      store<f64>(base + ((<usize>c) << 3), d);
      if (d < load<f64>(up)) {
        own = c;
        store<f64>(up, d);
      }
    }
    if (own !== was) {
      store<i32>(labels + ((<usize>i) << 2), own);
      move(data, dim, i, sums, counts, was, -1);
      move(data, dim, i, sums, counts, own, 1);
      changed++;
    }
  }
  return changed;
}

// A × Bᵀ for row-major Float32 matrices, the similarity products behind kNN, by the WebAssembly kernel
// productABt (analysis/wasm/kernels.ts: float64 sums in order, two columns per SIMD lane pair).

import { KernelHeap, type Placed } from './kernel-heap.js';

/** The byte lengths productABt's operands take in a heap: A's rows, B's row pairs, and `outRows` rows of output. */
export function productBytes(aRows: number, bRows: number, dim: number, outRows: number): number[] {
  const pairs = Math.ceil(bRows / 2);
  return [aRows * dim * 8, pairs * dim * 16, outRows * pairs * 2 * 8];
}

/** Rows of `data` (by position, in the order given) written into `into` as the kernel's A operand: float64 rows. */
export function copyRows(into: Float64Array, data: Float32Array, dim: number, rows: ArrayLike<number>): void {
  for (let i = 0; i < rows.length; i++) into.set(data.subarray(rows[i]! * dim, rows[i]! * dim + dim), i * dim);
}

/**
 * Rows of `data` (by position) placed as the kernel's B operand: pairs of rows interleaved entry by entry
 * in float64, an odd count padded with a zero row. The product then has 2 · pairs columns.
 */
export function placeRowPairs(heap: KernelHeap, data: Float32Array, dim: number, rows: ArrayLike<number>): Placed<Float64Array> & { pairs: number } {
  const pairs = Math.ceil(rows.length / 2);
  const placed = heap.f64(pairs * dim * 2);
  const out = placed.view;
  for (let p = 0; p < pairs; p++) {
    const first = rows[2 * p]! * dim;
    for (let t = 0; t < dim; t++) out[(p * dim + t) * 2] = data[first + t]!;
    if (2 * p + 1 === rows.length) continue;
    const second = rows[2 * p + 1]! * dim;
    for (let t = 0; t < dim; t++) out[(p * dim + t) * 2 + 1] = data[second + t]!;
  }
  return { ...placed, pairs };
}

/** out[i * bRows + j] = a_i · b_j, for a (aRows × dim) and b (bRows × dim). */
export function productABt(a: Float32Array, aRows: number, b: Float32Array, bRows: number, dim: number, out: Float64Array): void {
  if (aRows === 0 || bRows === 0) return;
  const heap = KernelHeap.sized(productBytes(aRows, bRows, dim, aRows));
  const left = heap.f64(aRows * dim);
  copyRows(
    left.view,
    a,
    dim,
    Int32Array.from({ length: aRows }, (_, i) => i),
  );
  const right = placeRowPairs(
    heap,
    b,
    dim,
    Int32Array.from({ length: bRows }, (_, i) => i),
  );
  const stride = right.pairs * 2;
  const product = heap.f64(aRows * stride);
  heap.kernels.productABt(left.at, aRows, right.at, right.pairs, dim, product.at, stride);
  for (let i = 0; i < aRows; i++) out.set(product.view.subarray(i * stride, i * stride + bRows), i * bRows);
}

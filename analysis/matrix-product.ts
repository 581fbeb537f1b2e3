// A × Bᵀ for row-major Float32 matrices, register-tiled 4 × 4: the similarity products behind kNN.
// Plain JavaScript, no SIMD: the tiling lets each loaded value feed four multiply-adds.

/** out[i * bRows + j] = a_i · b_j, for a (aRows × dim) and b (bRows × dim). */
export function productABt(a: Float32Array, aRows: number, b: Float32Array, bRows: number, dim: number, out: Float64Array): void {
  if (aRows === 0 || bRows === 0) return;
  for (let i = 0; i < aRows; i += 4) {
    // Past the last row the tile repeats it: the duplicate writes are identical and harmless.
    const i1 = Math.min(i + 1, aRows - 1);
    const i2 = Math.min(i + 2, aRows - 1);
    const i3 = Math.min(i + 3, aRows - 1);
    const a0 = i * dim;
    const a1 = i1 * dim;
    const a2 = i2 * dim;
    const a3 = i3 * dim;
    for (let j = 0; j < bRows; j += 4) {
      const j1 = Math.min(j + 1, bRows - 1);
      const j2 = Math.min(j + 2, bRows - 1);
      const j3 = Math.min(j + 3, bRows - 1);
      const b0 = j * dim;
      const b1 = j1 * dim;
      const b2 = j2 * dim;
      const b3 = j3 * dim;
      let c00 = 0,
        c01 = 0,
        c02 = 0,
        c03 = 0;
      let c10 = 0,
        c11 = 0,
        c12 = 0,
        c13 = 0;
      let c20 = 0,
        c21 = 0,
        c22 = 0,
        c23 = 0;
      let c30 = 0,
        c31 = 0,
        c32 = 0,
        c33 = 0;
      for (let t = 0; t < dim; t++) {
        const x0 = a[a0 + t]!;
        const x1 = a[a1 + t]!;
        const x2 = a[a2 + t]!;
        const x3 = a[a3 + t]!;
        const y0 = b[b0 + t]!;
        const y1 = b[b1 + t]!;
        const y2 = b[b2 + t]!;
        const y3 = b[b3 + t]!;
        c00 += x0 * y0;
        c01 += x0 * y1;
        c02 += x0 * y2;
        c03 += x0 * y3;
        c10 += x1 * y0;
        c11 += x1 * y1;
        c12 += x1 * y2;
        c13 += x1 * y3;
        c20 += x2 * y0;
        c21 += x2 * y1;
        c22 += x2 * y2;
        c23 += x2 * y3;
        c30 += x3 * y0;
        c31 += x3 * y1;
        c32 += x3 * y2;
        c33 += x3 * y3;
      }
      const r0 = i * bRows;
      const r1 = i1 * bRows;
      const r2 = i2 * bRows;
      const r3 = i3 * bRows;
      out[r0 + j] = c00;
      out[r0 + j1] = c01;
      out[r0 + j2] = c02;
      out[r0 + j3] = c03;
      out[r1 + j] = c10;
      out[r1 + j1] = c11;
      out[r1 + j2] = c12;
      out[r1 + j3] = c13;
      out[r2 + j] = c20;
      out[r2 + j1] = c21;
      out[r2 + j2] = c22;
      out[r2 + j3] = c23;
      out[r3 + j] = c30;
      out[r3 + j1] = c31;
      out[r3 + j2] = c32;
      out[r3 + j3] = c33;
    }
  }
}

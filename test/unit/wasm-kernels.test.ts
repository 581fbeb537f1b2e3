// The WebAssembly the analysis runs is what AssemblyScript builds from analysis/wasm/kernels.ts today (a
// stale module fails here, naming the command that remakes it), and its heap refuses to overrun itself.
// What the kernels compute is pinned bit for bit by analysis-scale-pins.test.ts.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KernelHeap } from '../../analysis/kernel-heap.js';
import { kmeans } from '../../analysis/kmeans.js';
import { PythonRandom } from '../../analysis/python-random.js';
import { compileKernels, generatedModule, KERNELS_GENERATED } from '../../scripts/generate-wasm-kernels.js';

describe('the WebAssembly kernels', () => {
  it('analysis/wasm/kernels.generated.ts is the build of analysis/wasm/kernels.ts', async () => {
    const built = generatedModule(await compileKernels());
    expect(readFileSync(KERNELS_GENERATED, 'utf8'), `${KERNELS_GENERATED}: stale: run \`npm run generate:wasm-kernels\` and commit the result`).toBe(built);
  }, 60_000);

  it('a heap places aligned arrays, refuses what does not fit, and hands released room back zeroed', () => {
    const heap = KernelHeap.sized([24, 8]);
    const a = heap.f64(3);
    const mark = heap.mark();
    const b = heap.i32(2);
    expect([a.at, b.at]).toEqual([0, 32]);
    b.view.set([7, 9]);
    expect(() => heap.f64(heap.capacity)).toThrow(/kernel heap: .* bytes asked for/);
    heap.release(mark);
    expect(Array.from(heap.i32(2).view)).toEqual([0, 0]);
    expect(heap.kernels.dot(a.at, a.at, 3)).toBe(0);
    a.view.set([1, 2, 3]);
    expect(heap.kernels.dot(a.at, a.at, 3)).toBe(14);
  });

  it('an input too big for a 32-bit WebAssembly memory is refused with what to do, before anything is allocated', () => {
    expect(() => KernelHeap.sized([5 * 1024 ** 3])).toThrow(/need 5\.0 GiB of memory for this input, more than WebAssembly's 4 GiB: analyse fewer queries/);
  });

  it('k-means refuses k < 1 (it would have no cluster to put a point in)', () => {
    const x = { rows: 3, dim: 4, data: new Float32Array(12).fill(0.5) };
    expect(() => kmeans(x, { k: 0, nInit: 1, rng: new PythonRandom(1) })).toThrow('k-means needs at least one cluster, got k = 0');
  });
});

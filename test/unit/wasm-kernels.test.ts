// The WebAssembly the analysis runs is what AssemblyScript builds from analysis/wasm/kernels.ts today (a
// stale module fails here, naming the command that remakes it), and its heap refuses to overrun itself.
// What the kernels compute is pinned bit for bit by analysis-scale-pins.test.ts.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { KernelHeap } from '../../analysis/kernel-heap.js';
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
});

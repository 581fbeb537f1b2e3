// The WebAssembly kernels of analysis/wasm/kernels.ts, each instance with a memory of its own: a caller
// sizes the memory for everything it will place there, takes typed-array views of it (the kernels are
// given their byte offsets), and drops the heap when done. The memory never grows, so views stay valid.

import { KERNELS_WASM_BASE64 } from './wasm/kernels.generated.js';

/** The kernels' exports (see analysis/wasm/kernels.ts for what each computes); every pointer is a byte offset. */
export interface Kernels {
  productABt(a: number, aRows: number, bp: number, pairs: number, dim: number, out: number, outStride: number): void;
  dot(a: number, b: number, dim: number): number;
  pointDistance(data: number, norm2: number, dim: number, i: number, centers: number, centerNorm2: number, c: number): number;
  seedStep(data: number, norm2: number, n: number, dim: number, centers: number, c: number, cn2: number, nearest: number): number;
  assignExactly(...run: KMeansRun): void;
  elkanAssign(...args: [...run: KMeansRun, halfGap: number, halfNearest: number, candidates: number, found: number]): number;
}

/** A k-means restart's state as the kernels take it: the points, the centers, Elkan's bounds and the cluster sums. */
export type KMeansRun = [
  data: number,
  norm2: number,
  n: number,
  dim: number,
  centers: number,
  centerNorm2: number,
  k: number,
  labels: number,
  upper: number,
  lower: number,
  sums: number,
  counts: number,
];

/** An array placed in a heap: its byte offset, for the kernels, and a view, for JavaScript. */
export interface Placed<T> {
  at: number;
  view: T;
}

const ALIGN = 16; // a v128's size: every array starts on it
const PAGE = 65536;
/** A 32-bit WebAssembly memory's limit: 65,536 pages. */
const MAX_BYTES = 65536 * PAGE;
const align = (bytes: number) => Math.ceil(bytes / ALIGN) * ALIGN;

/** The part of the WebAssembly API used here: @types/node 20 declares the namespace's types, not the global. */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

let compiled: object | undefined;

export class KernelHeap {
  readonly kernels: Kernels;
  private readonly buffer: ArrayBuffer;
  private top = 0;

  /** A heap with room for arrays of these byte lengths (each is aligned). */
  static sized(byteLengths: number[]): KernelHeap {
    return new KernelHeap(byteLengths.reduce((sum, bytes) => sum + align(bytes), 0));
  }

  constructor(readonly capacity: number) {
    if (capacity > MAX_BYTES)
      throw new RangeError(
        `the analysis's numeric kernels need ${(capacity / 1024 ** 3).toFixed(1)} GiB of memory for this input, more than WebAssembly's ${MAX_BYTES / 1024 ** 3} GiB: analyse fewer queries at once, or embed with fewer dimensions`,
      );
    compiled ??= new wasm.Module(Buffer.from(KERNELS_WASM_BASE64, 'base64'));
    const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(capacity / PAGE)) });
    this.kernels = new wasm.Instance(compiled, { env: { memory } }).exports as unknown as Kernels;
    this.buffer = memory.buffer;
  }

  f64(length: number): Placed<Float64Array> {
    const at = this.take(length * 8);
    return { at, view: new Float64Array(this.buffer, at, length) };
  }

  i32(length: number): Placed<Int32Array> {
    const at = this.take(length * 4);
    return { at, view: new Int32Array(this.buffer, at, length) };
  }

  /** Where the next array goes: release(mark()) later frees everything placed after it (zeroed for reuse). */
  mark(): number {
    return this.top;
  }

  release(mark: number): void {
    new Uint8Array(this.buffer, mark, this.top - mark).fill(0);
    this.top = mark;
  }

  private take(bytes: number): number {
    const at = this.top;
    if (at + bytes > this.capacity) throw new RangeError(`kernel heap: ${bytes} bytes asked for with ${this.capacity - at} left`);
    this.top = at + align(bytes);
    return at;
  }
}

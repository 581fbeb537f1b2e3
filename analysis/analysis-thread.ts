// A second thread for the routing analysis's heaviest steps, so that a large analysis keeps both cores of a
// small machine busy. It reads about half of a release's result files while the main thread reads the rest
// (load-llmrouterbench.ts), extracts the terms of about half the texts the offline embedder embeds, and runs
// the kNN router's neighbour search beside the cluster router's k-means (on LLMRouterBench's release shape
// 1.0 s and 1.25 s). One thread per process, started on first use and kept, so its start is paid once, while
// the main thread works. The numbers are the in-place functions' own, bit for bit. Should the thread fail
// (it could not start, or died), the main thread does what the thread left undone: slower, the same result.

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData, type TransferListItem } from 'node:worker_threads';
import type { EmbeddingMatrix } from './embedding-matrix.js';
import { extractTerms, joinTerms, type SparseTerms } from './hashed-terms.js';
import { nearestTrainQueries } from './knn-router.js';
import { packReading, readResultFile, TextTable, unpackReading, type FileReading, type PackedReading, type ResultFile } from './llmrouterbench-file.js';

/** Below this many (test, train) pairs the search is done in place: a thread's start (~0.3 s) would cost more than it saves. */
export const THREAD_MIN_PAIRS = 20_000_000;
const MARKER = 'benchrouter/analysis-thread';

/** Work both threads share out item by item (see shareWithThread). */
type SharedTask = { task: 'terms'; texts: readonly string[]; maxChars: number } | { task: 'read-files'; files: ResultFile[] };
type Task =
  | { task: 'neighbours'; rows: number; dim: number; data: Float32Array; train: Int32Array; test: Int32Array; k: number }
  | (SharedTask & { next: SharedArrayBuffer });
type Request = Task & { id: number };

type Reply = { id: number; partial: { at: number; value: unknown } } | { id: number; done: unknown } | { id: number; error: string };

export interface NeighbourSearch {
  k: number;
  neighbours: Int32Array;
  /** The search's own time, wherever it ran. */
  seconds: number;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  partial?: (value: unknown) => void;
}

/** The process's analysis thread, and what it has been asked and not yet answered. */
class AnalysisThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(onGone: () => void) {
    const bundled = analysisThreadEntry();
    this.worker = bundled
      ? new Worker(bundled, { workerData: { marker: MARKER } })
      : // Run from the sources (tests, tsx), the thread loads this module through tsx's API: Node 20 applies
        // no --import hooks to a thread's entry.
        new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`,
          { eval: true, workerData: { marker: MARKER } },
        );
    // An idle thread does not keep the process alive; one with a request open does (see request).
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => {
      const open = this.pending.get(reply.id);
      if (!open) return;
      if ('partial' in reply) return open.partial?.(reply.partial);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      if ('error' in reply) open.reject(new Error(`the analysis thread failed: ${reply.error}`));
      else open.resolve(reply.done);
    });
    const fail = (error: Error) => {
      onGone();
      for (const open of this.pending.values()) open.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', (error) => fail(new Error(`the analysis thread failed: ${error.message}`, { cause: error })));
    this.worker.on('exit', (code) => fail(new Error(`the analysis thread exited with code ${code} before it answered`)));
  }

  request<T>(message: Task, transfer: TransferListItem[] = [], partial?: (value: unknown) => void): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, partial });
      this.worker.ref();
      this.worker.postMessage({ ...message, id }, transfer);
    });
  }
}

let current: AnalysisThread | undefined;

/** The global under which cli/launch.mjs puts the folder of the bundle the CLI runs from. */
export const CLI_BUNDLE_KEY = Symbol.for('benchrouter.cli-bundle');

/**
 * This module's build in the CLI's bundle, when the process runs from one (cli/launch.mjs builds it as an
 * entry of its own and says where): loaded as it is, with no TypeScript loader to start.
 */
function analysisThreadEntry(): URL | undefined {
  const bundle = (globalThis as Record<symbol, unknown>)[CLI_BUNDLE_KEY];
  return typeof bundle === 'string' ? pathToFileURL(path.join(bundle, 'analysis-thread.js')) : undefined;
}

/** The process's analysis thread, started now if it is not running (after a failure, a new one). */
function analysisThread(): AnalysisThread {
  if (!current) {
    const thread: AnalysisThread = new AnalysisThread(() => {
      if (current === thread) current = undefined;
    });
    current = thread;
  }
  return current;
}

function search(embeddings: EmbeddingMatrix, train: Int32Array, test: Int32Array, k: number): NeighbourSearch {
  const started = performance.now();
  const found = nearestTrainQueries(embeddings, train, test, k);
  return { ...found, seconds: (performance.now() - started) / 1000 };
}

/**
 * nearestTrainQueries, on the analysis thread when the search is large enough to be worth it (or `thread`
 * says so either way). Start it, do other work, then await it.
 */
export function searchNeighbours(
  embeddings: EmbeddingMatrix,
  train: Int32Array,
  test: Int32Array,
  k: number,
  thread = train.length * test.length >= THREAD_MIN_PAIRS,
): Promise<NeighbourSearch> {
  if (!thread) return Promise.resolve(search(embeddings, train, test, k));
  return analysisThread()
    .request<NeighbourSearch>({ task: 'neighbours', rows: embeddings.rows, dim: embeddings.dim, data: embeddings.data, train, test, k })
    .catch(() => search(embeddings, train, test, k));
}

/**
 * Items [0, count) of `task`, done on both threads: each takes the next item nobody has taken yet off a
 * shared counter, so a thread that is slower (or still starting) takes fewer; `here` does one on this
 * thread, `received` makes one the analysis thread sent ready for use. Should the analysis thread fail,
 * this one does what it left undone. The results come in item order.
 */
async function shareWithThread<T>(count: number, task: SharedTask, here: (at: number) => T, received: (value: unknown) => T): Promise<T[]> {
  const next = new SharedArrayBuffer(4);
  const counter = new Int32Array(next);
  const results = new Array<T>(count);
  const theirs = analysisThread().request<void>({ ...task, next }, [], (partial) => {
    const { at, value } = partial as { at: number; value: unknown };
    results[at] = received(value);
  });
  for (let at = Atomics.add(counter, 0, 1); at < count; at = Atomics.add(counter, 0, 1)) results[at] = here(at);
  await theirs.catch(() => {
    for (let at = 0; at < count; at++) results[at] ??= here(at);
  });
  return results;
}

/** The analysis thread's side of shareWithThread: `make` gives an item's value and what of it to transfer. */
function takeTurns(request: Request & { next: SharedArrayBuffer }, count: number, make: (at: number) => { value: unknown; transfer?: ArrayBuffer[] }): void {
  const counter = new Int32Array(request.next);
  for (let at = Atomics.add(counter, 0, 1); at < count; at = Atomics.add(counter, 0, 1)) {
    const { value, transfer } = make(at);
    parentPort!.postMessage({ id: request.id, partial: { at, value } } satisfies Reply, transfer ?? []);
  }
  parentPort!.postMessage({ id: request.id, done: undefined } satisfies Reply);
}

/** Every file read (readResultFile) on both threads, in the order of `files`. */
export async function readResultFilesOnTwoThreads(files: ResultFile[]): Promise<FileReading[]> {
  const texts: string[] = [];
  return shareWithThread(
    files.length,
    { task: 'read-files', files },
    (at) => readResultFile(files[at]!),
    (value) => unpackReading(value as PackedReading, texts),
  );
}

/** How many texts each thread takes at a time: small enough that neither waits long for the other at the end. */
const TEXTS_PER_TAKE = 256;

function termsOfRun(texts: readonly string[], maxChars: number, run: number): SparseTerms {
  return extractTerms(texts, maxChars, run * TEXTS_PER_TAKE, Math.min(texts.length, (run + 1) * TEXTS_PER_TAKE));
}

/** extractTerms of every text, in runs of TEXTS_PER_TAKE texts on both threads, the runs joined in order. */
export async function extractTermsOnTwoThreads(texts: readonly string[], maxChars: number): Promise<SparseTerms> {
  const runs = Math.ceil(texts.length / TEXTS_PER_TAKE);
  const parts = await shareWithThread(
    runs,
    { task: 'terms', texts, maxChars },
    (run) => termsOfRun(texts, maxChars, run),
    (value) => value as SparseTerms,
  );
  return joinTerms(parts);
}

function answer(request: Request): void {
  try {
    if (request.task === 'neighbours') {
      const result = search({ rows: request.rows, dim: request.dim, data: request.data }, request.train, request.test, request.k);
      parentPort!.postMessage({ id: request.id, done: result } satisfies Reply, [result.neighbours.buffer as ArrayBuffer]);
    } else if (request.task === 'terms') {
      const { texts, maxChars } = request;
      takeTurns(request, Math.ceil(texts.length / TEXTS_PER_TAKE), (run) => {
        const terms = termsOfRun(texts, maxChars, run);
        return { value: terms, transfer: [terms.start.buffer, terms.features.buffer, terms.tf.buffer] as ArrayBuffer[] };
      });
    } else {
      const table = new TextTable();
      takeTurns(request, request.files.length, (at) => ({ value: packReading(readResultFile(request.files[at]!), table) }));
    }
  } catch (error) {
    parentPort!.postMessage({ id: request.id, error: (error as Error).message } satisfies Reply);
  }
}

if (!isMainThread && (workerData as { marker?: string } | null)?.marker === MARKER) parentPort!.on('message', answer);

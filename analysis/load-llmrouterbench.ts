// Reads a directory in LLMRouterBench's release layout, `results/bench/<dataset>/<split>/<model>/*.json`,
// the way its own loader does: files with `demo: true` are skipped, the newest remaining file per
// (dataset, split, model) is used (by its `YYYYMMDD_HHMMSS` suffix, else its modification time), a
// null score counts as 0, and Python's NaN / Infinity tokens are read. File I/O lives here, not in the analysis.

import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { readResultFilesOnTwoThreads } from './analysis-thread.js';
import { readResultFile, type FileReading, type ResultFile } from './llmrouterbench-file.js';
import type { ModelOutcome } from './model-outcome.js';
import { ProblemList } from './record-problems.js';

export interface LlmRouterBenchLoad {
  records: ModelOutcome[];
  /** The files used, one per (dataset, split, model), in the order read. */
  files: string[];
  /** Files skipped for `demo: true`, and older files superseded by a newer one. */
  skippedDemo: string[];
  superseded: string[];
  /** How many threads read the files (TWO_THREADS_MIN_BYTES). */
  threads: 1 | 2;
}

type Candidate = Extract<FileReading, { kind: 'records' }>;

/** From this many bytes of result files on, the analysis thread reads about half of them (analysis-thread.ts). */
export const TWO_THREADS_MIN_BYTES = 32 * 1024 * 1024;

/**
 * `dir` may be the release root (holding results/bench), `results`, or `results/bench` itself. `threads`
 * says whether the files are read on two threads; by default they are from TWO_THREADS_MIN_BYTES on.
 */
export async function loadLlmRouterBench(dir: string, threads?: 1 | 2): Promise<LlmRouterBenchLoad> {
  const problems = new ProblemList();
  const bench = [path.join(dir, 'results', 'bench'), path.join(dir, 'bench'), dir].find((d) => existsSync(d) && statSync(d).isDirectory());
  if (!bench) {
    problems.add({ file: dir, field: '', message: 'not a directory: expected a directory in the layout results/bench/<dataset>/<split>/<model>/*.json' });
    problems.throwIfAny();
  }

  // Directories are walked in sorted order, as LLMRouterBench reads its files sorted by path: the
  // query order, and so the split, follow from it.
  const files: ResultFile[] = [];
  for (const datasetDir of subdirectories(bench!)) {
    for (const splitDir of subdirectories(path.join(bench!, datasetDir))) {
      for (const modelDir of subdirectories(path.join(bench!, datasetDir, splitDir))) {
        const where = path.join(bench!, datasetDir, splitDir, modelDir);
        for (const name of readdirSync(where)
          .filter((n) => n.endsWith('.json'))
          .sort())
          files.push({ file: path.join(where, name), datasetDir, splitDir, modelDir });
      }
    }
  }
  if (files.length === 0) problems.add({ file: bench!, field: '', message: 'no result files: expected <dataset>/<split>/<model>/*.json under it' });
  const twoThreads = (threads ?? (files.length > 1 && totalBytes(files) >= TWO_THREADS_MIN_BYTES ? 2 : 1)) === 2;
  const readings = twoThreads ? await readResultFilesOnTwoThreads(files) : files.map(readResultFile);

  const groups = new Map<string, Candidate[]>();
  const skippedDemo: string[] = [];
  for (const reading of readings) {
    if (reading.kind === 'unreadable') problems.add({ file: reading.file, field: '', message: reading.message });
    else if (reading.kind === 'demo') skippedDemo.push(reading.file);
    else {
      const key = `${reading.dataset}\u0000${reading.split}\u0000${reading.model}`;
      groups.set(key, [...(groups.get(key) ?? []), reading]);
    }
  }

  const chosen: Candidate[] = [];
  const superseded: string[] = [];
  for (const candidates of groups.values()) {
    // Python's max(): the first of equal stamps wins.
    const newest = candidates.reduce((best, c) => (c.stamp > best.stamp ? c : best));
    chosen.push(newest);
    for (const c of candidates) if (c !== newest) superseded.push(c.file);
  }
  chosen.sort((a, b) => comparePaths(a.file, b.file));

  // A dataset evaluated on several splits is analysed as LLMRouterBench does: each (dataset, split)
  // is a dataset of its own, `dataset/split`, in the macro mean, while the train/test split shuffles
  // the dataset's prompts together (its group).
  const splitsOf = new Map<string, Set<string>>();
  for (const c of chosen) splitsOf.set(c.dataset, (splitsOf.get(c.dataset) ?? new Set()).add(c.split));

  const records: ModelOutcome[] = [];
  for (const c of chosen) {
    for (const p of c.problems) problems.add({ file: c.file, ...p });
    if (splitsOf.get(c.dataset)!.size > 1) for (const r of c.records) r.benchmark = `${c.dataset}/${c.split}`;
    for (const r of c.records) records.push(r);
  }
  problems.throwIfAny();
  return { records, files: chosen.map((c) => c.file), skippedDemo, superseded, threads: twoThreads ? 2 : 1 };
}

/** The files' size; one that cannot be read counts 0 here (readResultFile says what is wrong with it). */
function totalBytes(files: ResultFile[]): number {
  let bytes = 0;
  for (const { file } of files) bytes += statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  return bytes;
}

function subdirectories(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/** Python's Path ordering: component by component. */
function comparePaths(a: string, b: string): number {
  const pa = a.split(path.sep);
  const pb = b.split(path.sep);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
  return pa.length - pb.length;
}

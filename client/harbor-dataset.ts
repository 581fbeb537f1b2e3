// `br run <harbor-dataset-dir>`: a directory that is no benchmark but a Harbor dataset (task folders, each with a
// task.toml) runs through the built-in harbor benchmark. It is staged as a copy of that benchmark with the dataset
// under datasets/<name>, in a directory named by the content of both, so the run pins a directory that stays as it
// was (a worker reads it for the run's whole life, a retry too) and a second run of the same dataset stages nothing.

import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { BUILTIN_BENCHMARKS_DIR } from '../contract/builtin-benchmarks.js';

/** Whether `dir` is a Harbor dataset: no benchmark, but subdirectories holding a task.toml. */
export function isHarborDataset(dir: string): boolean {
  if (existsSync(path.join(dir, 'benchmark.yaml')) || !statSync(dir).isDirectory()) return false;
  return readdirSync(dir, { withFileTypes: true }).some((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'task.toml')));
}

/** The dataset's name as the harbor benchmark's template takes it: its folder's name, lower-case, other characters as "-". */
export function datasetName(dir: string): string {
  const name = path
    .basename(path.resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  return name || 'dataset';
}

/** Stages the dataset as a harbor benchmark under `stagingRoot`; its directory and the task that runs the dataset. */
export function stageHarborDataset(dataset: string, stagingRoot: string): { benchmarkDir: string; task: string } {
  const harbor = path.join(BUILTIN_BENCHMARKS_DIR, 'harbor');
  const task = datasetName(dataset);
  const key = directoryDigest(dataset).slice(0, 16) + directoryDigest(harbor).slice(0, 8);
  const benchmarkDir = path.join(stagingRoot, `harbor-${task}-${key}`);
  if (existsSync(benchmarkDir)) return { benchmarkDir, task };
  mkdirSync(stagingRoot, { recursive: true });
  const partial = `${benchmarkDir}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  cpSync(harbor, partial, { recursive: true, filter: (source) => path.relative(harbor, source) !== 'datasets' });
  cpSync(dataset, path.join(partial, 'datasets', task), { recursive: true, dereference: false });
  try {
    renameSync(partial, benchmarkDir);
  } catch (error) {
    // Another submit staged the same content meanwhile: theirs is the same.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(benchmarkDir)) throw error;
  }
  return { benchmarkDir, task };
}

// From validated run options to the RunSpec a run pins: the benchmark loaded (once) and its tasks checked,
// the tokenizer's file hashed, defaults and the price table filled in. `br` (flags) and the API (a body) both
// validate with runs/run-options.ts first, then come here.

import path from 'node:path';
import type { Benchmark } from '../contract/benchmark.js';
import { resolveBenchmarkDir } from '../contract/builtin-benchmarks.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { InputError } from '../contract/problems.js';
import { loadTokenizerFile, TokenizerFileError } from '../gateway/prompt-truncation.js';
import type { RunOptions, RunRequest } from '../runs/run-options.js';
import type { RunSpec } from '../runs/run-spec.js';
import { createRunSpec } from './runs.js';

export { resolveBenchmarkDir };

/** Where a request came from, for its errors: a body or file (`file`, fields named as `at.field`) or the flags. */
export interface RequestSource {
  /** The file or body name errors give (absent: the command line, where each error names its flag). */
  file?: string;
  runId?: string;
  /** What names `tasks` in an error on the command line. */
  tasksFrom?: string;
}

/** The RunSpec of a validated API request. */
export function runSpecFromRequest(request: RunRequest, where: RequestSource = {}): RunSpec {
  const { benchmark: benchmarkArg, ...options } = request;
  return runSpecOfBenchmark(loadBenchmark(resolveBenchmarkDir(benchmarkArg, where.file ? 'benchmark' : '')), options, where);
}

/** The RunSpec of validated options for a loaded benchmark: its tasks checked, the tokenizer hashed, the run id set. */
export function runSpecOfBenchmark(benchmark: Benchmark, options: RunOptions, where: RequestSource = {}): RunSpec {
  const tokenizer = options.tokenizer !== undefined ? hashedTokenizer(options.tokenizer, where.file) : undefined;
  const spec = createRunSpec(benchmark, { ...options, ...(tokenizer ? { tokenizer: tokenizer.path } : {}) }, tokenizer, {
    file: where.file ?? where.tasksFrom ?? path.join(benchmark.dir, 'benchmark.yaml'),
    field: where.file ? 'tasks' : '',
  });
  return where.runId ? { ...spec, runId: where.runId } : spec;
}

/**
 * The tokenizer the run pins: its absolute path and SHA-256, after checking here that the file is a
 * tokenizer (errors name the file: missing, unreadable, not a tokenizer).
 */
function hashedTokenizer(tokenizerPath: string, file: string | undefined): { path: string; sha256: string } {
  const absolute = path.resolve(tokenizerPath);
  try {
    return { path: absolute, sha256: loadTokenizerFile(absolute).sha256 };
  } catch (error) {
    if (!(error instanceof TokenizerFileError)) throw error;
    throw new InputError([{ file: error.file, field: file ? 'tokenizer' : '--tokenizer', message: error.problem }]);
  }
}

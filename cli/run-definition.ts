// From the command line to a run definition: a benchmark argument resolved to a directory, the run
// option flags (over --gen-config and a suite entry's settings) validated by the schema the API uses too,
// and suites found by name.

import { BUILTIN_BENCHMARKS_DIR } from '../contract/builtin-benchmarks.js';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { settingsFrom, type Settings } from '../config/settings.js';
import { isHarborDataset, stageHarborDataset } from '../client/harbor-dataset.js';
import type { Benchmark } from '../contract/benchmark.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { InputError } from '../contract/problems.js';
import { resolveBenchmarkDir, runSpecOfBenchmark } from '../client/run-request.js';
import { RunOptionsSchema, type RunOptions } from '../runs/run-options.js';
import type { RunSpec } from '../runs/run-spec.js';
import { loadSuites, selectEntries, type Suite, type SuiteEntry } from '../runs/suites.js';
import { positiveInt } from './flag-values.js';
import {
  commaList,
  generationConfigLayers,
  generationOptionsOf,
  layerOptions,
  requestProblems,
  runOptionsFromFlags,
  type ParsedFlags,
} from './run-option-flags.js';

export { resolveBenchmarkDir };

/**
 * The run options the flags stand for. Generation settings layer weakest first: --gen-config's defaults and
 * benchmark entry, a suite entry's `generation`, then the flags; a suite entry's tasks, repeats and limit
 * are the entry's own choice and apply over the flags.
 */
export function optionsFromFlags(benchmark: Benchmark, flags: ParsedFlags, suite?: { entry: SuiteEntry; file: string; field: string }): RunOptions {
  const { entry } = suite ?? {};
  const layered = layerOptions(
    ...(flags.genConfig ? generationConfigLayers(flags.genConfig, benchmark.name) : []),
    entry?.generation ? generationOptionsOf(entry.generation, suite!.file, `${suite!.field}.generation`) : {},
    runOptionsFromFlags(flags),
    { tasks: entry?.tasks, repeats: entry?.repeats, limit: entry?.limit },
  );
  const parsed = RunOptionsSchema.safeParse(layered, { reportInput: true });
  if (!parsed.success) throw new InputError(requestProblems(parsed.error, 'flags'));
  return parsed.data;
}

/** A run definition from the flags, through the same options → RunSpec step `POST /evals/submit` takes; benchmark.yaml is read once. */
export function specFromFlags(benchmarkArg: string, flags: ParsedFlags, suite?: { entry: SuiteEntry; file: string; field: string }): RunSpec {
  let dir = resolveBenchmarkDir(benchmarkArg);
  // A Harbor dataset directory runs as the harbor benchmark's task of that dataset.
  if (isHarborDataset(dir)) {
    const staged = stageHarborDataset(dir, path.join(settingsFrom(process.env, os.homedir()).home, 'staged'));
    dir = staged.benchmarkDir;
    if (flags.tasks === undefined) flags = { ...flags, tasks: staged.task };
  }
  const benchmark = loadBenchmark(dir);
  return runSpecOfBenchmark(benchmark, optionsFromFlags(benchmark, flags, suite), { tasksFrom: '--tasks' });
}

/** A suite by name, from the built-in file and the user's (`--suites`, else ~/.benchrouter/suites.yaml). */
export function findSuite(name: string, suitesFile: string | undefined, settings: Settings): Suite {
  if (suitesFile && !existsSync(suitesFile)) throw new InputError([{ file: suitesFile, field: '', message: 'file not found' }]);
  const suites = loadSuites([path.join(BUILTIN_BENCHMARKS_DIR, 'suites.yaml'), suitesFile ?? path.join(settings.home, 'suites.yaml')]);
  const suite = suites.get(name);
  if (!suite) throw new InputError([{ file: '--suite', field: '', message: `no suite "${name}" (have ${[...suites.keys()].join(', ')})` }]);
  return suite;
}

/** The flags that pick a suite and its benchmarks (`br run --suite`, `br schedule create --suite`). */
export interface SuiteFlags {
  suite?: string;
  suites?: string;
  only?: string;
  exclude?: string;
  suiteParallel: number;
}

export function addSuiteFlags(command: Command, what: string): Command {
  return command
    .option('--suite <name>', `${what} every benchmark of a suite under one parent (see benchmarks/suites.yaml)`)
    .option('--suites <file>', 'a suites YAML file of your own (default ~/.benchrouter/suites.yaml)')
    .option('--only <benchmarks>', 'with --suite: only these benchmarks, or tasks (aime24, evalscope/aime24) of entries that pick tasks (comma-separated)')
    .option('--exclude <benchmarks>', 'with --suite: all but these benchmarks or tasks (comma-separated)')
    .option('--suite-parallel <n>', 'with --suite: benchmarks running at once', positiveInt, 2);
}

/** The suite's name and one run definition per selected entry, from the flags. */
export function suiteRunsFromFlags(flags: ParsedFlags & SuiteFlags, settings: Settings): { suite: string; runs: RunSpec[] } {
  const suite = findSuite(flags.suite!, flags.suites, settings);
  const entries = selectEntries(suite, commaList(flags.only), commaList(flags.exclude));
  return {
    suite: suite.name,
    runs: entries.map((entry, i) => specFromFlags(entry.benchmark, flags, { entry, file: suite.file, field: `suites.${suite.name}.benchmarks[${i}]` })),
  };
}

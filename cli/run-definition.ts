// From the command line to a run definition: a benchmark argument resolved to a directory, the run
// flags (and a suite entry's settings) made into the run request the API takes too, and suites found by name.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../config/settings.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { InputError } from '../contract/problems.js';
import { resolveBenchmarkDir, runSpecFromRequest, type RunRequest } from '../client/run-request.js';
import type { RunSpec } from '../runs/run-spec.js';
import { loadSuites, selectEntries, type Suite, type SuiteEntry } from '../runs/suites.js';
import type { Command } from 'commander';
import { gatewayFrom, generationFrom, judgeFrom, positiveInt, pricesFrom, runOptionsFrom, truncationFrom, type RunFlags } from './run-flags.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
/** The built-in benchmarks that ship with BenchRouter. */
export const builtinBenchmarksDir = path.join(repoRoot, 'benchmarks');

export { resolveBenchmarkDir };

/** The run request the flags stand for; a suite entry's tasks, repeats, limit and generation apply on top. */
export function requestFromFlags(benchmarkArg: string, flags: RunFlags, suite?: { entry: SuiteEntry; file: string; field: string }): RunRequest {
  const benchmarkName = loadBenchmark(resolveBenchmarkDir(benchmarkArg)).name;
  const taskNames = suite?.entry.tasks ?? (flags.tasks === undefined ? undefined : commaList(flags.tasks));
  const options = {
    ...withoutUndefined(runOptionsFrom(flags)),
    ...(suite?.entry.repeats ? { repeats: suite.entry.repeats } : {}),
    ...(suite?.entry.limit ? { limit: suite.entry.limit } : {}),
  };
  const gateway = withoutUndefined(gatewayFrom(flags));
  const judge = judgeFrom(flags);
  const prices = pricesFrom(flags);
  const truncation = truncationFrom(flags);
  return {
    benchmark: benchmarkArg,
    model: flags.model,
    endpoint: flags.endpoint,
    ...(flags.apiKeyEnv ? { apiKeyEnv: flags.apiKeyEnv } : {}),
    ...(taskNames ? { tasks: taskNames } : {}),
    ...withoutUndefined({
      concurrency: options.concurrency,
      hostTimeoutSeconds: options.hostTimeoutSeconds,
      heartbeatTimeoutSeconds: options.heartbeatTimeoutSeconds,
      maxHosts: options.maxHosts,
      repeats: options.repeats,
      seed: options.seed,
      limit: options.limit,
      instances: options.instances,
      jobConcurrency: options.jobConcurrency,
    }),
    ...withoutUndefined({
      gateway: gateway.enabled,
      cache: gateway.cache,
      modelConcurrency: gateway.concurrency,
      modelRate: gateway.ratePerSecond,
      modelRetries: gateway.maxRetries,
    }),
    generation: generationFrom(
      flags,
      benchmarkName,
      suite?.entry.generation ? { file: suite.file, field: suite.field, generation: suite.entry.generation } : undefined,
    ),
    ...(judge ? { judge: { model: judge.name, endpoint: judge.endpoint, ...(judge.apiKeyEnv ? { apiKeyEnv: judge.apiKeyEnv } : {}) } } : {}),
    ...(prices ? { prices } : {}),
    ...(truncation ? { truncation } : {}),
  };
}

/** A run definition from the flags, through the same request → RunSpec step `POST /evals/submit` takes. */
export function specFromFlags(benchmarkArg: string, flags: RunFlags, suite?: { entry: SuiteEntry; file: string; field: string }): RunSpec {
  return runSpecFromRequest(requestFromFlags(benchmarkArg, flags, suite));
}

/** A suite by name, from the built-in file and the user's (`--suites`, else ~/.benchrouter/suites.yaml). */
export function findSuite(name: string, suitesFile: string | undefined, settings: Settings): Suite {
  if (suitesFile && !existsSync(suitesFile)) throw new InputError([{ file: suitesFile, field: '', message: 'file not found' }]);
  const suites = loadSuites([path.join(repoRoot, 'benchmarks', 'suites.yaml'), suitesFile ?? path.join(settings.home, 'suites.yaml')]);
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
export function suiteRunsFromFlags(flags: RunFlags & SuiteFlags, settings: Settings): { suite: string; runs: RunSpec[] } {
  const suite = findSuite(flags.suite!, flags.suites, settings);
  const entries = selectEntries(suite, commaList(flags.only), commaList(flags.exclude));
  return {
    suite: suite.name,
    runs: entries.map((entry, i) => specFromFlags(entry.benchmark, flags, { entry, file: suite.file, field: `suites.${suite.name}.benchmarks[${i}]` })),
  };
}

/** `a, b,,c` → ['a', 'b', 'c']. */
export function commaList(text: string | undefined): string[] {
  return (
    text
      ?.split(',')
      .map((t) => t.trim())
      .filter(Boolean) ?? []
  );
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

// From the command line to a run definition: a benchmark argument resolved to a directory, the run
// flags (and a suite entry's settings) made into a RunSpec, and suites found by name.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../config/settings.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { InputError } from '../contract/problems.js';
import { createRunSpec } from '../client/runs.js';
import type { RunSpec } from '../runs/run-spec.js';
import { loadSuites, type Suite, type SuiteEntry } from '../runs/suites.js';
import { gatewayFrom, generationFrom, judgeFrom, pricesFrom, runOptionsFrom, type RunFlags } from './run-flags.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
/** The built-in benchmarks that ship with BenchRouter. */
export const builtinBenchmarksDir = path.join(repoRoot, 'benchmarks');

/** A benchmark argument is a directory, or the name of a built-in one under benchmarks/. */
export function resolveBenchmarkDir(arg: string): string {
  if (existsSync(arg)) return path.resolve(arg);
  const builtin = path.join(repoRoot, 'benchmarks', arg);
  if (existsSync(builtin)) return builtin;
  throw new InputError([{ file: arg, field: '', message: 'benchmark not found: expected a benchmark directory or the name of a built-in one (see benchmarks/)' }]);
}

/** A run definition from the flags; a suite entry's tasks, repeats and generation apply on top. */
export function specFromFlags(benchmarkArg: string, flags: RunFlags, suite?: { entry: SuiteEntry; file: string; field: string }): RunSpec {
  const benchmark = loadBenchmark(resolveBenchmarkDir(benchmarkArg));
  const taskNames = suite?.entry.tasks ?? (flags.tasks === undefined ? undefined : commaList(flags.tasks));
  const unknown = (taskNames ?? []).filter((t) => !benchmark.tasks.some((task) => task.name === t));
  if (unknown.length) {
    throw new InputError([{ file: path.join(benchmark.dir, 'benchmark.yaml'), field: 'tasks', message: `no task named ${unknown.map((t) => `"${t}"`).join(', ')} (have ${benchmark.tasks.map((t) => t.name).join(', ')})` }]);
  }
  if (!/^https?:\/\//.test(flags.endpoint)) throw new InputError([{ file: '--endpoint', field: '', message: `expected an http(s) URL ending in /v1, got "${flags.endpoint}"` }]);
  const options = { ...withoutUndefined(runOptionsFrom(flags)), ...(suite?.entry.repeats ? { repeats: suite.entry.repeats } : {}), ...(suite?.entry.limit ? { limit: suite.entry.limit } : {}) };
  return createRunSpec(benchmark, { name: flags.model, endpoint: flags.endpoint, apiKeyEnv: flags.apiKeyEnv }, options, taskNames, {
    gateway: withoutUndefined(gatewayFrom(flags)),
    generation: generationFrom(flags, benchmark.name, suite?.entry.generation ? { file: suite.file, field: suite.field, generation: suite.entry.generation } : undefined),
    judge: judgeFrom(flags),
    prices: pricesFrom(flags),
  });
}

/** A suite by name, from the built-in file and the user's (`--suites`, else ~/.benchrouter/suites.yaml). */
export function findSuite(name: string, suitesFile: string | undefined, settings: Settings): Suite {
  if (suitesFile && !existsSync(suitesFile)) throw new InputError([{ file: suitesFile, field: '', message: 'file not found' }]);
  const suites = loadSuites([path.join(repoRoot, 'benchmarks', 'suites.yaml'), suitesFile ?? path.join(settings.home, 'suites.yaml')]);
  const suite = suites.get(name);
  if (!suite) throw new InputError([{ file: '--suite', field: '', message: `no suite "${name}" (have ${[...suites.keys()].join(', ')})` }]);
  return suite;
}

/** `a, b,,c` → ['a', 'b', 'c']. */
export function commaList(text: string | undefined): string[] {
  return text?.split(',').map((t) => t.trim()).filter(Boolean) ?? [];
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

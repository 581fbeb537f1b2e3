// Where the built-in benchmarks live, and the directory a benchmark argument names: a path, or the name
// of a built-in one under benchmarks/.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from './problems.js';

export const BUILTIN_BENCHMARKS_DIR = fileURLToPath(new URL('../benchmarks', import.meta.url));

/** Built-in benchmarks that became tasks of another, for the error that names where they went. */
const MOVED: Record<string, string> = { tau2: 'tau2_airline,tau2_retail,tau2_telecom', agentdojo: 'agentdojo' };

/** `field` names where the argument came from in errors (a request body's `benchmark`; empty on the command line). */
export function resolveBenchmarkDir(arg: string, field = ''): string {
  if (existsSync(arg)) return path.resolve(arg);
  const builtin = path.join(BUILTIN_BENCHMARKS_DIR, arg);
  if (existsSync(builtin)) return builtin;
  const moved = MOVED[arg];
  if (moved)
    throw new InputError([
      { file: arg, field, message: `benchmark not found: ${arg} is now tasks of the built-in inspect benchmark: br run inspect --tasks ${moved}` },
    ]);
  throw new InputError([{ file: arg, field, message: 'benchmark not found: expected a benchmark directory or the name of a built-in one (see benchmarks/)' }]);
}

// Where this checkout is: the root every process BenchRouter starts runs from, and the built-in benchmarks,
// suites and sources are found under. (cli/launch.mjs, plain JavaScript, finds it by itself.)

import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

// The image BenchRouter builds for a built-in benchmark's environment, by the same content-hash tag,
// so a fidelity test can run the upstream harness directly in exactly that image.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { imageTagFor } from '../../activities/ensure-image.js';
import { directoryDigest } from '../../contract/benchmark-digest.js';
import { repoRoot } from './harness.js';

export const builtinDir = (benchmark: string) => path.join(repoRoot, 'benchmarks', benchmark);
export const replayAnswers = (file: string) => path.join(repoRoot, 'test', 'fixtures', 'replay', file);
/**
 * BENCHROUTER_SLOW_TESTS=1 (`npm run test:slow`): the heavy fidelity tests on their larger subsets (tau2's 3
 * samples, swe-repair's 4 instances), and the torch routers; `npm test` runs the small subsets.
 */
export const SLOW_TESTS = process.env.BENCHROUTER_SLOW_TESTS === '1';

export function benchmarkImage(benchmark: string, environment: string): string {
  return imageTagFor(benchmark, environment, directoryDigest(path.join(builtinDir(benchmark), 'environments', environment)));
}

/**
 * `docker run --rm` of an image on the host network (it reaches a replay model on loopback); returns
 * stdout. Asynchronous on purpose: a replay model in this process must keep answering meanwhile.
 */
export async function dockerRun(
  image: string,
  args: string[],
  options: { env?: Record<string, string>; volumes?: string[]; entrypoint?: string } = {},
): Promise<string> {
  const flags = [
    '--rm',
    '--network',
    'host',
    ...(options.entrypoint ? ['--entrypoint', options.entrypoint] : []),
    ...Object.entries(options.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    ...(options.volumes ?? []).flatMap((v) => ['-v', v]),
  ];
  const { stdout } = await promisify(execFile)('docker', ['run', ...flags, image, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

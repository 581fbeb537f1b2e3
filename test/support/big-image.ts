// A 1 GiB image for the DinD image store's test and perf/dind: FROM the base image plus one layer
// holding a 1 GiB file of random bytes. Tagged by a hash of its Dockerfile and built only when the
// host lacks that tag, so one copy serves every run on the host.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';

export const BIG_FILE_BYTES = 1024 ** 3;

const DOCKERFILE = `FROM benchrouter/base:bookworm\nRUN head -c ${BIG_FILE_BYTES} /dev/urandom > /big.bin\n`;

export function ensureBigImage(): string {
  const tag = `benchrouter-test/big-1g:${createHash('sha256').update(DOCKERFILE).digest('hex').slice(0, 12)}`;
  try {
    execFileSync('docker', ['image', 'inspect', tag], { stdio: 'ignore' });
    return tag;
  } catch {
    // not built on this host yet
  }
  execFileSync('docker', ['build', '--quiet', '--tag', tag, '-'], {
    input: DOCKERFILE,
    env: { ...process.env, DOCKER_BUILDKIT: '0' },
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  return tag;
}

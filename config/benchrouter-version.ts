// BenchRouter's own version, pinned in every run at submit (runs/provenance.ts): package.json's version and
// the checkout's git commit, read from the .git files (no `git` process; a worktree's .git file and packed
// refs included). No commit when this is not a git checkout, or its files cannot be read.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BenchRouterVersion } from '../runs/provenance.js';
import { REPO_ROOT } from './repository.js';

let cached: BenchRouterVersion | undefined;

export function benchRouterVersion(root = REPO_ROOT): BenchRouterVersion {
  if (root === REPO_ROOT && cached) return cached;
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const commit = gitCommit(root);
  const found = { version, ...(commit ? { commit } : {}) };
  if (root === REPO_ROOT) cached = found;
  return found;
}

/** HEAD's commit, or undefined. */
export function gitCommit(root: string): string | undefined {
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  let gitDir = path.join(root, '.git');
  const pointer = read(gitDir); // a worktree's (or submodule's) .git is a file: "gitdir: <path>"
  if (pointer?.startsWith('gitdir: ')) gitDir = path.resolve(root, pointer.slice('gitdir: '.length));
  const head = read(path.join(gitDir, 'HEAD'));
  if (!head) return undefined;
  if (/^[0-9a-f]{40,64}$/.test(head)) return head;
  const ref = /^ref: (\S+)$/.exec(head)?.[1];
  if (!ref) return undefined;
  const common = read(path.join(gitDir, 'commondir'));
  const commonDir = common ? path.resolve(gitDir, common) : gitDir;
  const loose = read(path.join(gitDir, ref)) ?? read(path.join(commonDir, ref));
  if (loose && /^[0-9a-f]{40,64}$/.test(loose)) return loose;
  const packed = read(path.join(commonDir, 'packed-refs'));
  return packed
    ?.split('\n')
    .find((line) => line.endsWith(` ${ref}`))
    ?.split(' ')[0];
}

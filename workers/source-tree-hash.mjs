// One content hash of this repository's TypeScript sources, for the two builds cached by it: the `br`
// CLI's esbuild bundle (cli/launch.mjs) and the worker's workflow bundle (workers/workflow-bundle-cache.ts).
// Plain JavaScript, as cli/launch.mjs needs it before anything could transpile TypeScript.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Folders neither build imports from; every other .ts file may be in a bundle. */
const NOT_BUNDLED = new Set(['node_modules', 'test', 'perf', 'benchmarks']);

/**
 * A hash of every .ts file under `root` outside NOT_BUNDLED and dot-folders (more than a bundle holds,
 * so a change can only cost a rebuild, never a stale bundle), and of `alsoHashed`: the files a build
 * depends on besides the sources (its own options, the versions of the tools that build and run it).
 * @param {string} root
 * @param {string[]} alsoHashed
 * @returns {string} 16 hex digits
 */
export function sourceTreeHash(root, alsoHashed) {
  const hash = createHash('sha256');
  /** @type {string[]} */
  const files = [];
  const walk = (/** @type {string} */ dir) => {
    for (const item of readdirSync(dir, { withFileTypes: true })) {
      if (item.name.startsWith('.') || NOT_BUNDLED.has(item.name)) continue;
      const full = path.join(dir, item.name);
      if (item.isDirectory()) walk(full);
      else if (item.isFile() && item.name.endsWith('.ts')) files.push(full);
    }
  };
  walk(root);
  files.push(...alsoHashed);
  for (const file of files.sort())
    hash
      .update(`${path.relative(root, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

// The worker's workflow bundle, built once per version of the code and kept by content hash: bundling
// at every start loads webpack into the worker and leaves it about 100 MiB larger for good.

import { REPO_ROOT } from '../config/repository.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceTreeHash } from './source-tree-hash.mjs';

const bundleScript = fileURLToPath(new URL('./bundle-workflows.ts', import.meta.url));

/**
 * A hash of what the bundle is made from: the sources (workers/source-tree-hash.mjs) and package-lock.json,
 * which pins the SDK that bundles and runs the workflows.
 */
export function workflowSourceHash(root = REPO_ROOT): string {
  const lock = path.join(root, 'package-lock.json');
  return sourceTreeHash(root, existsSync(lock) ? [lock] : []);
}

/**
 * The path of a bundle of `workflowsPath` for the code as it is now, under `cacheDir`. A missing one
 * is built in a child process (so webpack's memory goes with it) and renamed into place whole, so a
 * worker starting beside this one never reads half a bundle.
 */
export async function workflowBundleFor(cacheDir: string, workflowsPath: string): Promise<string> {
  const file = path.join(cacheDir, `workflow-bundle-${workflowSourceHash()}.js`);
  if (existsSync(file)) return file;
  mkdirSync(cacheDir, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  try {
    await runBundler(workflowsPath, partial);
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  return file;
}

function runBundler(workflowsPath: string, outFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), bundleScript, workflowsPath, outFile], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`bundling the workflows in ${workflowsPath} failed (exit ${code}): ${stderr.trim().split('\n').slice(-5).join(' | ')}`)),
    );
  });
}

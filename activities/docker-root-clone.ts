// A DinD task's private copy of a prepared inner /var/lib/docker, made in about a second whatever the
// images' size: `cp -a --reflink=always`, every file a new inode whose blocks are the prepared copy's
// until written (copy on write, reflink-fs.ts), directories new with their overlay xattrs. Nothing the
// task or its daemon does to its copy (writes, truncation, modes, owners, xattrs, unlinks) reaches the
// store or another task. An earlier version hard-linked the layer files, which left the store's inodes
// writable by the task's root.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Makes `target` (which must not exist) a copy-on-write clone of the docker root at `source`. */
export async function cloneDockerRoot(source: string, target: string): Promise<void> {
  try {
    await run('cp', ['-a', '--reflink=always', '--', source, target], { maxBuffer: 1024 * 1024 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`cannot clone ${source} to ${target} with reflinks: ${stderr || (error as Error).message}`);
  }
}

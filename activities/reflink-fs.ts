// Where the DinD image store can give each task a copy-on-write clone: a filesystem with reflinks.
// A hard-link clone shares inodes with the store, and a task's command is root beside its daemon's
// /var/lib/docker: one `echo x >> overlay2/<layer>/diff/etc/hostname` (or a chmod, or a bind mount
// into an inner container) changed the store and every later task's image. A reflink clone has
// inodes of its own whose blocks are shared until written, so whatever a task writes is its own.
//
// The store's directory is used as it is when its filesystem already has reflinks (XFS with
// reflink=1, btrfs). Otherwise it becomes the mount point of an XFS filesystem in a sparse file
// beside it (`dind-store.xfs`, mounted with a loop device and `discard`, so deleted blocks go back
// to the host): made once, mounted again after a reboot by the first task that needs it. Needs root,
// mkfs.xfs (Debian's xfsprogs) and a free loop device; without them the store is unavailable and
// tasks load their archives.

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { withHostLock } from './host-lock.js';

const run = promisify(execFile);

export type ReflinkFilesystem = { how: 'native' | 'loop' } | { how: 'none'; reason: string };

/** The loop file's apparent size: the host filesystem's, so the store never fills before the host does. */
function loopFileBytes(dir: string): number {
  const fs = statfsSync(dir);
  return Math.max(fs.blocks * fs.bsize, 16 * 1024 ** 3);
}

/** True when `cp --reflink=always` works inside `dir`. */
export async function reflinksWork(dir: string): Promise<boolean> {
  const probe = path.join(dir, `.reflink-probe-${process.pid}`);
  try {
    writeFileSync(probe, 'probe');
    await run('cp', ['--reflink=always', '--', probe, `${probe}.clone`]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { force: true });
    rmSync(`${probe}.clone`, { force: true });
  }
}

/** True when `dir` is a mount point (listed in this process's mountinfo). */
export function isMountPoint(dir: string): boolean {
  const target = path.resolve(dir);
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4]?.replace(/\\040/g, ' ') === target);
}

/** The sparse XFS file that backs `storeDir` where its own filesystem has no reflinks. */
export function loopFileOf(storeDir: string): string {
  return `${path.resolve(storeDir)}.xfs`;
}

/**
 * Makes `storeDir` a directory where reflinks work, mounting its XFS file when needed. Under a host
 * lock: workers of one host share the store. Never throws: says why when it cannot.
 */
export async function ensureReflinkFilesystem(storeDir: string, locksDir: string): Promise<ReflinkFilesystem> {
  mkdirSync(storeDir, { recursive: true });
  if (await reflinksWork(storeDir)) return { how: isMountPoint(storeDir) ? 'loop' : 'native' };
  try {
    return await withHostLock(locksDir, 'dind-store-fs', async (): Promise<ReflinkFilesystem> => {
      if (await reflinksWork(storeDir)) return { how: 'loop' };
      if (isMountPoint(storeDir)) return { how: 'none', reason: `${storeDir} is a mount without reflinks` };
      const image = loopFileOf(storeDir);
      if (!existsSync(image)) {
        const partial = `${image}.partial`;
        rmSync(partial, { force: true });
        await run('truncate', ['-s', String(loopFileBytes(path.dirname(image))), partial]);
        await run('mkfs.xfs', ['-q', '-m', 'reflink=1', partial]);
        renameSync(partial, image);
      }
      // What the unmounted directory holds (hard-link image sets of an older worker, a probe's
      // leftovers) would only be hidden under the mount: it goes. Running tasks keep their own links.
      for (const name of readdirSync(storeDir)) rmSync(path.join(storeDir, name), { recursive: true, force: true });
      await run('mount', ['-t', 'xfs', '-o', 'loop,discard', image, storeDir]);
      return (await reflinksWork(storeDir)) ? { how: 'loop' } : { how: 'none', reason: `reflinks do not work on ${image} mounted at ${storeDir}` };
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    return { how: 'none', reason: `no reflink filesystem for the DinD image store: ${stderr || (error instanceof Error ? error.message : String(error))}` };
  }
}

/** Unmounts `storeDir` when it is its XFS file's mount (tests and an operator's cleanup); the file stays. */
export async function unmountStore(storeDir: string): Promise<void> {
  if (existsSync(storeDir) && isMountPoint(storeDir)) await run('umount', [storeDir]);
}

// A DinD task's private copy of a prepared inner /var/lib/docker, made in a fraction of a second
// whatever the images' size. The files of image layers (`overlay2/<layer>/diff/...`) are hard links
// to the prepared copy's: the inner daemon only ever reads them (as overlay lower layers) or unlinks
// them (`docker rmi`), both of which leave the other links alone. Every other file (the daemon's bolt
// databases, the json it rewrites, a layer's `link` and `lower`) is copied, so nothing the daemon
// writes in place is shared. Directories are always new (cp -a keeps their overlay xattrs). The host
// filesystem here is ext4, which has no reflinks; hard links need the copy on the same filesystem.

import { execFile } from 'node:child_process';
import { chown, copyFile, lstat, readdir, rename, utimes, chmod } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** True for a path (relative to the docker root, `/`-separated) inside an image layer's files. */
export function isLayerContent(relative: string): boolean {
  const parts = relative.split('/');
  return parts.length >= 4 && parts[0] === 'overlay2' && parts[2] === 'diff';
}

export interface CloneCounts {
  /** Files copied rather than linked: everything outside the layers' `diff` directories. */
  copiedFiles: number;
  copiedBytes: number;
}

/** Makes `target` (which must not exist) a private clone of the docker root at `source`. */
export async function cloneDockerRoot(source: string, target: string): Promise<CloneCounts> {
  try {
    // cp -al: directories copied with their attributes (xattrs included), every file a hard link.
    await run('cp', ['-al', '--', source, target], { maxBuffer: 1024 * 1024 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`cannot hard-link ${source} to ${target}: ${stderr || (error as Error).message}`);
  }
  const counts: CloneCounts = { copiedFiles: 0, copiedBytes: 0 };
  await unshareMetadata(target, '', counts);
  return counts;
}

/** Replaces every linked regular file outside layer contents with a copy of its own. */
async function unshareMetadata(root: string, relative: string, counts: CloneCounts): Promise<void> {
  for (const entry of await readdir(path.join(root, relative), { withFileTypes: true })) {
    const rel = relative ? `${relative}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      // overlay2/<layer>/diff holds the layer's files: linked, all of it.
      if (isLayerContent(`${rel}/x`)) continue;
      await unshareMetadata(root, rel, counts);
    } else if (entry.isFile()) {
      const file = path.join(root, rel);
      const stat = await lstat(file);
      const copy = `${file}.br-unshare`;
      await copyFile(file, copy);
      await chown(copy, stat.uid, stat.gid);
      await chmod(copy, stat.mode & 0o7777);
      await utimes(copy, stat.atime, stat.mtime);
      await rename(copy, file);
      counts.copiedFiles += 1;
      counts.copiedBytes += stat.size;
    }
  }
}

// Image archives for DinD tasks: `docker_images` are loaded into the task's own daemon from tar
// archives in a cache directory, never pulled. An archive is made from the host daemon's image
// when the host has it (locked per image, like builds) and reused while the image id is unchanged.

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DockerEngine } from './docker-engine.js';
import { withHostLock } from './host-lock.js';

export interface ArchiveDeps {
  docker: DockerEngine;
  imageCacheDir: string;
  locksDir: string;
}

export class MissingPreloadImage extends Error {
  constructor(
    readonly image: string,
    hostId: string,
    cacheDir: string,
  ) {
    super(
      `docker_images: image "${image}" is neither on host ${hostId} nor archived in ${cacheDir}; nothing is pulled: build it on the host, or copy in an archive made with \`br images save ${image}\``,
    );
    this.name = 'MissingPreloadImage';
  }
}

export function archivePathFor(cacheDir: string, image: string): string {
  return path.join(cacheDir, `${image.replace(/[^A-Za-z0-9._-]/g, '_')}.tar`);
}

/** Returns the archive path for each image, creating or refreshing archives from the host daemon. */
export async function ensureImageArchives(deps: ArchiveDeps, hostId: string, images: string[]): Promise<string[]> {
  const archives: string[] = [];
  for (const image of images) archives.push(await ensureImageArchive(deps, hostId, image));
  return archives;
}

export async function ensureImageArchive(deps: ArchiveDeps, hostId: string, image: string): Promise<string> {
  mkdirSync(deps.imageCacheDir, { recursive: true });
  const archive = archivePathFor(deps.imageCacheDir, image);
  const idFile = `${archive}.id`;
  const archivedId = () => (existsSync(archive) && existsSync(idFile) ? readFileSync(idFile, 'utf8').trim() : undefined);

  const id = (await deps.docker.inspectImage(image))?.id;
  if (!id) {
    if (existsSync(archive)) return archive; // brought in from elsewhere: the cache is the source
    throw new MissingPreloadImage(image, hostId, deps.imageCacheDir);
  }
  if (archivedId() === id) return archive;
  return withHostLock(deps.locksDir, `archive-${image}`, async () => {
    if (archivedId() === id) return archive;
    const partial = `${archive}.${process.pid}.partial`;
    try {
      await deps.docker.saveImage(image, partial);
      renameSync(partial, archive);
      writeFileSync(idFile, `${id}\n`);
    } finally {
      rmSync(partial, { force: true });
    }
    return archive;
  });
}

// The digest of a host's dataset directory (BENCHROUTER_DATASET_DIR), for a run's provenance: sha256 over
// its listing (each file's relative path, size and modification time, in sorted order), not its contents.
// Datasets run to gigabytes and every job mounts the directory; a listing costs a walk, while a content hash
// would read it all for each job. Any write to a file moves its mtime, so a changed dataset changes the digest.

import { createHash } from 'node:crypto';
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';

export function datasetDigest(dir: string): string {
  const hash = createHash('sha256');
  const walk = (prefix: string) => {
    const entries = readdirSync(path.join(dir, prefix), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        walk(relative);
        continue;
      }
      const stat = lstatSync(path.join(dir, relative), { bigint: true });
      hash.update(`${relative}\0${stat.size}\0${stat.mtimeNs}\n`);
    }
  };
  walk('');
  return `sha256:${hash.digest('hex')}`;
}

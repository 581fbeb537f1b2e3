// Content digests: of a benchmark directory (pinned in the run input, so history says exactly
// what ran) and of an image build context (the image tag, so a change rebuilds and no change never does).

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, lstatSync } from 'node:fs';
import path from 'node:path';

/** sha256 over every file's relative path, mode bit for "executable", and contents, in sorted order. */
export function directoryDigest(dir: string): string {
  const hash = createHash('sha256');
  for (const relative of listFiles(dir)) {
    const full = path.join(dir, relative);
    const stat = lstatSync(full);
    hash.update(relative).update('\0');
    if (stat.isSymbolicLink()) hash.update('link:').update(readlinkSync(full));
    else hash.update(stat.mode & 0o111 ? 'x' : '-').update(readFileSync(full));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  const entries = readdirSync(path.join(dir, prefix), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) for (const file of listFiles(dir, relative)) out.push(file);
    else out.push(relative);
  }
  return out;
}

// The extra CA certificates this host trusts (a TLS-intercepting proxy's), and the digest
// scripts/build-base-image.sh labels the base image with, so `br doctor` can tell whether image
// builds trust the same CAs as the host.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const DEFAULT_EXTRA_CA_DIR = '/usr/local/share/ca-certificates';
export const BASE_IMAGE = 'benchrouter/base:bookworm';
export const DIND_IMAGE = 'benchrouter/dind:bookworm';
export const BASE_ROOTFS_IMAGE = 'benchrouter/base-rootfs:bookworm';
/** The base image's label holding caTrustDigest() of the CAs it was built with. */
export const CA_DIGEST_LABEL = 'benchrouter.ca.digest';

/** `*.crt` files in `dir` and one level below, sorted by path bytewise: as the build script's `find | LC_ALL=C sort`. */
export function extraCaFiles(dir = DEFAULT_EXTRA_CA_DIR): string[] {
  const files: string[] = [];
  const visit = (d: string, depth: number) => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const name of entries) {
      const full = path.join(d, name);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (stat?.isDirectory() && depth < 2) visit(full, depth + 1);
      else if (stat?.isFile() && name.endsWith('.crt')) files.push(full);
    }
  };
  visit(dir, 1);
  return files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** The same digest as scripts/build-base-image.sh's `ca_digest`. */
export function caTrustDigest(files: string[], dir = DEFAULT_EXTRA_CA_DIR, rootfsImage = BASE_ROOTFS_IMAGE): string {
  const hash = createHash('sha256').update(`rootfs=${rootfsImage}\n`);
  for (const file of files) hash.update(`${path.relative(dir, file)}\n`).update(readFileSync(file));
  return hash.digest('hex');
}

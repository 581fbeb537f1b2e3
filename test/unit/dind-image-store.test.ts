// The DinD image store's pure pieces: what a task's clone is charged, how its storage goes, the
// image-set key, the archive digest kept beside an archive, and least-recently-used eviction.

import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  archiveDigest,
  dindStorageBytes,
  dindStoreSettled,
  discardDindStorage,
  entriesToEvict,
  imageSetKey,
  removeDindStorage,
} from '../../activities/dind-image-store.js';
import { cloneDockerRoot } from '../../activities/docker-root-clone.js';
import { ensureReflinkFilesystem } from '../../activities/reflink-fs.js';
import { directoryBytes } from '../../activities/disk-watchdog.js';
import { settingsFrom } from '../../config/settings.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'br-dind-store-unit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('cloneDockerRoot', () => {
  it('names both directories when it cannot clone', async () => {
    await expect(cloneDockerRoot(path.join(dir, 'missing'), path.join(dir, 'clone'))).rejects.toThrow(
      `cannot clone ${path.join(dir, 'missing')} to ${path.join(dir, 'clone')} with reflinks: cp: cannot stat '${path.join(dir, 'missing')}': No such file or directory`,
    );
  });
});

describe('directoryBytes', () => {
  it('counts a file with several links once: a link of its own neither hides nor doubles a charge', async () => {
    writeFileSync(path.join(dir, 'written'), Buffer.alloc(5000));
    linkSync(path.join(dir, 'written'), path.join(dir, 'written-link'));
    writeFileSync(path.join(dir, 'own'), Buffer.alloc(700));
    expect(await directoryBytes(dir)).toBe(5700);
  });
});

describe("a task's DinD storage", () => {
  /** A store with one task's clone at .tasks/<name>/docker, linked from the task's storage directory. */
  function cloneLayout(): { storage: string; clone: string } {
    const clone = path.join(dir, 'store', '.tasks', 'br-job', 'docker');
    mkdirSync(path.join(clone, 'overlay2', 'layer', 'diff'), { recursive: true });
    writeFileSync(path.join(clone, 'overlay2', 'layer', 'diff', 'big.bin'), Buffer.alloc(10_000));
    writeFileSync(path.join(clone, 'overlay2', 'layer', 'diff', 'hostname'), Buffer.alloc(300));
    const storage = path.join(dir, 'dind', 'br-job');
    mkdirSync(path.dirname(storage));
    symlinkSync(clone, storage);
    return { storage, clone };
  }

  it("charges a clone's files made or changed after it was cloned, not the store's blocks", async () => {
    const { storage, clone } = cloneLayout();
    const mark = path.join(path.dirname(clone), 'cloned-at');
    writeFileSync(mark, '');
    const cloned = new Date(Date.now() + 1000); // every file above is older than this
    utimesSync(mark, cloned, cloned);
    expect(await dindStorageBytes(storage)).toBe(0);
    // Changes after it: the inner daemon's or the task's. ctime moves with any of them and cannot be set back.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    writeFileSync(path.join(clone, 'container-layer'), Buffer.alloc(700));
    chmodSync(path.join(clone, 'overlay2', 'layer', 'diff', 'hostname'), 0o777);
    linkSync(path.join(clone, 'container-layer'), path.join(clone, 'container-layer-link'));
    expect(await dindStorageBytes(storage)).toBe(700 + 300);
    // Without the mark nothing is known: everything counts.
    rmSync(mark);
    expect(await dindStorageBytes(storage)).toBe(10_000 + 300 + 700);
  });

  it('goes with its clone in the store; a plain directory goes as it is', () => {
    const { storage, clone } = cloneLayout();
    removeDindStorage(storage);
    expect(existsSync(storage)).toBe(false);
    expect(existsSync(path.dirname(clone))).toBe(false);
    expect(existsSync(path.join(dir, 'store', '.tasks'))).toBe(true);
    const plain = path.join(dir, 'dind', 'plain');
    mkdirSync(path.join(plain, 'overlay2'), { recursive: true });
    removeDindStorage(plain);
    expect(existsSync(plain)).toBe(false);
    removeDindStorage(plain); // none: nothing to do
  });

  it('when discarded, leaves its names at once and its files in the background, clone and plain directory alike', async () => {
    const { storage, clone } = cloneLayout();
    discardDindStorage(storage);
    expect(existsSync(storage)).toBe(false);
    expect(existsSync(path.dirname(clone))).toBe(false);
    const plain = path.join(dir, 'dind', 'plain');
    mkdirSync(path.join(plain, 'overlay2'), { recursive: true });
    discardDindStorage(plain);
    expect(existsSync(plain)).toBe(false);
    discardDindStorage(plain); // none: nothing to do
    await dindStoreSettled();
    expect(readdirSync(path.join(dir, 'store', '.tasks'))).toEqual([]);
    expect(readdirSync(path.join(dir, 'dind'))).toEqual([]);
  });
});

describe('imageSetKey', () => {
  it('depends on the DinD runtime and on the archives in order', () => {
    const key = imageSetKey('dind1', ['a', 'b']);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(imageSetKey('dind1', ['a', 'b'])).toBe(key);
    expect(imageSetKey('dind2', ['a', 'b'])).not.toBe(key);
    expect(imageSetKey('dind1', ['b', 'a'])).not.toBe(key);
    expect(imageSetKey('dind1', ['a'])).not.toBe(key);
  });
});

describe('archiveDigest', () => {
  it('hashes the archive once and reads the kept digest until the file changes', async () => {
    const archive = path.join(dir, 'image.tar');
    writeFileSync(archive, 'hello');
    const helloSha = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';
    expect(await archiveDigest(archive)).toBe(helloSha);
    const kept = JSON.parse(readFileSync(`${archive}.sha256`, 'utf8')) as { sha256: string; size: number };
    expect(kept).toMatchObject({ sha256: helloSha, size: 5 });
    // A kept digest is trusted while size, mtime and inode match: proven by planting a different one.
    writeFileSync(`${archive}.sha256`, JSON.stringify({ ...kept, sha256: 'f'.repeat(64) }));
    expect(await archiveDigest(archive)).toBe('f'.repeat(64));
    writeFileSync(archive, 'world');
    utimesSync(archive, new Date(1_000_000), new Date(2_000_000));
    expect(await archiveDigest(archive)).toBe('486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7');
  });
});

describe('archiveDigest of an archive saved from a host image', () => {
  it('is named by the image id kept beside it, without reading it, until the archive is replaced after that id', async () => {
    const archive = path.join(dir, 'img_1.tar');
    writeFileSync(archive, 'hello');
    utimesSync(archive, new Date(1_000_000), new Date(1_000_000));
    writeFileSync(`${archive}.id`, `sha256:${'a'.repeat(64)}\n`);
    const byId = await archiveDigest(archive);
    // sha256 of "docker save sha256:aaa... as img_1.tar"; not of the bytes "hello".
    expect(byId).toBe('a720deedd0b1d68ac3bfe9fbf6a41899dd2ea088c48853bf3ace4e5d45fafbb2');
    writeFileSync(`${archive}.id`, `sha256:${'b'.repeat(64)}\n`);
    expect(await archiveDigest(archive)).not.toBe(byId);
    // Copied in after the id was written: its bytes name it.
    utimesSync(archive, new Date(), new Date(Date.now() + 60_000));
    expect(await archiveDigest(archive)).toBe('2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
  });
});

describe('entriesToEvict', () => {
  const entries = [
    { key: 'new', bytes: 400, lastUsedMs: 3000 },
    { key: 'old', bytes: 300, lastUsedMs: 1000 },
    { key: 'mid', bytes: 500, lastUsedMs: 2000 },
  ];
  it('removes least recently used entries until the rest fit', () => {
    expect(entriesToEvict(entries, 1200, 'new')).toEqual([]);
    expect(entriesToEvict(entries, 1000, 'new')).toEqual(['old']);
    expect(entriesToEvict(entries, 600, 'new')).toEqual(['old', 'mid']);
  });
  it('never removes the entry in use, even when it alone passes the cap', () => {
    expect(entriesToEvict(entries, 100, 'old')).toEqual(['mid', 'new']);
    expect(entriesToEvict([{ key: 'big', bytes: 5000, lastUsedMs: 1 }], 100, 'big')).toEqual([]);
  });
});

describe('BENCHROUTER_DIND_STORE_MAX', () => {
  it('is a size, 50g by default, and 0 turns the store off', () => {
    expect(settingsFrom({ BENCHROUTER_HOME: '/h' }, '/root')).toMatchObject({ dindStoreDir: '/h/dind-store', dindStoreMaxBytes: 50 * 1024 ** 3 });
    expect(settingsFrom({ BENCHROUTER_DIND_STORE_MAX: '512m' }, '/root').dindStoreMaxBytes).toBe(512 * 1024 ** 2);
    expect(settingsFrom({ BENCHROUTER_DIND_STORE_MAX: '0' }, '/root').dindStoreMaxBytes).toBe(0);
    expect(() => settingsFrom({ BENCHROUTER_DIND_STORE_MAX: 'lots' }, '/root')).toThrow(
      'BENCHROUTER_DIND_STORE_MAX: expected a size like "50g", "512m" or "0", got "lots"',
    );
  });
});

describe('ensureReflinkFilesystem', () => {
  it('says why, and throws nothing, when it can neither clone nor make its XFS file', async () => {
    const path0 = process.env.PATH;
    process.env.PATH = path.join(dir, 'no-tools'); // no cp, truncate, mkfs.xfs or mount
    try {
      const store = path.join(dir, 'dind-store');
      const result = await ensureReflinkFilesystem(store, path.join(dir, 'locks'));
      expect(result).toMatchObject({ how: 'none' });
      expect(result.how === 'none' && result.reason).toContain('no reflink filesystem for the DinD image store');
      expect(existsSync(`${store}.xfs`)).toBe(false);
      expect(existsSync(path.join(dir, 'locks', 'dind-store-fs.lock'))).toBe(false);
    } finally {
      process.env.PATH = path0;
    }
  });
});

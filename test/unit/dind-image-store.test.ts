// The DinD image store's pure pieces and its clone: which files a task's copy links and which it
// copies, the image-set key, the archive digest kept beside an archive, and least-recently-used eviction.

import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { archiveDigest, entriesToEvict, imageSetKey } from '../../activities/dind-image-store.js';
import { cloneDockerRoot, isLayerContent } from '../../activities/docker-root-clone.js';
import { directoryBytes } from '../../activities/disk-watchdog.js';
import { settingsFrom } from '../../config/settings.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'br-dind-store-unit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('isLayerContent', () => {
  it('is true only below overlay2/<layer>/diff/', () => {
    expect(isLayerContent('overlay2/abc/diff/usr/bin/python3')).toBe(true);
    expect(isLayerContent('overlay2/abc/diff/big.bin')).toBe(true);
    expect(isLayerContent('overlay2/abc/link')).toBe(false);
    expect(isLayerContent('overlay2/abc/lower')).toBe(false);
    expect(isLayerContent('overlay2/l/ABCDEF')).toBe(false);
    expect(isLayerContent('image/overlay2/repositories.json')).toBe(false);
    expect(isLayerContent('network/files/local-kv.db')).toBe(false);
    expect(isLayerContent('buildkit/overlay2/x/diff/y')).toBe(false);
  });
});

describe('cloneDockerRoot', () => {
  it('links layer files, copies everything else, and leaves the source alone when the clone changes', async () => {
    const source = path.join(dir, 'store', 'docker');
    const files: Record<string, string> = {
      'overlay2/layer1/diff/big.bin': 'layer bytes',
      'overlay2/layer1/diff/etc/os-release': 'debian',
      'overlay2/layer1/link': 'ABC',
      'image/overlay2/repositories.json': '{"Repositories":{}}',
      'network/files/local-kv.db': 'bolt',
    };
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(source, rel)), { recursive: true });
      writeFileSync(path.join(source, rel), text, { mode: 0o600 });
    }
    const clone = path.join(dir, 'task', 'docker');
    mkdirSync(path.dirname(clone));

    expect(await cloneDockerRoot(source, clone)).toEqual({ copiedFiles: 3, copiedBytes: 3 + 19 + 4 });

    const inode = (root: string, rel: string) => statSync(path.join(root, rel)).ino;
    expect(inode(clone, 'overlay2/layer1/diff/big.bin')).toBe(inode(source, 'overlay2/layer1/diff/big.bin'));
    expect(inode(clone, 'overlay2/layer1/diff/etc/os-release')).toBe(inode(source, 'overlay2/layer1/diff/etc/os-release'));
    for (const rel of ['overlay2/layer1/link', 'image/overlay2/repositories.json', 'network/files/local-kv.db']) {
      expect(inode(clone, rel)).not.toBe(inode(source, rel));
      expect(statSync(path.join(clone, rel)).nlink).toBe(1);
      expect(statSync(path.join(clone, rel)).mode & 0o777).toBe(0o600);
      expect(readFileSync(path.join(clone, rel), 'utf8')).toBe(files[rel]);
    }
    // The daemon rewrites its databases in place and unlinks layers on rmi: the source sees neither.
    writeFileSync(path.join(clone, 'network/files/local-kv.db'), 'changed');
    rmSync(path.join(clone, 'overlay2/layer1'), { recursive: true });
    expect(readFileSync(path.join(source, 'network/files/local-kv.db'), 'utf8')).toBe('bolt');
    expect(readFileSync(path.join(source, 'overlay2/layer1/diff/big.bin'), 'utf8')).toBe('layer bytes');
    expect(statSync(path.join(source, 'overlay2/layer1/diff/big.bin')).nlink).toBe(1);
  });

  it('names both directories when it cannot clone', async () => {
    await expect(cloneDockerRoot(path.join(dir, 'missing'), path.join(dir, 'clone'))).rejects.toThrow(
      `cannot hard-link ${path.join(dir, 'missing')} to ${path.join(dir, 'clone')}: cp: cannot stat '${path.join(dir, 'missing')}': No such file or directory`,
    );
  });
});

describe('directoryBytes with skipLinked', () => {
  it("leaves out files with another link, which in a task's clone are the store's layers", async () => {
    writeFileSync(path.join(dir, 'shared'), Buffer.alloc(5000));
    linkSync(path.join(dir, 'shared'), path.join(dir, 'shared-link'));
    writeFileSync(path.join(dir, 'own'), Buffer.alloc(700));
    expect(await directoryBytes(dir)).toBe(10_700);
    expect(await directoryBytes(dir, { skipLinked: true })).toBe(700);
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

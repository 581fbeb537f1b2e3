// The disk watchdog's pieces: directory sizes that do not follow links, and a watch that fires only
// once the measure passes the limit, and never after it is stopped.

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { directoryBytes, watchDiskUse } from '../../activities/disk-watchdog.js';

describe('directoryBytes', () => {
  it('adds up files in nested directories and counts a link as the link, not its target', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-disk-'));
    try {
      mkdirSync(path.join(dir, 'a', 'b'), { recursive: true });
      writeFileSync(path.join(dir, 'a', 'one'), Buffer.alloc(1000));
      writeFileSync(path.join(dir, 'a', 'b', 'two'), Buffer.alloc(2000));
      symlinkSync('/etc/passwd', path.join(dir, 'link'));
      expect(await directoryBytes(dir)).toBe(3000 + '/etc/passwd'.length);
      expect(await directoryBytes(path.join(dir, 'missing'))).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('watchDiskUse', () => {
  it('resolves with the first measure over the limit', async () => {
    const measures = [10, 50, 150, 300];
    const stop = new AbortController();
    const exceeded = await watchDiskUse(async () => measures.shift() ?? 0, 100, stop.signal, 1);
    expect(exceeded).toEqual({ usedBytes: 150, limitBytes: 100 });
    stop.abort();
  });

  it('stops measuring once aborted', async () => {
    let calls = 0;
    const stop = new AbortController();
    void watchDiskUse(async () => ++calls, 1e9, stop.signal, 1);
    await new Promise((r) => setTimeout(r, 30));
    stop.abort();
    const seen = calls;
    await new Promise((r) => setTimeout(r, 30));
    expect(seen).toBeGreaterThan(0);
    expect(calls).toBe(seen);
  });
});

// The embedded dev server's database, prepared as `br up` prepares it: created by a first start of
// the real server, then its visibility indexes trimmed to the kept ones with the real sqlite3 shell.
// The rest of the suite runs on databases prepared this way (test/support), so every visibility query
// BenchRouter makes is exercised on them; this checks the preparation itself.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KEPT_VISIBILITY_INDEXES, trimVisibilityIndexes } from '../embedded/dev-server-store.js';
import { prepareEmbeddedDatabase } from '../embedded/embedded-services.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'br-test-store-'));
const db = path.join(dir, 'temporal.db');

function visibilityIndexes(file: string): string[] {
  const listed = spawnSync(
    'sqlite3',
    ['-batch', file, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' ORDER BY name;"],
    {
      encoding: 'utf8',
    },
  );
  return listed.stdout.split('\n').filter(Boolean);
}

describe('preparing the dev server database', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a missing database with the real server, then keeps only the kept visibility indexes', { timeout: 120_000 }, async () => {
    const said: string[] = [];
    await prepareEmbeddedDatabase(db, (line) => said.push(line));
    const left = visibilityIndexes(db);
    expect(left.filter((name) => !name.startsWith('sqlite_autoindex_')).sort()).toEqual([...KEPT_VISIBILITY_INDEXES].sort());
    expect(said).toEqual([expect.stringMatching(/temporal\.db: dropped \d+ visibility indexes no query uses/)]);

    // Prepared already: nothing to drop, nothing said.
    const again: string[] = [];
    await prepareEmbeddedDatabase(db, (line) => again.push(line));
    expect(again).toEqual([]);
    expect(visibilityIndexes(db)).toEqual(left);
  });

  it('without a temporal CLI, fails at once saying so, and leaves no database behind', async () => {
    const path0 = process.env.PATH;
    process.env.PATH = dir; // no temporal here
    const missing = path.join(dir, 'never.db');
    try {
      const started = Date.now();
      await expect(prepareEmbeddedDatabase(missing)).rejects.toThrow(
        `creating ${missing}: the Temporal dev server could not be started (spawn temporal ENOENT)`,
      );
      // At once: not after the 60 s a server that never answers is given (a loaded machine took 7 s for ENOENT).
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(existsSync(missing)).toBe(false);
    } finally {
      process.env.PATH = path0;
    }
  });

  it('without a sqlite3 shell, says why and leaves the database as it is', () => {
    const path0 = process.env.PATH;
    process.env.PATH = dir; // no sqlite3 here
    try {
      expect(trimVisibilityIndexes(db)).toEqual({ skipped: 'the sqlite3 command is not installed (apt-get install sqlite3)' });
    } finally {
      process.env.PATH = path0;
    }
  });
});

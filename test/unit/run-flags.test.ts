// Flags that select instances: parsed into run options the way `br run` passes them on.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { instanceIds } from '../../cli/run-flags.js';
import { InputError } from '../../contract/problems.js';

describe('--instances', () => {
  it('reads a comma-separated list, trimming blanks and dropping repeats in order', () => {
    expect(instanceIds(' q-2, q-1,,q-2 ')).toEqual(['q-2', 'q-1']);
  });

  it('reads @FILE with one id per line', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-instances-'));
    try {
      writeFileSync(path.join(dir, 'ids.txt'), 'alpha\n\nbeta\r\ngamma\n');
      expect(instanceIds(`@${path.join(dir, 'ids.txt')}`)).toEqual(['alpha', 'beta', 'gamma']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an id holding a comma, naming the file it came from', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-instances-'));
    const file = path.join(dir, 'ids.txt');
    try {
      writeFileSync(file, 'a,b\n');
      expect(() => instanceIds(`@${file}`)).toThrow(InputError);
      expect(() => instanceIds(`@${file}`)).toThrow(`${file}: instance ids cannot contain a comma (BENCHROUTER_INSTANCES is comma-separated), got "a,b"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an empty list and a missing file', () => {
    expect(() => instanceIds(',')).toThrow('--instances: expected at least one instance id');
    expect(() => instanceIds('@/nonexistent/ids.txt')).toThrow('/nonexistent/ids.txt: --instances: cannot read the instance list: ENOENT');
  });
});

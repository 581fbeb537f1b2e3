// `br benchmarks`: the built-in catalogue, one row per benchmark under benchmarks/, with its domain,
// tasks, instance count (from the tasks' own lists), default shard size, mode (simple or DinD) and upstream
// package, from benchmarks/catalogue.yaml joined with each benchmark's own files.

import type { Command } from 'commander';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { loadBenchmark } from '../../contract/load-benchmark.js';
import { directoryDigest } from '../../contract/benchmark-digest.js';
import { listedBefore } from '../../client/run-plan.js';
import type { Settings } from '../../config/settings.js';
import { fieldPath, InputError } from '../../contract/problems.js';
import { readYamlFile } from '../../contract/yaml-file.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import type { TableView } from '../../runs/table-view.js';

export const CatalogueSchema = z.strictObject({
  benchmarks: z.record(
    z.string(),
    z.strictObject({
      domain: z.string().min(1),
      upstream: z.strictObject({ package: z.string().min(1), version: z.string().min(1), registry: z.string().min(1) }).optional(),
      // How docs/benchmarks.md's table shows it (scripts/generate-benchmark-table.ts).
      table: z
        .strictObject({
          upstream: z.string().min(1),
          /** Where the tasks list no file the table could count: the counts as text. */
          instances: z.string().min(1).optional(),
          tasks: z.string().min(1).optional(),
          mode: z.string().min(1).optional(),
          /** The files of ours that run the harness, in the benchmark's directory: their lines are counted. */
          bridge: z.array(z.strictObject({ file: z.string().min(1), as: z.string().min(1).optional() })).min(1),
          note: z.string().min(1).optional(),
        })
        .optional(),
    }),
  ),
});

export interface CatalogueRow {
  name: string;
  domain: string | null;
  tasks: string[];
  /** From the tasks' own lists (task.yaml `instances`); null when some task lists none, or lists them by a command not yet run here. */
  instances: number | null;
  /** Why `instances` is null, for the table. */
  instancesNote?: string;
  /** The tasks a run splits into shards by default, with their shard size. */
  shards?: Record<string, number>;
  /** How its tasks run, the tasks its template makes included: `simple`, `dind`, or `simple, dind` for both. */
  mode: 'simple' | 'dind' | 'simple, dind';
  upstream: string | null;
  /** The other tasks a run may name, made from the benchmark's task_template: `(inspect_evals|evals)/[a-z0-9_]+`. */
  alsoTasks?: string;
}

export function readCatalogue(benchmarksDir: string, settings: Pick<Settings, 'instancesCacheDir'>): CatalogueRow[] {
  const file = path.join(benchmarksDir, 'catalogue.yaml');
  const read = readYamlFile(file);
  if (!read.ok) throw new InputError([read.problem]);
  const parsed = CatalogueSchema.safeParse(read.data);
  if (!parsed.success) throw new InputError(parsed.error.issues.map((issue) => ({ file, field: fieldPath(issue.path), message: issue.message })));
  const names = readdirSync(benchmarksDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(benchmarksDir, entry.name, 'benchmark.yaml')))
    .map((entry) => entry.name)
    .sort();
  return names.map((name) => {
    const benchmark = loadBenchmark(path.join(benchmarksDir, name));
    const entry = parsed.data.benchmarks[benchmark.name];
    const digest = { digest: directoryDigest(benchmark.dir) };
    const counts = benchmark.tasks.map((task) => (task.instances ?? (task.instancesCommand ? listedBefore(settings, digest, task) : undefined))?.length);
    const byCommand = benchmark.tasks.some((task) => task.instancesCommand && !listedBefore(settings, digest, task));
    const shards = Object.fromEntries(benchmark.tasks.filter((task) => task.shardSize !== undefined).map((task) => [task.name, task.shardSize!]));
    return {
      name: benchmark.name,
      domain: entry?.domain ?? null,
      tasks: benchmark.tasks.map((task) => task.name),
      // Unknown when any task's count is: a partial sum would read as the whole.
      instances: counts.every((n) => n !== undefined) ? counts.reduce((a, b) => a + b, 0) : null,
      ...(counts.some((n) => n === undefined) ? { instancesNote: byCommand ? 'listed in its image when first run' : 'not listed (selected by count)' } : {}),
      ...(Object.keys(shards).length ? { shards } : {}),
      mode: modeOf([...benchmark.tasks, ...(benchmark.taskTemplate ? [benchmark.taskTemplate.task] : [])]),
      upstream: entry?.upstream ? `${entry.upstream.package} ${entry.upstream.version} (${entry.upstream.registry})` : null,
      ...(benchmark.taskTemplate ? { alsoTasks: benchmark.taskTemplate.pattern } : {}),
    };
  });
}

export function catalogueView(rows: CatalogueRow[]): TableView {
  return {
    name: 'benchmarks',
    columns: ['benchmark', 'domain', 'tasks', 'instances', 'shards of', 'mode', 'upstream'],
    rows: rows.map((r) => [
      r.name,
      r.domain,
      [...r.tasks, ...(r.alsoTasks ? [`any ${r.alsoTasks}`] : [])].join(', '),
      r.instances ?? r.instancesNote ?? null,
      r.shards
        ? Object.entries(r.shards)
            .map(([task, size]) => (r.tasks.length > 1 ? `${task}: ${size}` : String(size)))
            .join(', ')
        : '-',
      r.mode,
      r.upstream ?? '-',
    ]),
  };
}

export function registerBenchmarksCommand(program: Command, deps: CliDeps & { benchmarksDir: string }): Command {
  return addOutputFlags(
    program.command('benchmarks').description('list the built-in benchmarks: domain, tasks, instances, mode and upstream package'),
    'benchmarks',
  )
    .addHelpText('after', example('$ br benchmarks', '$ br benchmarks --json'))
    .action(async (flags: OutputFlags) => {
      const rows = readCatalogue(deps.benchmarksDir, deps.settings());
      await emitOutput({ tables: [catalogueView(rows)], json: rows }, flags, 'benchmarks', deps);
    });
}

function modeOf(tasks: ReadonlyArray<{ docker: boolean }>): 'simple' | 'dind' | 'simple, dind' {
  const dind = tasks.some((task) => task.docker);
  return dind && tasks.some((task) => !task.docker) ? 'simple, dind' : dind ? 'dind' : 'simple';
}

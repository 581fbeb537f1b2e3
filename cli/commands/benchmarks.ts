// `br benchmarks`: the built-in catalogue, one row per benchmark under benchmarks/, with its domain,
// tasks, instance count, mode (simple or DinD) and upstream package, from benchmarks/catalogue.yaml
// joined with each benchmark's own files.

import type { Command } from 'commander';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { loadBenchmark } from '../../contract/load-benchmark.js';
import { fieldPath, InputError } from '../../contract/problems.js';
import { readYamlFile } from '../../contract/yaml-file.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import type { TableView } from '../../runs/table-view.js';

const CatalogueSchema = z.strictObject({
  benchmarks: z.record(
    z.string(),
    z.strictObject({
      domain: z.string().min(1),
      instances: z.record(z.string(), z.number().int().nonnegative()),
      upstream: z.strictObject({ package: z.string().min(1), version: z.string().min(1), registry: z.string().min(1) }).optional(),
    }),
  ),
});

export interface CatalogueRow {
  name: string;
  domain: string | null;
  tasks: string[];
  instances: number | null;
  mode: 'simple' | 'dind';
  upstream: string | null;
}

export function readCatalogue(benchmarksDir: string): CatalogueRow[] {
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
    const counts = benchmark.tasks.map((task) => entry?.instances[task.name]);
    return {
      name: benchmark.name,
      domain: entry?.domain ?? null,
      tasks: benchmark.tasks.map((task) => task.name),
      // Unknown when any task's count is missing: a partial sum would read as the whole.
      instances: counts.every((n) => n !== undefined) ? counts.reduce((a, b) => a + b, 0) : null,
      mode: benchmark.tasks.some((task) => task.docker) ? 'dind' : 'simple',
      upstream: entry?.upstream ? `${entry.upstream.package} ${entry.upstream.version} (${entry.upstream.registry})` : null,
    };
  });
}

export function catalogueView(rows: CatalogueRow[]): TableView {
  return {
    name: 'benchmarks',
    columns: ['benchmark', 'domain', 'tasks', 'instances', 'mode', 'upstream'],
    rows: rows.map((r) => [r.name, r.domain, r.tasks.join(', '), r.instances, r.mode, r.upstream ?? '-']),
  };
}

export function registerBenchmarksCommand(program: Command, deps: CliDeps & { benchmarksDir: string }): Command {
  return addOutputFlags(
    program.command('benchmarks').description('list the built-in benchmarks: domain, tasks, instances, mode and upstream package'),
    'benchmarks',
  )
    .addHelpText('after', example('$ br benchmarks', '$ br benchmarks --json'))
    .action(async (flags: OutputFlags) => {
      const rows = readCatalogue(deps.benchmarksDir);
      await emitOutput({ tables: [catalogueView(rows)], json: rows }, flags, 'benchmarks', deps);
    });
}

// Writes the table of built-in benchmarks in docs/benchmarks.md from the benchmarks themselves: their tasks, the
// instances of those that list them in a file, their mode (DinD when a task has docker: true) and the lines of the
// bridge files benchmarks/catalogue.yaml names, with the prose of each row (domain, upstream, notes) from
// catalogue.yaml. `npm run generate:benchmark-table`; test/unit/benchmark-table-generated.test.ts fails when the
// table is stale.

import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CatalogueSchema } from '../cli/commands/benchmarks.js';
import { REPO_ROOT } from '../config/repository.js';
import { BUILTIN_BENCHMARKS_DIR } from '../contract/builtin-benchmarks.js';
import { loadBenchmark } from '../contract/load-benchmark.js';
import { readYamlFile } from '../contract/yaml-file.js';

export const BENCHMARKS_DOC_FILE = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
const BEGIN = '<!-- benchmark-table: written by `npm run generate:benchmark-table` from the benchmarks and benchmarks/catalogue.yaml -->';
const END = '<!-- /benchmark-table -->';

const code = (text: string) => `\`${text}\``;
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').length - 1;

export function benchmarkTable(): string {
  const read = readYamlFile(path.join(BUILTIN_BENCHMARKS_DIR, 'catalogue.yaml'));
  if (!read.ok) throw new Error(`${read.problem.file}: ${read.problem.message}`);
  const catalogue = CatalogueSchema.parse(read.data);
  const rows = Object.entries(catalogue.benchmarks).map(([name, entry]) => {
    const table = entry.table;
    if (!table) throw new Error(`benchmarks/catalogue.yaml: benchmarks.${name}.table: expected how docs/benchmarks.md shows it, found none`);
    const dir = path.join(BUILTIN_BENCHMARKS_DIR, name);
    const benchmark = loadBenchmark(dir);
    const template = benchmark.taskTemplate ? [`any ${code(benchmark.taskTemplate.pattern.replace('[a-z0-9_]+', '<name>'))}`] : [];
    const tasks = table.tasks ?? [...benchmark.tasks.map((task) => code(task.name)), ...template].join(', ').replace(/, (any [^,]+)$/, ', and $1');
    const counts = benchmark.tasks.map((task) => task.instances?.length);
    const instances = table.instances ?? (counts.every((n) => n !== undefined) ? counts.map((n) => n!.toLocaleString('en-US')).join(', ') : '?');
    const mode = table.mode ?? (benchmark.tasks.some((task) => task.docker) ? 'DinD' : 'simple');
    const bridge = table.bridge
      .map(({ file, as }) => {
        const count = lines(path.join(dir, file));
        return as ? `a ${count}-line ${as}` : `${code(path.basename(file))}, ${count} lines`;
      })
      .join(', and ');
    const cells = [code(name), entry.domain, tasks, instances, mode, table.upstream, `${bridge}${table.note ? ` (${table.note})` : ''}`];
    return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
  });
  return [BEGIN, '', '| benchmark | domain | tasks | instances | mode | upstream | bridge |', '|---|---|---|---|---|---|---|', ...rows, '', END].join('\n');
}

/** docs/benchmarks.md with its table as the benchmarks make it today. */
export function benchmarksDoc(): string {
  const text = readFileSync(BENCHMARKS_DOC_FILE, 'utf8');
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${BENCHMARKS_DOC_FILE}: expected the table between "${BEGIN}" and "${END}"`);
  return `${text.slice(0, begin)}${benchmarkTable()}${text.slice(end + END.length)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(BENCHMARKS_DOC_FILE, benchmarksDoc());
  console.log(`wrote the table of ${BENCHMARKS_DOC_FILE}`);
}

// docs/benchmarks.md's table of built-in benchmarks is written from the benchmarks (tasks, instance counts, mode,
// the bridge files' lines) and benchmarks/catalogue.yaml: a benchmark or bridge that changed without the table
// fails here, naming the command that remakes it.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BENCHMARKS_DOC_FILE, benchmarkTable, benchmarksDoc } from '../../scripts/generate-benchmark-table.js';

describe("docs/benchmarks.md's table of built-in benchmarks", () => {
  it('is the one the benchmarks make today', () => {
    expect(readFileSync(BENCHMARKS_DOC_FILE, 'utf8'), `${BENCHMARKS_DOC_FILE}: stale: run \`npm run generate:benchmark-table\` and commit the result`).toBe(
      benchmarksDoc(),
    );
  });

  it('counts what it can: a file-listed task its instances, a bridge its lines', () => {
    const table = benchmarkTable();
    expect(table).toMatch(/^\| `arith` \| .* \| `addition`, `multiplication` \| 20, 20 \| simple \| none \| `eval_arith.py`, \d+ lines \|$/m);
    expect(table).toMatch(/^\| `scienceworld` \| .* \| `test` \| 1,819 \| simple \|/m);
    expect(table).toMatch(/^\| `sql` \| .* \| 8 \| DinD \|/m);
    expect(table).toContain('and any `(inspect_evals\\|evals)/<name>`');
  });
});

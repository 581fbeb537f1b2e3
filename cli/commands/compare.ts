// `br compare`: several runs in one table, benchmarks and tasks as rows and one column per model; for two
// runs, also their paired comparison per task and overall (analysis/paired-comparison.ts).

import type { Command } from 'commander';
import { runResults } from '../../client/leaderboard.js';
import { instanceScoresByTask } from '../../client/run-records.js';
import { comparePaired, type PairedComparison } from '../../analysis/paired-comparison.js';
import type { TableView } from '../../runs/table-view.js';
import { provenanceDifferences } from '../../runs/provenance.js';
import type { RunResult } from '../../runs/run-spec.js';
import { compareView } from '../../runs/leaderboard.js';
import type { CliDeps } from '../cli-deps.js';
import { example } from '../help-example.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { connectTemporal, existingRun } from '../temporal-access.js';

export function registerCompareCommand(program: Command, deps: CliDeps): Command {
  return addOutputFlags(
    program.command('compare').description('one table of several runs: benchmarks and tasks as rows, one column per model').argument('<run...>', 'run ids'),
    'compare',
  )
    .addHelpText('after', example('$ br compare br-20261129-120000-a1b2c3 br-20261129-130000-d4e5f6 --format md'))
    .action(async (runIds: string[], flags: OutputFlags) => {
      const client = await connectTemporal(deps, false);
      for (const runId of runIds) await existingRun(deps, runId, client);
      const results = await runResults(client, runIds, 16, false);
      const tables = [compareView(results)];
      for (const line of provenanceNotes(results)) deps.say(line);
      if (runIds.length === 2) {
        const [a, b] = await Promise.all(runIds.map((runId) => instanceScoresByTask(client, deps.settings().artifactsRoot, runId)));
        const paired = pairedView(runIds[0]!, a!, runIds[1]!, b!);
        if (paired.table.rows.some((row) => row[1] !== 0)) {
          tables.push(paired.table);
          for (const note of paired.notes) deps.say(note);
        } else deps.say('paired: the two runs share no per-instance records (records.jsonl) on this machine: nothing to compare instance by instance');
      }
      await emitOutput({ tables }, flags, 'compare', deps);
    });
}

/**
 * How each run's provenance differs from the first run's, a line each (the runs' scores were measured
 * differently), or that it is the same; a run from before provenance was kept is named as such.
 */
export function provenanceNotes(runs: ReadonlyArray<Pick<RunResult, 'runId' | 'provenance'>>): string[] {
  const [first, ...rest] = runs;
  if (!first) return [];
  return rest.flatMap((run) => {
    if (!first.provenance || !run.provenance)
      return [
        `provenance: ${[first, run]
          .filter((r) => !r.provenance)
          .map((r) => r.runId)
          .join(' and ')} kept none (run before provenance was recorded): not compared`,
      ];
    const differences = provenanceDifferences(first.provenance, run.provenance);
    return differences.length
      ? differences.map((line) => `provenance: ${first.runId} vs ${run.runId}: ${line}`)
      : [`provenance: ${run.runId} was measured as ${first.runId} was (same benchmark, images, dataset, generation, judge, seeds and version)`];
  });
}

const round = (value: number | null | undefined) => (value === null || value === undefined ? null : Number(value.toFixed(4)));

/** Two runs compared instance by instance, a row per task and one overall (instances of every task pooled). */
export function pairedView(
  runA: string,
  a: Map<string, Map<string, number[]>>,
  runB: string,
  b: Map<string, Map<string, number[]>>,
): { table: TableView; notes: string[] } {
  const tasks = [...new Set([...a.keys(), ...b.keys()])].sort();
  const pooled = (runs: Map<string, Map<string, number[]>>) =>
    new Map([...runs].flatMap(([task, scores]) => [...scores].map(([id, values]) => [`${task}/${id}`, values] as const)));
  const rows: Array<[string, PairedComparison]> = [
    ...tasks.map((task): [string, PairedComparison] => [task, comparePaired(a.get(task) ?? new Map(), b.get(task) ?? new Map())]),
    ['overall', comparePaired(pooled(a), pooled(b))],
  ];
  const notes = rows.flatMap(([task, c]) =>
    c.shared === 0
      ? [`${task}: the runs share no instance (A has ${c.onlyA}, B has ${c.onlyB}): nothing to compare`]
      : c.onlyA || c.onlyB
        ? [`${task}: ${c.onlyA} instances only in A and ${c.onlyB} only in B are left out; ${c.shared} are compared`]
        : [],
  );
  return {
    table: {
      name: 'paired',
      columns: ['task', 'instances', 'A', 'B', 'B - A', '95% CI low', '95% CI high', 'test', 'A better', 'B better', 'p-value'],
      rows: rows.map(([task, c]) => [
        task,
        c.shared,
        round(c.meanA),
        round(c.meanB),
        round(c.difference),
        round(c.interval?.[0]),
        round(c.interval?.[1]),
        c.test?.name ?? null,
        c.test?.aBetter ?? null,
        c.test?.bBetter ?? null,
        c.test ? Number(c.test.pValue.toPrecision(4)) : null,
      ]),
    },
    notes: [`paired: A is ${runA}, B is ${runB}; B - A with a 95% paired bootstrap interval (docs/results.md)`, ...notes],
  };
}

// A reference router (OpenRouter-style: a router's answers collected as one more model's records) is
// a row of both tables and a point of the cost setting, scored by the same code as everything else,
// and never a candidate the routers choose from.

import { Command } from 'commander';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ModelOutcome } from '../../analysis/model-outcome.js';
import { METHOD, reportFigures, type RoutingReport } from '../../analysis/routing-analysis.js';
import { syntheticPool } from '../../analysis/synthetic-pool.js';
import { registerAnalyzeCommand } from '../../cli/commands/analyze.js';
import { InputError } from '../../contract/problems.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'br-reference-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { records } = syntheticPool({ models: 4, topics: 4, datasets: 2, queriesPerDataset: 50, generalistEvery: 4, seed: 3 });
// The reference answers as model-01 did, at a price of its own, and lacks two queries of dataset-00.
const reference: ModelOutcome[] = records
  .filter((r) => r.model === 'model-01' && !(r.benchmark === 'dataset-00' && (r.index === 3 || r.index === 4)))
  .map((r) => ({ ...r, model: 'openrouter', cost: 2 * (r.cost ?? 0) }));
const candidates = path.join(dir, 'candidates.jsonl');
const referenceFile = path.join(dir, 'openrouter.jsonl');
writeFileSync(candidates, records.map((r) => JSON.stringify(r)).join('\n'));
writeFileSync(referenceFile, reference.map((r) => JSON.stringify(r)).join('\n'));

async function analyze(...args: string[]): Promise<{ report: RoutingReport; notes: string }> {
  const out: string[] = [];
  const notes: string[] = [];
  const program = new Command('br').exitOverride().configureOutput({ writeErr: (s) => notes.push(s), writeOut: (s) => out.push(s) });
  registerAnalyzeCommand(program, { stdout: (s) => void out.push(s), say: (s) => notes.push(s), env: { BENCHROUTER_HOME: dir } });
  await program.parseAsync(['node', 'br', 'analyze', '--n-init', '2', '--json', ...args]);
  return { report: JSON.parse(out.join('')) as RoutingReport, notes: notes.join('\n') };
}

describe('--reference-router', () => {
  it("scores the named model's records as a reference row and point, outside the candidate pool", async () => {
    const { report: alone } = await analyze('--records', candidates);
    const { report, notes } = await analyze('--records', candidates, referenceFile, '--reference-router', 'openrouter');

    expect(report.pool.models).toEqual(['model-00', 'model-01', 'model-02', 'model-03']);
    // The candidates' figures are those of the analysis without the reference (but the measured training times).
    expect(reportFigures(report).methods.filter((m) => m.kind !== 'reference')).toEqual(reportFigures(alone).methods);
    expect(report.models).toEqual(alone.models);

    const row = report.methods.find((m) => m.name === 'openrouter')!;
    expect(row.kind).toBe('reference');
    // model-01's test scores, less the queries the reference has no record for; twice the cost.
    const testRecords = records.filter((r) => r.model === 'model-01');
    const model01 = report.models.find((m) => m.model === 'model-01')!;
    expect(row.datasetAcc['dataset-01']).toBe(model01.datasetAcc['dataset-01']);
    const missingInTest = row.unanswered!;
    expect(missingInTest).toBeGreaterThanOrEqual(0);
    expect(missingInTest).toBeLessThanOrEqual(2);
    const missingCost = testRecords.filter((r) => r.benchmark === 'dataset-00' && (r.index === 3 || r.index === 4));
    expect(row.cost).toBeGreaterThan(2 * model01.cost - 2 * missingCost.reduce((s, r) => s + (r.cost ?? 0), 0) - 1e-12);
    expect(row.cost).toBeLessThanOrEqual(2 * model01.cost + 1e-12);
    const bs = report.methods.find((m) => m.name === METHOD.bestSingle)!;
    expect(row.gainOverBestSingle).toBeCloseTo((row.acc - bs.acc) / bs.acc, 12);

    const point = report.costAware.find((r) => r.name === 'openrouter')!;
    expect(point.settingName).toBe('reference');
    expect(point.settings).toHaveLength(1);
    expect(point.settings[0]).toMatchObject({ acc: row.acc, cost: row.cost });
    expect(point.perfGain).toBeCloseTo((row.acc - bs.acc) / bs.acc, 12);
    expect(notes).toMatch(/reference router openrouter: records for 98 of 100 queries; not a candidate/);
  });

  it('names the models there are when the reference has no records', async () => {
    await expect(analyze('--records', candidates, '--reference-router', 'openrouterx')).rejects.toThrow(InputError);
    await expect(analyze('--records', candidates, '--reference-router', 'openrouterx')).rejects.toThrow(
      '--reference-router: no records of openrouterx: expected the name of a model in the records (model-00, model-01, model-02, model-03)',
    );
  });
});

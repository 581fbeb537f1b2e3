// The light built-in routers (numpy / scikit-learn: embedllm, frugalgpt, hybridllm), run as the jobs of one
// `br analyze --routers` on a run set whose right routing is known, and scored by BenchRouter's own code.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoutingReport } from '../analysis/routing-analysis.js';
import { br, startHarness, type Harness } from './support/harness.js';

// On a new machine the first job builds the light routers' image (numpy and scikit-learn from PyPI): over 12 minutes
// with a load average of 30-45 on 2 cores here.
const COLD_BUILD_MS = 20 * 60_000;
// Ten distinct questions, each asked 40 times: alpha answers the even ones, beta the odd ones, gamma none.
// The reference model embeds a text as a fixed random vector, so the ten questions are ten separable points.
const QUESTIONS = 10;
const COPIES = 40;
const COST = { alpha: 0.001, beta: 0.003, gamma: 0.005 };
type Model = keyof typeof COST;

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('routers-builtin');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-routers-builtin-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function writeRecords(file: string, models: readonly Model[]): void {
  const lines: string[] = [];
  for (let index = 0; index < QUESTIONS * COPIES; index++) {
    const question = index % QUESTIONS;
    for (const model of models) {
      const right = model !== 'gamma' && (question % 2 === 0) === (model === 'alpha');
      lines.push(
        JSON.stringify({ benchmark: 'quiz', model, index, prompt: `question ${question}: which model knows?`, score: right ? 1 : 0, cost: COST[model] }),
      );
    }
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

async function analyze(models: readonly Model[], routers: string[]): Promise<{ report: RoutingReport; stderr: string }> {
  const records = path.join(scratch, `${models.join('-')}.jsonl`);
  writeRecords(records, models);
  const got = await br(
    ['analyze', '--records', records, '--routers', ...routers, '--embeddings-endpoint', h.model.url, '--embeddings-model', 'embed-small', '--json'],
    h.env,
  );
  expect(got.code, got.stderr).toBe(0);
  return { report: JSON.parse(got.stdout) as RoutingReport, stderr: got.stderr };
}

const method = (report: RoutingReport, name: string) => report.methods.find((m) => m.name === name)!;

describe('built-in light routers', () => {
  it(
    'embedllm, frugalgpt and hybridllm route every test query of three models to the one that answers it: Acc 1 at the Oracle’s cost; their cheapest settings are a single model',
    { timeout: COLD_BUILD_MS },
    async () => {
      const { report, stderr } = await analyze(['alpha', 'beta', 'gamma'], ['embedllm', 'frugalgpt', 'hybridllm']);
      expect(report.routerJobs, stderr).toMatchObject([
        { router: 'embedllm', status: 'SUCCEEDED' },
        { router: 'frugalgpt', status: 'SUCCEEDED' },
        { router: 'hybridllm', status: 'SUCCEEDED' },
      ]);
      expect(report.pool.testQueries).toBe(120);
      const oracle = method(report, 'Oracle');
      const bestSingle = method(report, 'Best Single');
      expect(bestSingle.acc).toBeLessThan(1);
      for (const name of ['embedllm', 'frugalgpt', 'hybridllm']) {
        const row = method(report, name);
        expect({ name, kind: row.kind, acc: row.acc, gap: row.gapToOracle, cost: row.cost }).toEqual({
          name,
          kind: 'router',
          acc: 1,
          gap: 0,
          cost: oracle.cost,
        });
        expect(row.gainOverBestSingle).toBe((1 - bestSingle.acc) / bestSingle.acc);
        expect(row.trainSeconds).toBeGreaterThan(0);
      }
      // Budgets ascend from the cheapest strategy, alpha alone, to one that reaches every answer.
      const sweep = report.costAware.find((r) => r.name === 'frugalgpt (cost settings)')!;
      const alpha = report.models.find((m) => m.model === 'alpha')!;
      expect(sweep.settings[0]!.alpha).toBeCloseTo(COST.alpha, 12);
      expect({ acc: sweep.settings[0]!.acc, cost: sweep.settings[0]!.cost }).toEqual({ acc: alpha.acc, cost: alpha.cost });
      expect(sweep.settings.at(-1)!.acc).toBe(1);
      expect(sweep.perfGain).toBe((1 - bestSingle.acc) / bestSingle.acc);
      // hybridllm's pair is alpha and beta (gamma answers nothing): threshold 0 always takes the pair's small
      // model, one of the two, and 0.5 routes every query right.
      const hybrid = report.costAware.find((r) => r.name === 'hybridllm (cost settings)')!;
      expect(hybrid.settings.map((s) => s.alpha)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
      const singles = report.models.filter((m) => m.model !== 'gamma').map((m) => ({ acc: m.acc, cost: m.cost }));
      expect(singles).toContainEqual({ acc: hybrid.settings[0]!.acc, cost: hybrid.settings[0]!.cost });
      expect(hybrid.settings[5]!.acc).toBe(1);
      // The routers read every vector from the analysis's cache: no job made an embedding call.
      for (const job of report.routerJobs!) expect(job.gatewayRequests ?? 0, job.router).toBe(0);

      // A rerun makes no embedding call at all and prints the same numbers.
      // (The run's preflight reads the endpoint's model list: that is no embedding call.)
      const embeddingCalls = () => h.model.requests.filter((r) => r.path === '/v1/embeddings').length;
      const requestsBefore = embeddingCalls();
      const again = await analyze(['alpha', 'beta', 'gamma'], ['embedllm', 'frugalgpt', 'hybridllm']);
      expect(embeddingCalls()).toBe(requestsBefore);
      const figures = (r: RoutingReport) => r.methods.map((m) => ({ name: m.name, acc: m.acc, cost: m.cost }));
      expect(figures(again.report)).toEqual(figures(report));
    },
  );
});

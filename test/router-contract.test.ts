// The router contract end to end: `br analyze --routers knn` exports the split, runs the built-in kNN
// router container as a job whose embeddings come through the gateway, reads its choices.jsonl back
// and scores them with the same code as the baselines and the in-process routers.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoutingReport } from '../analysis/routing-analysis.js';
import { br, startHarness, type Harness } from './support/harness.js';

// On a new machine the job builds the router image first (numpy from PyPI: 2.5 minutes on 2 loaded cores).
const COLD_BUILD_MS = 10 * 60_000;
// Ten distinct questions, each asked 40 times: any test query has ~28 identical training twins, so its
// 10 nearest neighbours are twins (cosine 1) whatever the split, and the right model is known.
const QUESTIONS = 10;
const COPIES = 40;
const COST = { alpha: 0.001, beta: 0.003 };

let h: Harness;
let scratch: string;
beforeAll(async () => {
  h = await startHarness('routers');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-routers-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** alpha answers the even questions, beta the odd ones; alpha is the cheaper. */
function writeRecords(file: string): void {
  const lines: string[] = [];
  for (let index = 0; index < QUESTIONS * COPIES; index++) {
    const question = index % QUESTIONS;
    for (const model of ['alpha', 'beta'] as const) {
      const right = (question % 2 === 0) === (model === 'alpha');
      lines.push(
        JSON.stringify({ benchmark: 'quiz', model, index, prompt: `question ${question}: which model knows?`, score: right ? 1 : 0, cost: COST[model] }),
      );
    }
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
}

describe('router contract', () => {
  it(
    "the kNN router container routes every test query to the model that answers it: Acc 1, Gap@O 0, the Oracle's cost, as the in-process kNN router",
    { timeout: COLD_BUILD_MS },
    async () => {
      const records = path.join(scratch, 'records.jsonl');
      writeRecords(records);
      const got = await br(
        ['analyze', '--records', records, '--routers', 'knn', '--embeddings-endpoint', h.model.url, '--embeddings-model', 'embed-small', '--json'],
        h.env,
      );
      expect(got.code, got.stderr).toBe(0);
      const report = JSON.parse(got.stdout) as RoutingReport;
      const method = (name: string) => report.methods.find((m) => m.name === name)!;
      const oracle = method('Oracle');
      const knn = method('knn');
      expect(report.routerJobs, got.stderr).toMatchObject([{ router: 'knn', status: 'SUCCEEDED' }]);

      expect(report.pool.testQueries).toBe(120);
      expect(knn.kind).toBe('router');
      expect(knn.acc).toBe(1);
      expect(knn.gapToOracle).toBe(0);
      expect(knn.cost).toBe(oracle.cost);
      expect(knn.trainSeconds).toBeGreaterThan(0);
      expect({ acc: knn.acc, cost: knn.cost }).toEqual({ acc: method('kNN router').acc, cost: method('kNN router').cost });
      const bestSingle = method('Best Single');
      expect(knn.gainOverBestSingle).toBe((1 - bestSingle.acc) / bestSingle.acc);

      // The cost settings: α = 0 always takes the cheaper alpha, α = 1 the right model.
      const sweep = report.costAware.find((r) => r.name === 'knn (cost settings)')!;
      expect(sweep.settings.map((s) => s.alpha)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
      const alpha = report.models.find((m) => m.model === 'alpha')!;
      expect({ acc: sweep.settings[0]!.acc, cost: sweep.settings[0]!.cost }).toEqual({ acc: alpha.acc, cost: alpha.cost });
      expect({ acc: sweep.settings[10]!.acc, cost: sweep.settings[10]!.cost }).toEqual({ acc: 1, cost: oracle.cost });
      expect(sweep.perfGain).toBe((1 - bestSingle.acc) / bestSingle.acc);

      // The router ran as a job and read its vectors from the analysis's cache: the job made no embedding call.
      const [job] = report.routerJobs!;
      expect(job).toMatchObject({ router: 'knn', status: 'SUCCEEDED' });
      expect(job!.gatewayRequests ?? 0).toBe(0);
      expect(got.stderr).toContain('router knn: SUCCEEDED, trained in');
    },
  );
});

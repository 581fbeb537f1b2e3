// The torch routers (routellm from the unmodified routellm 0.2.0 package, graphrouter, routerdc) run as
// jobs by `br analyze --routers` on a pair whose right routing is known, scored by BenchRouter's own code.
// Their image holds PyPI's 5 GB CUDA torch: these run where it is cached (test/support/router-images.ts).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoutingReport } from '../analysis/routing-analysis.js';
import { br, startHarness, type Harness } from './support/harness.js';
import { TORCH_ROUTER_TESTS, TORCH_SKIP_REASON } from './support/router-images.js';

// Cached, only each router's last layer is built, and the run took 15 min here (load average 30-45, before the
// routers were held to one torch thread); cold (BENCHROUTER_SLOW_TESTS=1) the image took 58 min more here.
const TIMEOUT_MS = 90 * 60_000;
// Ten distinct questions, each asked 40 times: alpha answers the even ones, beta the odd ones; alpha is cheaper.
const QUESTIONS = 10;
const COPIES = 40;
const COST = { alpha: 0.001, beta: 0.003 };

if (!TORCH_ROUTER_TESTS) console.warn(`test/routers-torch.test.ts skipped: ${TORCH_SKIP_REASON}`);

let h: Harness;
let scratch: string;
beforeAll(async () => {
  if (!TORCH_ROUTER_TESTS) return;
  h = await startHarness('routers-torch');
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-routers-torch-'));
});
afterAll(async () => {
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe.skipIf(!TORCH_ROUTER_TESTS)('built-in torch routers', () => {
  it(
    'routellm (the unmodified package), graphrouter and routerdc route every test query to the model that answers it: Acc 1 at the Oracle’s cost',
    { timeout: TIMEOUT_MS },
    async () => {
      const records = path.join(scratch, 'pair.jsonl');
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
      writeFileSync(records, `${lines.join('\n')}\n`);
      const got = await br(
        [
          'analyze',
          '--records',
          records,
          '--routers',
          'routellm',
          'graphrouter',
          'routerdc',
          '--embeddings-endpoint',
          h.model.url,
          '--embeddings-model',
          'embed-small',
          '--json',
        ],
        h.env,
      );
      expect(got.code, got.stderr).toBe(0);
      const report = JSON.parse(got.stdout) as RoutingReport;
      expect(report.routerJobs, got.stderr).toMatchObject([
        { router: 'routellm', status: 'SUCCEEDED' },
        { router: 'graphrouter', status: 'SUCCEEDED' },
        { router: 'routerdc', status: 'SUCCEEDED' },
      ]);
      const oracle = report.methods.find((m) => m.name === 'Oracle')!;
      for (const name of ['routellm', 'graphrouter', 'routerdc']) {
        const row = report.methods.find((m) => m.name === name)!;
        expect({ name, acc: row.acc, gap: row.gapToOracle, cost: row.cost }).toEqual({ name, acc: 1, gap: 0, cost: oracle.cost });
        expect(row.trainSeconds).toBeGreaterThan(0);
      }
      // routellm's own MFModel embedded each test prompt, one request each, at routing_io's local endpoint
      // (route.py fails otherwise), which answered from the analysis's cache: no job called the gateway.
      for (const job of report.routerJobs!) expect(job.gatewayRequests ?? 0, job.router).toBe(0);
      const sweep = report.costAware.find((r) => r.name === 'routellm (cost settings)')!;
      expect(sweep.settings.map((s) => s.alpha)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
      expect(sweep.settings[5]!.acc).toBe(1);
    },
  );
});

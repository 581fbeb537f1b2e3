// The torch routers (routellm from the unmodified routellm 0.2.0 package, graphrouter, routerdc) run as
// jobs by `br analyze --routers` on a pair whose right routing is known, scored by BenchRouter's own code;
// then issue 38's "done when": `--routers all` on five models prints both tables with every router's row.
// Their image holds PyPI's 5 GB CUDA torch: these run where it is cached (test/support/router-images.ts).

import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHOD, reportFigures, type RoutingReport } from '../analysis/routing-analysis.js';
import { analysesDir, readSavedAnalysis } from '../analysis/saved-analyses.js';
import { br, repoRoot, startHarness, type Harness } from './support/harness.js';
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

// Five models on ten questions, each asked 40 times: question q is answered by model q % 5, and also by
// epsilon when q % 5 is 0. Epsilon, the dearest, is the Best Single (0.4); the Oracle routes every query
// right, to the cheapest model that answers it.
const FIVE = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'] as const;
const routersDir = path.join(repoRoot, 'routers');
const artifacts = path.join(repoRoot, 'test-artifacts', 'routers', 'analyses');

/** The text tables without the training-time column: wall-clock, the one thing a rerun prints differently. */
const withoutTrainTimes = (text: string) =>
  text
    .split('\n')
    .map((line) => line.replace(/\s+(\d+\.\d (ms|s)|\?|TRAINED)$/, ''))
    .join('\n');

describe.skipIf(!TORCH_ROUTER_TESTS)('br analyze --routers all', () => {
  it(
    'on five models prints both tables with a row, and a training time, for each of the nine routers, each from a directory br validate accepts; a rerun makes no embedding call and prints the same numbers',
    { timeout: 2 * TIMEOUT_MS },
    async () => {
      const dirs = readdirSync(routersDir, { withFileTypes: true }).filter((d) => d.isDirectory());
      for (const dir of dirs) {
        const validated = await br(['validate', path.join(routersDir, dir.name)], h.env);
        expect(validated.code, `${dir.name}: ${validated.stdout}${validated.stderr}`).toBe(0);
      }
      const containers = dirs.map((d) => d.name).sort();
      expect(containers).toEqual(['embedllm', 'frugalgpt', 'graphrouter', 'hybridllm', 'knn', 'routellm', 'routerdc']);

      const records = path.join(scratch, 'five.jsonl');
      const lines: string[] = [];
      for (let index = 0; index < QUESTIONS * COPIES; index++) {
        const question = index % QUESTIONS;
        FIVE.forEach((model, m) => {
          const right = question % 5 === m || (model === 'epsilon' && question % 5 === 0);
          lines.push(
            JSON.stringify({ benchmark: 'quiz', model, index, prompt: `question ${question}: which model knows?`, score: right ? 1 : 0, cost: (m + 1) / 1000 }),
          );
        });
      }
      writeFileSync(records, `${lines.join('\n')}\n`);
      const analyze = async () => {
        const started = Date.now();
        const got = await br(
          ['analyze', '--records', records, '--routers', 'all', '--embeddings-endpoint', h.model.url, '--embeddings-model', 'embed-small'],
          h.env,
        );
        console.log(`br analyze --routers all on five models: ${((Date.now() - started) / 1000).toFixed(0)} s\n${got.stdout}`);
        expect(got.code, got.stderr).toBe(0);
        // The text went to stdout; the same report was kept, and is read back for its figures.
        const id = /saved analysis (an-\S+) /.exec(got.stderr)![1]!;
        // Kept for a look at the dashboard (BENCHROUTER_HOME=… br serve) after the harness's home is gone.
        mkdirSync(artifacts, { recursive: true });
        copyFileSync(path.join(analysesDir(h.home), `${id}.json`), path.join(artifacts, `${id}.json`));
        return { text: got.stdout, report: readSavedAnalysis(h.home, id)!.report };
      };

      const first = await analyze();
      const { report } = first;
      expect(report.pool.models).toEqual([...FIVE].sort());
      expect(report.routerJobs!.map((j) => ({ router: j.router, status: j.status, problem: j.problem }))).toEqual(
        containers.map((router) => ({ router, status: 'SUCCEEDED', problem: undefined })),
      );
      expect(first.text).toContain('Pure performance (test):');
      expect(first.text).toContain("Performance–cost (over each router's settings):");
      // Nine routers: the in-process Avengers, Avengers-Pro and kNN, and six methods as containers (knn's
      // container is a tenth row). Each row in either table says how long its router trained.
      const routerRows = [...report.methods.filter((m) => m.kind === 'router'), ...report.costAware];
      const names = new Set(routerRows.map((r) => r.name.replace(/ \(cost settings\)$/, '')));
      for (const name of [METHOD.clusterRouter, METHOD.clusterCostAware, METHOD.knnRouter, ...containers]) expect(names, name).toContain(name);
      expect(report.methods.filter((m) => m.kind === 'router')).toHaveLength(2 + containers.length);
      const textLines = first.text.split('\n');
      for (const row of routerRows) {
        expect(row.trainSeconds, row.name).toBeGreaterThan(0);
        const line = textLines.find((l) => l.startsWith(`${row.name} `));
        expect(line, row.name).toMatch(/\d+\.\d (ms|s)$/);
      }
      // Every container's choices were scored: no router did worse than always taking the cheapest model.
      const cheapest = report.models.find((m) => m.model === 'alpha')!;
      for (const name of containers) expect(report.methods.find((m) => m.name === name)!.acc, name).toBeGreaterThanOrEqual(cheapest.acc);

      const requestsBefore = h.model.requests.length;
      const again = await analyze();
      expect(h.model.requests.length, 'embedding calls on the rerun').toBe(requestsBefore);
      expect(withoutTrainTimes(again.text)).toBe(withoutTrainTimes(first.text));
      // Every figure but the training times (and the router jobs' own ids), in the kept JSON.
      const figures = (r: RoutingReport) => ({ ...reportFigures(r), routerJobs: undefined });
      expect(figures(again.report)).toEqual(figures(report));
    },
  );
});

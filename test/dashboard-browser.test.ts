// The dashboard in a real browser (Debian's Chromium driven by playwright-core) against a real
// `br serve`, dev server, worker, Docker and reference model: sign in, submit from the form, watch the
// progress reach 100%, compare the run page's scores with the API's, open the leaderboard, the
// routing analysis plot, and an analysis `br analyze` saved with a router container's rows.
// Screenshots go to test-artifacts/dashboard/.

import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../runs/run-spec.js';
import { callApi, readEvents, startApiProcess, type ApiProcess } from './support/api-process.js';
import { br, repoRoot, startHarness, type Harness } from './support/harness.js';

// A model name of this file's own (the reference model reads the accuracy from `acc80`): other files run
// arith against reference-acc80 on the same dev server, and the leaderboard keeps the latest per model.
const MODEL = `dashboard-acc80-${randomBytes(3).toString('hex')}`;
import { waitFor } from './support/processes.js';

const artifacts = path.join(repoRoot, 'test-artifacts', 'dashboard');
/** Per model call: slow enough that the run page sees the run going, fast enough for a short test. */
const MODEL_DELAY_MS = 150;

let h: Harness;
let api: ApiProcess;
let browser: Browser;
let page: Page;
let slowModel: http.Server;
let slowModelUrl: string;

/** The reference model behind a delay: a run of arith then takes a few seconds instead of one. */
async function startSlowModel(target: string): Promise<void> {
  const upstream = new URL(target);
  slowModel = http.createServer((request, response) => {
    setTimeout(() => {
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, path: request.url, method: request.method, headers: request.headers },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forward.on('error', () => response.destroy());
      request.pipe(forward);
    }, MODEL_DELAY_MS);
  });
  await new Promise<void>((resolve) => slowModel.listen(0, '127.0.0.1', resolve));
  slowModelUrl = `http://127.0.0.1:${(slowModel.address() as { port: number }).port}/v1`;
}

async function screenshot(name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage });
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  h = await startHarness('dashboard');
  api = await startApiProcess(h.env, h.home);
  await startSlowModel(h.model.url);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => slowModel?.close(r));
  await api?.stop();
  await h?.close();
});

describe('the dashboard in Chromium', () => {
  let runId: string;

  it('sends a visitor without a session to sign in, and lets a token in', async () => {
    await page.goto(`${api.url}/ui/leaderboard`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.fill('input[name=token]', 'br_wrong');
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('.error')).toContain('Unknown token');
    await page.fill('input[name=token]', api.fullToken);
    await screenshot('01-sign-in');
    await page.click('button[type=submit]');
    await page.waitForURL(`${api.url}/ui/leaderboard`);
  });

  it('submits arith from the form and shows the progress reaching 100%, then the scores the API reports', async () => {
    await page.goto(`${api.url}/ui/submit`);
    await page.selectOption('select[name=benchmark]', 'arith');
    await page.fill('input[name=model]', MODEL);
    await page.fill('input[name=endpoint]', slowModelUrl);
    await screenshot('02-submit-form');
    await page.click('button[type=submit]');
    await page.waitForURL(/\/ui\/runs\/br-/);
    runId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    // The bar moves as jobs finish, over the run's SSE stream.
    await page.waitForSelector('.progress[data-run]', { timeout: 30_000 });
    await screenshot('03-run-in-progress');
    await page.waitForSelector('.progress[data-percent="100"]', { timeout: 120_000 });
    expect(await page.textContent('.progress .label')).toBe('100% (40/40 instances)');
    expect(await page.locator('.job-state').allTextContents()).toEqual(['succeeded', 'succeeded']);
    await screenshot('04-run-at-100');
    await page.waitForSelector('#overall', { timeout: 30_000 });
    await screenshot('05-run-results');

    const results = await callApi<RunResult>(api, 'GET', `/runs/${runId}/results`);
    expect(results.status).toBe(200);
    expect(await page.textContent('#overall')).toBe(results.body.overall!.toFixed(4));
    for (const job of results.body.jobs) {
      expect(await page.textContent(`.score[data-task="${job.task}"]`)).toBe(job.result!.overall.toFixed(4));
    }
    const logLinks = await page.$$eval('#jobs a[href$="/log"]', (links) => links.map((a) => a.getAttribute('href')));
    expect(logLinks).toHaveLength(2);
    const log = await page.request.get(`${api.url}${logLinks[0]}`);
    expect(log.status()).toBe(200);
  });

  it('lists the run with its status colour, and shows it on the leaderboard', async () => {
    await page.goto(`${api.url}/`);
    const row = page.locator('#runs tr', { hasText: runId });
    expect(await row.locator('.status').getAttribute('class')).toContain('status-completed');
    await screenshot('06-runs-list');
    await waitFor(
      'the score to reach visibility',
      async () => {
        await page.goto(`${api.url}/ui/leaderboard`);
        return (await page.locator('#leaderboard tr', { hasText: MODEL }).count()) === 1;
      },
      30_000,
    );
    const results = await callApi<RunResult>(api, 'GET', `/runs/${runId}/results`);
    expect(await page.locator('#leaderboard tr', { hasText: MODEL }).locator('a').textContent()).toBe(results.body.overall!.toFixed(4));
    await screenshot('07-leaderboard');
  });

  it("shows the routing analysis of two models' runs with the accuracy-cost plot, and compares them", async () => {
    const other = await callApi<{ runId: string }>(api, 'POST', '/evals/submit', {
      body: { benchmark: 'arith', model: 'reference-acc50', endpoint: h.model.url },
    });
    expect(other.status).toBe(201);
    await readEvents(api, other.body.runId);
    await page.goto(`${api.url}/ui/analysis?runs=${encodeURIComponent(`${runId},${other.body.runId}`)}`);
    await page.waitForSelector('#plot');
    // The SVG loaded and has a size: an img whose source failed (401, 422) has naturalWidth 0.
    const plot = await page.$eval('#plot', (img) => ({
      complete: (img as unknown as { complete: boolean }).complete,
      width: (img as unknown as { naturalWidth: number }).naturalWidth,
    }));
    expect(plot.complete).toBe(true);
    expect(plot.width).toBeGreaterThan(100);
    expect(await page.locator('h2', { hasText: 'Pareto frontier' }).count()).toBe(1);
    await screenshot('08-routing-analysis', false);

    await page.goto(`${api.url}/ui/compare?runs=${encodeURIComponent(`${runId},${other.body.runId}`)}`);
    const compare = await callApi<{ view: { columns: string[] } }>(api, 'GET', `/compare?runs=${runId},${other.body.runId}`);
    expect(await page.locator('#compare th').allTextContents()).toEqual(compare.body.view.columns);
    await screenshot('09-compare');
  });

  it("lists the analyses br analyze saved and shows one with a router container's rows: both tables, training times and the plot", async () => {
    // Three models on ten questions (each asked 20 times): alpha answers the even ones, beta the odd ones.
    const records = path.join(h.home, 'three.jsonl');
    const lines: string[] = [];
    for (let index = 0; index < 200; index++)
      for (const [m, model] of ['alpha', 'beta', 'gamma'].entries()) {
        const right = model !== 'gamma' && (index % 10) % 2 === m;
        lines.push(JSON.stringify({ benchmark: 'quiz', model, index, prompt: `question ${index % 10}`, score: right ? 1 : 0, cost: (m + 1) / 1000 }));
      }
    writeFileSync(records, `${lines.join('\n')}\n`);
    // The knn router's light image is built by the default suite's router tests (test/router-contract.test.ts).
    const analyzed = await br(
      ['analyze', '--records', records, '--routers', 'knn', '--embeddings-endpoint', h.model.url, '--embeddings-model', 'embed-small', '--json'],
      h.env,
    );
    expect(analyzed.code, analyzed.stderr).toBe(0);
    const id = /saved analysis (an-\S+) /.exec(analyzed.stderr)![1]!;

    const listed = await callApi<{ analyses: Array<{ id: string; routers: string[] }> }>(api, 'GET', '/analyses');
    expect(listed.body.analyses.find((a) => a.id === id)?.routers).toContain('knn');
    await page.goto(`${api.url}/ui/analysis`);
    await page.click(`#saved-analyses a[href="/ui/analysis?id=${id}"]`);
    await page.waitForSelector('#plot');
    expect(await page.textContent('#analysis-header')).toContain(id);
    const plot = await page.$eval('#plot', (img) => (img as unknown as { naturalWidth: number }).naturalWidth);
    expect(plot).toBeGreaterThan(100);

    // Both of the paper's tables, as the API has them, each router row with its training time.
    const saved = await callApi<{ tables: Array<{ name: string; columns: string[]; rows: unknown[][] }> }>(api, 'GET', `/analyses/${id}`);
    expect(saved.status).toBe(200);
    for (const [name, selector, routers] of [
      ['Methods', '#table-methods', ['Avengers (cluster router)', 'kNN router', 'knn']],
      ['Cost setting', '#table-cost-setting', ['Avengers-Pro (cluster router, cost-aware)', 'kNN router (cost-aware)', 'knn (cost settings)']],
    ] as const) {
      const view = saved.body.tables.find((t) => t.name === name)!;
      expect(await page.locator(`${selector} th`).allTextContents()).toEqual(view.columns);
      const train = view.columns.indexOf('Train (s)');
      for (const router of routers) {
        const row = page.locator(`${selector} tr`, { has: page.locator('td:first-child', { hasText: new RegExp(`^${router.replace(/[()]/g, '\\$&')}$`) }) });
        const seconds = Number(await row.locator('td').nth(train).textContent());
        expect(seconds, `${name}: ${router}`).toBeGreaterThan(0);
      }
    }
    expect(await page.locator('h2', { hasText: 'Pure performance (test)' }).count()).toBe(1);
    expect(await page.locator('h2', { hasText: 'Performance–cost' }).count()).toBe(1);
    // The page down to the two tables (the frontier's table below is long).
    const bottom = await page.$eval('#table-cost-setting', (el) => {
      const box = (el as unknown as { getBoundingClientRect(): { bottom: number } }).getBoundingClientRect();
      return Math.ceil(box.bottom + 16);
    });
    await page.screenshot({ path: path.join(artifacts, '10-saved-analysis.png'), fullPage: true, clip: { x: 0, y: 0, width: 1280, height: bottom } });

    const missing = await callApi(api, 'GET', '/analyses/an-20000101-000000-000000');
    expect(missing.status).toBe(404);
  });
});

// The dashboard's per-instance pages in a real browser (Debian's Chromium via playwright-core) against
// a real `br serve`, dev server, worker and Docker: the mcp benchmark against the replay model (5
// instances, 4 pass; each step a tool call through the official MCP filesystem server), its failure
// found with the filter, an instance's calls read as a chat in order with their tool calls, and no key
// or job token in any transcript; the pictures (a run over time, two runs' agreement, the leaderboard's
// heat map); a running run's live figures; then a run whose job holds 10,000 records, paged and filtered.
// Screenshots go to test-artifacts/instances/.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { jobFile } from '../runs/job-artifacts.js';
import type { RunResult } from '../runs/run-spec.js';
import { callApi, readEvents, startApiProcess, type ApiProcess } from './support/api-process.js';
import { replayAnswers } from './support/benchmark-image.js';
import { br, repoRoot, startHarness, type Harness } from './support/harness.js';

const artifacts = path.join(repoRoot, 'test-artifacts', 'instances');
// On a new machine the first mcp run builds its image (about 2.5 minutes on 2 loaded cores).
const COLD_BUILD_MS = 10 * 60_000;
/** The worker resolves the run's key from this variable: a key that must never reach a transcript. */
const KEY_ENV = 'BR_TEST_DASHBOARD_KEY';
const KEY = `sk-dashboard-${randomBytes(16).toString('hex')}`;
const JOB_TOKEN = /brj-[0-9a-f]{40}/;
// Model names of this file's own (the reference model reads the accuracy from `acc80`): the leaderboard keeps the latest per model.
const SUFFIX = randomBytes(3).toString('hex');
const MODEL_A = `instances-acc80-${SUFFIX}`;
const MODEL_B = `instances-acc50-${SUFFIX}`;

interface Row {
  jobId: string;
  task: string;
  id: string;
  score: number;
  calls: number | null;
}
interface Instances {
  instances: Row[];
  total: number;
  offset: number;
  nextOffset?: number;
}

let h: Harness;
let api: ApiProcess;
let replay: ReplayModelServer;
let browser: Browser;
let page: Page;
/** What Chromium refused under the pages' Content-Security-Policy: must stay empty. */
const refused: string[] = [];

/** The reference model behind a delay per call, so a run lasts long enough to be watched. */
async function slowModel(target: string, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server = http.createServer((request, response) => {
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
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, close: () => new Promise((r) => server.close(() => r())) };
}

async function screenshot(name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage });
}

function logTail(runId: string, jobId: string): string {
  const file = jobFile(h.settings.artifactsRoot, { runId, jobId }, 'containerTail');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-20).join('\n') : '(no container log)';
}

async function finishedRun(body: Record<string, unknown>): Promise<RunResult> {
  const submitted = await callApi<{ runId: string }>(api, 'POST', '/evals/submit', { body });
  expect(submitted.status).toBe(201);
  await readEvents(api, submitted.body.runId);
  const results = await callApi<RunResult>(api, 'GET', `/runs/${submitted.body.runId}/results`);
  expect(results.status).toBe(200);
  return results.body;
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  process.env[KEY_ENV] = KEY;
  h = await startHarness('instances');
  api = await startApiProcess(h.env, h.home);
  replay = await startReplayModel({ answersFile: replayAnswers('mcp-filesystem.jsonl') });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) refused.push(message.text());
  });
  await page.goto(`${api.url}/login`);
  await page.fill('input[name=token]', api.fullToken);
  await page.click('button[type=submit]');
  await page.waitForURL(`${api.url}/`);
});

afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await replay?.close();
  await h?.close();
  delete process.env[KEY_ENV];
});

describe('per-instance pages in Chromium', () => {
  let run: RunResult;

  it('lists the mcp run instances and finds its one failure with the filter', { timeout: COLD_BUILD_MS }, async () => {
    run = await finishedRun({ benchmark: 'mcp', model: 'replay', endpoint: replay.url, apiKeyEnv: KEY_ENV });
    // A job that did not succeed says why: its status, reason and the end of its container's log.
    const why = run.jobs.map((j) => `${j.task} ${j.status} ${j.reason ?? ''}\n${logTail(run.runId, j.jobId)}`).join('\n');
    expect(run.overall, why).toBe(0.8);
    expect(replay.counts).toEqual({ answered: 14, unknown: 0 });

    const all = await callApi<Instances>(api, 'GET', `/runs/${run.runId}/instances`);
    expect(all.body.total).toBe(5);
    expect(all.body.instances.filter((r) => r.score < 1)).toHaveLength(1);
    expect(all.body.instances.reduce((sum, r) => sum + r.calls!, 0)).toBe(14);
    const failed = await callApi<Instances>(api, 'GET', `/runs/${run.runId}/instances?failed=true`);
    expect(failed.body.total).toBe(1);
    const failure = failed.body.instances[0]!;
    expect(failure.score).toBe(0);

    await page.goto(`${api.url}/ui/runs/${run.runId}`);
    await screenshot('01-run-page');
    await page.click('#failures-link');
    expect(await page.locator('#instances tbody tr').count()).toBe(1);
    expect(await page.textContent('#instances .instance-id')).toBe(failure.id);
    expect(await page.textContent('#instances .score')).toBe('0.0000');
    expect(await page.textContent('#shown')).toBe('1–1 of 1');
    await screenshot('02-failures-filtered');

    await page.uncheck('input[name=failed]');
    await page.fill('input[name=q]', all.body.instances[2]!.id);
    await page.click('#instance-filter button[type=submit]');
    expect(await page.locator('#instances .instance-id').allTextContents()).toEqual([all.body.instances[2]!.id]);
  });

  it("shows an instance's calls in order as a chat, its tool calls and their results, as br transcripts counts them", async () => {
    const { body } = await callApi<Instances>(api, 'GET', `/runs/${run.runId}/instances`);
    const chosen = body.instances.find((r) => r.calls! > 1)!;
    await page.goto(`${api.url}/ui/runs/${run.runId}/instances`);
    await page.locator('#instances tr', { hasText: chosen.id }).locator('a.transcript').click();
    await page.waitForSelector('.call');
    expect(await page.textContent('#call-count')).toBe(`${chosen.calls} calls`);
    const seqs = (await page.locator('.call').evaluateAll((calls) => calls.map((c) => Number(c.getAttribute('data-seq'))))) as number[];
    expect(seqs).toHaveLength(chosen.calls!);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    // The first call opens with the agent's system and user turns; later calls carry the tool's result back.
    expect(await page.locator('.call').first().locator('.turn-system, .turn-user').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('.tool-call').count()).toBeGreaterThanOrEqual(chosen.calls! - 1);
    expect(await page.locator('.turn-tool').count()).toBeGreaterThanOrEqual(1);
    await screenshot('03-transcript-chat');

    const cli = await br(['transcripts', run.runId, '--instance', chosen.id], h.env);
    expect(cli.stdout).toContain(`${chosen.calls} calls of instance ${chosen.id}`);
    expect(cli.stdout.match(/ {2}assistant → \w+\(/g)?.length).toBe(await page.locator('.tool-call').count());
  });

  it('keeps the key and the job token out of every transcript, its API and its page', async () => {
    const runDir = path.join(h.settings.artifactsRoot, run.runId);
    const transcripts = readdirSync(runDir)
      .filter((d) => d.startsWith(`${run.runId}.`))
      .map((jobId) => readFileSync(jobFile(h.settings.artifactsRoot, { runId: run.runId, jobId }, 'transcript'), 'utf8'));
    expect(transcripts.join('').split('\n').length).toBeGreaterThan(14);
    const job = run.jobs[0]!.jobId;
    const json = await callApi(api, 'GET', `/runs/${run.runId}/jobs/${job}/transcript`);
    expect(json.status).toBe(200);
    await page.goto(`${api.url}/ui/runs/${run.runId}/jobs/${encodeURIComponent(job)}/transcript`);
    for (const text of [...transcripts, JSON.stringify(json.body), await page.content()]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toMatch(JOB_TOKEN);
    }
  });

  it('draws the finished run over time, as the page inlines it and as PNG from the API', async () => {
    await page.goto(`${api.url}/ui/runs/${run.runId}`);
    expect(await page.getAttribute('#run-timeline .panel[data-panel="jobs finished"]', 'data-total')).toBe(String(run.jobs.length));
    expect(await page.locator('#run-timeline .panel[data-panel="calls per minute"] rect').count()).toBeGreaterThan(0);
    const png = await page.request.get(`${api.url}/runs/${run.runId}/timeline.png`);
    expect([png.status(), png.headers()['content-type']]).toEqual([200, 'image/png']);
    await page.locator('#run-timeline').screenshot({ path: path.join(artifacts, '05-run-timeline.png') });
  });

  let arith: RunResult;
  it('compares two arith runs instance by instance as an agreement matrix, and shows both on the heat map with their intervals', async () => {
    arith = await finishedRun({ benchmark: 'arith', model: MODEL_A, endpoint: h.model.url });
    const other = await finishedRun({ benchmark: 'arith', model: MODEL_B, endpoint: h.model.url });
    const scores = async (runId: string) =>
      new Map((await callApi<Instances>(api, 'GET', `/runs/${runId}/instances?limit=1000`)).body.instances.map((r) => [`${r.task}/${r.id}`, r.score]));
    const [a, b] = [await scores(arith.runId), await scores(other.runId)];
    const expected = { bothRight: 0, onlyA: 0, onlyB: 0, neither: 0 };
    for (const [id, score] of a) {
      const key = score >= 0.5 ? (b.get(id)! >= 0.5 ? 'bothRight' : 'onlyA') : b.get(id)! >= 0.5 ? 'onlyB' : 'neither';
      expected[key] += 1;
    }
    expect(a.size).toBe(40);
    const agreement = await callApi(api, 'GET', `/compare/agreement?runs=${arith.runId},${other.runId}`);
    expect(agreement.body).toEqual({ runA: arith.runId, runB: other.runId, ...expected, shared: 40, onlyInA: 0, onlyInB: 0 });

    await page.goto(`${api.url}/ui/compare?runs=${encodeURIComponent(`${arith.runId},${other.runId}`)}`);
    const cells = await page
      .locator('#agreement-matrix .agreement')
      .evaluateAll((gs) => Object.fromEntries(gs.map((g) => [g.getAttribute('data-cell'), Number(g.getAttribute('data-count'))])));
    expect(cells).toEqual(expected);
    await page.locator('#agreement-matrix').screenshot({ path: path.join(artifacts, '06-agreement-matrix.png') });

    await page.goto(`${api.url}/ui/leaderboard`);
    for (const [model, result] of [
      [MODEL_A, arith],
      [MODEL_B, other],
    ] as const)
      expect(Number(await page.getAttribute(`#leaderboard-heatmap .cell[data-row="${model}"][data-column="arith"]`, 'data-value'))).toBe(result.overall);
    expect(await page.locator('#leaderboard-heatmap .interval').count()).toBeGreaterThanOrEqual(2);
    await page.locator('#leaderboard-heatmap').screenshot({ path: path.join(artifacts, '07-leaderboard-heatmap.png') });
    const svg = await page.request.get(`${api.url}/leaderboard/heatmap.svg`);
    expect([svg.status(), svg.headers()['content-type']]).toEqual([200, 'image/svg+xml']);
    expect(await svg.text()).toContain(`data-row="${MODEL_A}"`);
  });

  it('shows a running run its time left, once a job has finished, and the calls and tokens per second from the gateway', async () => {
    const slow = await slowModel(h.model.url, 400);
    try {
      const submitted = await callApi<{ runId: string }>(api, 'POST', '/evals/submit', {
        body: { benchmark: 'arith', model: `live-acc80-${SUFFIX}`, endpoint: slow.url, concurrency: 1 },
      });
      expect(submitted.status).toBe(201);
      await page.goto(`${api.url}/ui/runs/${submitted.body.runId}`);
      await page.waitForSelector('#live-calls[data-value]:not([data-value="0"])', { timeout: 60_000 });
      expect(Number(await page.getAttribute('#live-tokens', 'data-value'))).toBeGreaterThan(0);
      await page.waitForSelector('#live-eta[data-seconds]', { timeout: 60_000 });
      expect(await page.textContent('#live-eta')).toMatch(/^~.+ \(from 1 finished job\)$/);
      await screenshot('08-live-run', false);
      await readEvents(api, submitted.body.runId);
    } finally {
      await slow.close();
    }
  });

  it('pages through a job of 10,000 records, 50 at a time, and filters them', async () => {
    const job = arith.jobs[0]!;
    // Synthetic records in the finished job's artifacts: instance i scores 1 unless i is a multiple of 4.
    const lines = Array.from({ length: 10_000 }, (_, i) =>
      JSON.stringify({
        index: `n-${i}`,
        prompt: `What is ${i} + 1?`,
        prediction: String(i + 1),
        score: i % 4 === 0 ? 0 : 1,
        prompt_tokens: 10,
        completion_tokens: 2,
      }),
    );
    writeFileSync(jobFile(h.settings.artifactsRoot, { runId: arith.runId, jobId: job.jobId }, 'records'), `${lines.join('\n')}\n`);

    const base = `${api.url}/ui/runs/${arith.runId}/instances?job=${encodeURIComponent(job.jobId)}`;
    const started = Date.now();
    await page.goto(base);
    const firstPageMs = Date.now() - started;
    expect(await page.textContent('#shown')).toBe('1–50 of 10000');
    expect(await page.locator('#instances tbody tr').count()).toBe(50);
    await screenshot('04-10000-instances', false);
    await page.click('a[rel=next]');
    expect(await page.textContent('#shown')).toBe('51–100 of 10000');
    expect(await page.textContent('#instances .instance-id')).toBe('n-50');
    await page.goto(`${base}&offset=9950`);
    expect(await page.locator('#instances .instance-id').last().textContent()).toBe('n-9999');
    expect(await page.locator('a[rel=next]').count()).toBe(0);
    await page.goto(`${base}&failed=true`);
    expect(await page.textContent('#shown')).toBe('1–50 of 2500');
    expect(await page.locator('#instances .instance-id').nth(1).textContent()).toBe('n-4');
    await page.goto(`${base}&q=${encodeURIComponent('What is 4242 +')}`);
    expect(await page.locator('#instances .instance-id').allTextContents()).toEqual(['n-4242']);
    // One page of 50 rows, not 10,000: the HTML stays small however long the job is.
    expect((await page.content()).length).toBeLessThan(40_000);
    console.log(`10,000-record job: first page in ${firstPageMs} ms`);
  });

  it('serves every page under a policy of this site only and no inline script, which none of them breaks', async () => {
    const response = await page.goto(`${api.url}/ui/runs/${run.runId}/instances`);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(refused).toEqual([]);
  });
});

// Evaluation schedules over HTTP and in the dashboard, against a real `br serve`, dev server, worker,
// Docker engine and reference model: create and trigger a schedule through the API for three
// checkpoints, read score against checkpoint, then see the plot and table in Chromium with each point
// linked to its run. Screenshots go to test-artifacts/schedules/.

import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedArithScore } from '../reference-model/expected-score.js';
import { callApi, startApiProcess, type ApiProcess } from './support/api-process.js';
import { repoRoot, startHarness, type Harness } from './support/harness.js';
import { waitFor } from './support/processes.js';

const artifacts = path.join(repoRoot, 'test-artifacts', 'schedules');
const arithDir = path.join(repoRoot, 'benchmarks', 'arith');
const name = `api-${randomBytes(3).toString('hex')}`;

let h: Harness;
let api: ApiProcess;
let browser: Browser;
let page: Page;

interface ErrorBody {
  error: { code: string; message: string; field?: string };
}
interface Board {
  schedule: { name: string; paused: boolean; everySeconds: number | null; target: string };
  benchmarks: string[];
  rows: Array<{ checkpoint: string; foundAt: string; cells: Record<string, { runId: string; status: string; score?: number; link: string }> }>;
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  h = await startHarness('schedule-api');
  api = await startApiProcess(h.env, h.home);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await h?.close();
});

/** Triggers over HTTP and waits until the board has `rows` checkpoints, all scored. */
async function triggerAndWait(rows: number): Promise<Board> {
  const triggered = await callApi(api, 'POST', `/schedules/${name}/trigger`);
  expect(triggered).toEqual({ status: 202, body: { name, triggered: true } });
  let board: Board | undefined;
  await waitFor(
    `${rows} scored checkpoints`,
    async () => {
      board = (await callApi<Board>(api, 'GET', `/schedules/${name}`)).body;
      return board.rows.length === rows && board.rows.every((r) => r.cells.arith?.score !== undefined);
    },
    120_000,
  );
  return board!;
}

describe('schedules over HTTP', () => {
  it('refuses bad bodies naming the field, an existing name with 409 and an unknown schedule with 404', async () => {
    const badName = await callApi<ErrorBody>(api, 'POST', '/schedules', { body: { name: 'Bad!', benchmark: 'arith', endpoint: h.model.url } });
    expect(badName.status).toBe(400);
    expect(badName.body.error.field).toBe('body.name');
    const badEvery = await callApi<ErrorBody>(api, 'POST', '/schedules', { body: { name, benchmark: 'arith', endpoint: h.model.url, every: '5 weeks' } });
    expect(badEvery.status).toBe(422);
    expect(badEvery.body.error.message).toBe(
      'body.every: expected an interval such as 30s, 15m, 2h or 1d (a bare number is minutes), at least 1s, got "5 weeks"',
    );
    const withModel = await callApi<ErrorBody>(api, 'POST', '/schedules', { body: { name, benchmark: 'arith', endpoint: h.model.url, model: 'x' } });
    expect(withModel.status).toBe(400);
    const missing = await callApi<ErrorBody>(api, 'POST', '/schedules/none-such/trigger');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({ code: 'NOT_FOUND', message: 'no schedule named "none-such" (br schedule list shows them)', field: 'path.name' });
    const reader = await callApi<ErrorBody>(api, 'POST', '/schedules', { token: api.readToken, body: { name, benchmark: 'arith', endpoint: h.model.url } });
    expect(reader.status).toBe(403);
  });

  it('creates a schedule, evaluates three checkpoints once each and reports score against checkpoint', async () => {
    const created = await callApi(api, 'POST', '/schedules', { body: { name, benchmark: 'arith', endpoint: h.model.url, every: '1d', concurrency: 2 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name, target: 'arith', endpoint: h.model.url, everySeconds: 86400, paused: false, recentFirings: [] });
    const again = await callApi<ErrorBody>(api, 'POST', '/schedules', { body: { name, benchmark: 'arith', endpoint: h.model.url } });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe(`a schedule named "${name}" exists already (br schedule delete ${name} first)`);

    h.model.serveModels(['reference-acc80']);
    await triggerAndWait(1);
    h.model.serveModels(['reference-acc50']);
    await triggerAndWait(2);
    h.model.serveModels(['reference-acc20']);
    const board = await triggerAndWait(3);
    const acc80 = expectedArithScore(arithDir, 'reference-acc80').overall;
    const acc50 = expectedArithScore(arithDir, 'reference-acc50').overall;
    const acc20 = expectedArithScore(arithDir, 'reference-acc20').overall;
    expect(board.benchmarks).toEqual(['arith']);
    expect(board.rows.map((r) => [r.checkpoint, r.cells.arith!.status, r.cells.arith!.score])).toEqual([
      ['reference-acc80', 'COMPLETED', acc80],
      ['reference-acc50', 'COMPLETED', acc50],
      ['reference-acc20', 'COMPLETED', acc20],
    ]);
    for (const row of board.rows) expect(row.cells.arith!.link).toBe(`${api.url}/runs/${encodeURIComponent(row.cells.arith!.runId)}`);

    const paused = await callApi(api, 'POST', `/schedules/${name}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ name, paused: true, nextFiring: null });
    // Other test files share the dev server: only this file's schedule is looked at.
    const listed = await callApi<{ schedules: Array<{ name: string; paused: boolean }> }>(api, 'GET', '/schedules');
    expect(listed.body.schedules.filter((s) => s.name === name).map((s) => [s.name, s.paused])).toEqual([[name, true]]);
  });

  it('shows the schedule in the dashboard: the plot has a point per checkpoint, each linked to its run', async () => {
    await page.goto(`${api.url}/login?next=${encodeURIComponent('/ui/schedules')}`);
    await page.fill('input[name=token]', api.fullToken);
    await page.click('button[type=submit]');
    await page.waitForURL(`${api.url}/ui/schedules`);
    const row = page.locator('#schedules tbody tr', { has: page.locator(`a[href="/ui/schedules/${name}"]`) });
    expect(await row.locator('td').allTextContents()).toEqual([name, 'arith', h.model.url, 'every 1d', 'PAUSED', '–', expect.any(String)]);
    await page.screenshot({ path: path.join(artifacts, '01-schedules.png'), fullPage: true });

    await page.click(`#schedules a[href="/ui/schedules/${name}"]`);
    await page.waitForURL(`${api.url}/ui/schedules/${name}`);
    const board = (await callApi<Board>(api, 'GET', `/schedules/${name}`)).body;
    const points = page.locator('#checkpoint-plot circle.point');
    expect(await points.count()).toBe(3);
    expect(await points.evaluateAll((cs) => cs.map((c) => [c.getAttribute('data-checkpoint'), Number(c.getAttribute('data-score'))]))).toEqual(
      board.rows.map((r) => [r.checkpoint, r.cells.arith!.score]),
    );
    // The lower score sits lower on the plot.
    const ys = await points.evaluateAll((cs) => cs.map((c) => Number(c.getAttribute('cy'))));
    expect(ys[1]!).toBeGreaterThan(ys[0]!);
    expect(ys[2]!).toBeGreaterThan(ys[1]!);
    // The same picture from the API, as SVG and as PNG.
    const svg = await page.request.get(`${api.url}/schedules/${name}/plot.svg`);
    expect([svg.status(), svg.headers()['content-type']]).toEqual([200, 'image/svg+xml']);
    expect((await svg.text()).match(/<circle class="point"/g)).toHaveLength(3);
    const png = await page.request.get(`${api.url}/schedules/${name}/plot.png`);
    expect([png.status(), png.headers()['content-type'], (await png.body()).subarray(1, 4).toString()]).toEqual([200, 'image/png', 'PNG']);
    expect(await page.locator('#checkpoints tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)))).toEqual(
      board.rows.map((r) => [r.checkpoint, r.foundAt, r.cells.arith!.score!.toFixed(4)]),
    );
    await page.screenshot({ path: path.join(artifacts, '02-schedule.png'), fullPage: true });

    await points.nth(1).click();
    await page.waitForURL(`${api.url}/ui/runs/${encodeURIComponent(board.rows[1]!.cells.arith!.runId)}`);
    expect(await page.textContent('#overall')).toBe(board.rows[1]!.cells.arith!.score!.toFixed(4));
  });

  it('deletes the schedule and keeps its runs', async () => {
    const board = (await callApi<Board>(api, 'GET', `/schedules/${name}`)).body;
    const deleted = await callApi(api, 'DELETE', `/schedules/${name}`);
    expect(deleted).toEqual({ status: 200, body: { name, deleted: true } });
    expect((await callApi(api, 'GET', `/schedules/${name}`)).status).toBe(404);
    const listed = await callApi<{ schedules: Array<{ name: string }> }>(api, 'GET', '/schedules');
    expect(listed.body.schedules.map((s) => s.name)).not.toContain(name);
    for (const row of board.rows) {
      const run = await callApi<{ status: string; model: string }>(api, 'GET', `/runs/${encodeURIComponent(row.cells.arith!.runId)}`);
      expect([run.status, run.body.status, run.body.model]).toEqual([200, 'COMPLETED', row.checkpoint]);
    }
  });
});

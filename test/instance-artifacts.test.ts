// An instance's own files, reachable from the dashboard's instance page: the instance-files fixture keeps
// a folder per instance and names it on the record (`artifacts`, one by harbor's `trial`); a real `br
// serve` lists and serves them (JSON as JSON, other text as text, HTML never as HTML, bytes as a download),
// refuses `..`, absolute paths and links with 4xx, and a second `br serve` whose artifact root holds nothing
// reads the same files from the host that ran the job, through Temporal. Then Chromium follows an
// instance's `files` link to its folder and opens its files. Screenshots go to test-artifacts/dashboard/.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../runs/run-spec.js';
import { callApi, startApiProcess, type ApiProcess } from './support/api-process.js';
import { launchChromium } from './support/chromium.js';
import { fixturesDir, repoRoot, startHarness, type Harness } from './support/harness.js';

const screenshots = path.join(repoRoot, 'test-artifacts', 'dashboard');
const FOLDER = ['agent/trajectory.txt', 'blob.bin', 'page.html', 'result.json', 'trial.log'];

let h: Harness;
/** Reads the job's files from its own artifact root, as the worker wrote them. */
let here: ApiProcess;
/** Has an empty artifact root: reads the job's files from the worker's host, through Temporal. */
let elsewhere: ApiProcess;
let elsewhereHome: string;
let browser: Browser;
let page: Page;
let run: RunResult;

interface Row {
  id: string;
  jobId: string;
  artifacts?: string;
}

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  h = await startHarness('instance-files');
  here = await startApiProcess(h.env, h.home);
  elsewhereHome = mkdtempSync(path.join(os.tmpdir(), 'br-test-files-elsewhere-'));
  elsewhere = await startApiProcess({ ...h.env, BENCHROUTER_ARTIFACTS: path.join(elsewhereHome, 'artifacts') }, elsewhereHome);
  run = await h.run(path.join(fixturesDir, 'benchmarks', 'instance-files'));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${here.url}/login`);
  await page.fill('input[name=token]', here.readToken);
  await page.click('button[type=submit]');
  await page.waitForURL(`${here.url}/`);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await here?.stop();
  await elsewhere?.stop();
  await h?.close();
  if (elsewhereHome) rmSync(elsewhereHome, { recursive: true, force: true });
});

/** One raw GET with the read token: status, type, headers and body as text. */
async function get(api: ApiProcess, route: string, token: string | null = api.readToken) {
  const response = await fetch(`${api.url}${route}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, type: response.headers.get('content-type'), headers: response.headers, text: await response.text() };
}

describe.each([
  ['on this host', () => here],
  ['on the host that ran the job, through Temporal', () => elsewhere],
])("an instance's files %s", (_where, apiOf) => {
  const job = () => run.jobs[0]!.jobId;
  const fileRoute = (file: string) => `/runs/${run.runId}/jobs/${encodeURIComponent(job())}/file?path=${encodeURIComponent(file)}`;

  it('are named on its row: `artifacts`, else `trial`, none for a path out of the results', async () => {
    expect(run.jobs.map((j) => j.status)).toEqual(['SUCCEEDED']);
    // The second server has nothing of the run on its disk: what it shows came from the worker's host.
    expect(existsSync(path.join(elsewhereHome, 'artifacts', run.runId))).toBe(false);
    const rows = await callApi<{ instances: Row[] }>(apiOf(), 'GET', `/runs/${run.runId}/instances`, { token: apiOf().readToken });
    expect(rows.status).toBe(200);
    expect(rows.body.instances.map((r) => [r.id, r.artifacts])).toEqual([
      ['0', 'instances/0'],
      ['1', 'instances/1'],
      ['2', 'instances/2'],
      ['3', undefined],
    ]);
  });

  it("lists the instance's folder, links left out, with the read token", async () => {
    const listed = await callApi<{ prefix: string; files: Array<{ file: string; bytes: number }> }>(
      apiOf(),
      'GET',
      `/runs/${run.runId}/jobs/${encodeURIComponent(job())}/files?prefix=instances/1/`,
      { token: apiOf().readToken },
    );
    expect(listed.status).toBe(200);
    expect(listed.body.prefix).toBe('instances/1');
    expect(listed.body.files.map((f) => f.file)).toEqual(FOLDER.map((f) => `instances/1/${f}`));
    const all = await callApi<{ files: Array<{ file: string }> }>(apiOf(), 'GET', `/runs/${run.runId}/jobs/${encodeURIComponent(job())}/files`);
    expect(all.body.files.map((f) => f.file)).toEqual(expect.arrayContaining(['records.jsonl', 'result.json', 'instances/2/trial.log']));
  });

  it('serves JSON as JSON, text and HTML as plain text, bytes as a download, never sniffed', async () => {
    const json = await get(apiOf(), fileRoute('instances/1/result.json'));
    expect([json.status, json.type]).toEqual([200, 'application/json; charset=utf-8']);
    expect(JSON.parse(json.text)).toEqual({ instance: 1, reward: 1, steps: ['look', 'act'] });
    const log = await get(apiOf(), fileRoute('instances/1/trial.log'));
    expect([log.status, log.type, log.text.split('\n')[0]]).toEqual([200, 'text/plain; charset=utf-8', 'trial 1 started']);
    const markup = await get(apiOf(), fileRoute('instances/1/page.html'));
    expect([markup.status, markup.type, markup.headers.get('x-content-type-options')]).toEqual([200, 'text/plain; charset=utf-8', 'nosniff']);
    expect(markup.headers.get('content-security-policy')).toContain('sandbox');
    const blob = await get(apiOf(), fileRoute('instances/1/blob.bin'));
    expect([blob.status, blob.type, blob.headers.get('content-disposition')]).toEqual([
      200,
      'application/octet-stream',
      "attachment; filename*=UTF-8''blob.bin",
    ]);
  });

  it('refuses `..`, absolute paths, a link to a host file and a folder with 400, a missing file with 404, no token with 401', async () => {
    const status = async (route: string, token?: string | null) => (await get(apiOf(), route, token)).status;
    const jobPath = `/runs/${run.runId}/jobs/${encodeURIComponent(job())}`;
    for (const bad of ['../../../../etc/passwd', 'instances/../../result.json', '..', '/etc/passwd', '\\etc\\passwd', 'instances/1/host-name', 'instances/1'])
      expect(await status(fileRoute(bad)), bad).toBe(400);
    expect(await status(`${jobPath}/file?path=%2e%2e%2f%2e%2e%2fcontainer.log`)).toBe(400);
    for (const bad of ['..', '../results', '/etc']) expect(await status(`${jobPath}/files?prefix=${encodeURIComponent(bad)}`), bad).toBe(400);
    const refused = await get(apiOf(), fileRoute('../container.log'));
    expect(JSON.parse(refused.text)).toMatchObject({ error: { code: 'BAD_REQUEST', field: 'query.path' } });
    expect(await status(fileRoute('instances/1/none.txt'))).toBe(404);
    expect(await status(`/runs/${run.runId}/jobs/no-such-job/files`)).toBe(404);
    expect(await status(fileRoute('instances/1/result.json'), null)).toBe(401);
  });

  it("shows the instance's file pages from either place", async () => {
    const listing = await get(apiOf(), `/ui/runs/${run.runId}/jobs/${encodeURIComponent(job())}/files?prefix=instances/2`);
    expect([listing.status, listing.type]).toEqual([200, 'text/html; charset=utf-8']);
    expect(listing.text).toContain('5 files under <code>instances/2</code>');
    const shown = await get(apiOf(), `/ui/runs/${run.runId}/jobs/${encodeURIComponent(job())}/file?path=instances/2/page.html`);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('&lt;script&gt;document.title');
    expect(shown.text).not.toContain('<script>document.title');
  });
});

describe("the API's description", () => {
  it('lists the files routes', async () => {
    const doc = await callApi<{ paths: Record<string, unknown> }>(here, 'GET', '/openapi.json', { token: null });
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/runs/{id}/jobs/{job}/files', '/runs/{id}/jobs/{job}/file']));
  });
});

describe("an instance's files in Chromium", () => {
  it("follows an instance's files link to its folder and opens its JSON, its log and its long trajectory", async () => {
    await page.goto(`${here.url}/ui/runs/${run.runId}/instances`);
    const linked = await page
      .locator('#instances tbody tr')
      .evaluateAll((rows) => rows.map((row) => [row.querySelector('.instance-id')?.textContent, row.querySelector('a.files')?.getAttribute('title') ?? null]));
    expect(linked).toEqual([
      ['0', 'instances/0'],
      ['1', 'instances/1'],
      ['2', 'instances/2'],
      ['3', null],
    ]);
    await page.screenshot({ path: path.join(screenshots, 'instance-files-01-instances.png'), fullPage: true });

    await page.locator('#instances tbody tr').nth(1).locator('a.files').click();
    await page.waitForSelector('#files');
    expect(await page.locator('#files a.file').allTextContents()).toEqual(FOLDER.map((f) => `instances/1/${f}`));
    expect(await page.locator('#files a.file', { hasText: 'host-name' }).count()).toBe(0);
    await page.screenshot({ path: path.join(screenshots, 'instance-files-02-folder.png'), fullPage: true });

    await page.click('#files a.file >> text=instances/1/result.json');
    expect(await page.getAttribute('.file-content', 'data-kind')).toBe('json');
    expect(await page.textContent('.file-content pre')).toBe(JSON.stringify({ instance: 1, reward: 1, steps: ['look', 'act'] }, null, 2));
    await page.screenshot({ path: path.join(screenshots, 'instance-files-03-json.png'), fullPage: true });

    await page.click('a.folder');
    await page.click('#files a.file >> text=instances/1/trial.log');
    expect(await page.textContent('.file-content pre')).toContain('<script>document.title = "owned"</script>');
    expect(await page.title()).not.toBe('owned');

    await page.goBack();
    await page.click('#files a.file >> text=instances/1/agent/trajectory.txt');
    expect(await page.locator('.file-content details.fold').count()).toBe(1);
    await page.click('.file-content details.fold summary');
    expect(await page.locator('.file-content details.fold[open]').count()).toBe(1);
    await page.screenshot({ path: path.join(screenshots, 'instance-files-04-folded-text.png'), fullPage: false });

    await page.goBack();
    await page.click('#files a.file >> text=instances/1/blob.bin');
    expect(await page.getAttribute('.file-content', 'data-kind')).toBe('binary');
    const raw = await page.request.get(`${here.url}${await page.getAttribute('.file-content a', 'href')}`);
    expect([raw.status(), raw.headers()['content-type']]).toEqual([200, 'application/octet-stream']);
  });
});

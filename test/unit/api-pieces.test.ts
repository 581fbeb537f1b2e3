// The API's pure pieces: HTML escaping of user text on dashboard pages, the tokens file (hashed at
// rest, read-only kind, revocation seen without a restart), and the read cache's single flight.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addToken, hashToken, removeToken, tokenVerifier } from '../../api/api-tokens.js';
import { leaderboardPage, runPage } from '../../api/dashboard-pages.js';
import { buildLeaderboard } from '../../runs/leaderboard.js';
import { html } from '../../api/html-text.js';
import { FinishedResults, SingleFlight } from '../../api/run-read-cache.js';
import type { RunResult } from '../../runs/run-spec.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-api-pieces-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('dashboard HTML', () => {
  it('escapes every interpolated value, so a model name or failure message cannot inject markup', () => {
    const markup = html`<td>${'<script>alert(1)</script>'}</td><a href="${'" onclick="x'}"></a>`;
    expect(markup.text).toBe('<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><a href="&quot; onclick=&quot;x"></a>');
    const result: RunResult = {
      runId: 'br-1',
      benchmark: 'b<i>',
      model: '<img src=x onerror=alert(1)>',
      status: 'PARTIAL',
      overall: 0.5,
      jobs: [
        {
          jobId: 'br-1.000-t',
          task: 't',
          status: 'FAILED',
          reason: 'NON_ZERO_EXIT',
          message: '</td><script>steal()</script>',
          timings: { queuedAt: '', finishedAt: '', containerSeconds: 0 },
        },
      ],
      startedAt: '',
      finishedAt: '',
    };
    const page = runPage({ runId: 'br-1', status: 'PARTIAL', benchmark: result.benchmark, model: result.model, progress: null, webUi: 'http://ui' }, result);
    expect(page).not.toContain('<script>steal');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;/td&gt;&lt;script&gt;steal()&lt;/script&gt;');
  });

  it('the run page warns of each job whose records.jsonl had rejected lines, with how many and the first reason (escaped)', () => {
    const records = {
      count: 1,
      badLines: 4,
      badLineExamples: ['line 1: index: expected a number or a non-empty string, got undefined', 'line 2: <b>'],
      meanScore: 1,
      promptTokens: { total: 0, missing: 1 },
      completionTokens: { total: 0, missing: 1 },
      cost: { total: 0, missing: 1 },
    };
    const job = (task: string, withRecords: boolean): RunResult['jobs'][number] => ({
      jobId: `br-1.${task}`,
      task,
      status: 'SUCCEEDED',
      result: { overall: 1, raw_metrics: {} },
      ...(withRecords ? { records } : {}),
      timings: { queuedAt: '', finishedAt: '', containerSeconds: 0 },
    });
    const result: RunResult = {
      runId: 'br-1',
      benchmark: 'b',
      model: 'm',
      status: 'COMPLETED',
      overall: 1,
      jobs: [job('a', true), job('b', false)],
      startedAt: '',
      finishedAt: '',
    };
    const page = runPage({ runId: 'br-1', status: 'COMPLETED', benchmark: 'b', model: 'm', progress: null, webUi: 'http://ui' }, result);
    expect(page).toContain('<li>a: records.jsonl: 4 of 5 lines rejected; first: line 1: index: expected a number or a non-empty string, got undefined</li>');
    expect(page.match(/<li>/g)).toHaveLength(1);
    const clean = runPage(
      { runId: 'br-1', status: 'COMPLETED', benchmark: 'b', model: 'm', progress: null, webUi: 'http://ui' },
      { ...result, jobs: [job('b', false)] },
    );
    expect(clean).not.toContain('rejected-records');
  });

  it("shows a long run's jobs a page at a time, with links to the pages before and after, and a short run's on one page without a pager", () => {
    const job = (i: number): RunResult['jobs'][number] => ({
      jobId: `br-1.${String(i).padStart(4, '0')}-t`,
      task: `task-${i}`,
      status: 'SUCCEEDED',
      result: { overall: 1, raw_metrics: {} },
      timings: { queuedAt: '', finishedAt: '', containerSeconds: 0 },
    });
    const result = (count: number): RunResult => ({
      runId: 'br-1',
      benchmark: 'b',
      model: 'm',
      status: 'COMPLETED',
      overall: 1,
      jobs: Array.from({ length: count }, (_, i) => job(i)),
      startedAt: '',
      finishedAt: '',
    });
    const run = { runId: 'br-1', status: 'COMPLETED', benchmark: 'b', model: 'm', progress: null, webUi: 'http://ui' };
    const tasksShown = (page: string) => [...page.matchAll(/<td>(task-\d+)<\/td>/g)].map((m) => m[1]);

    const first = runPage(run, result(250));
    expect(tasksShown(first)).toEqual(Array.from({ length: 100 }, (_, i) => `task-${i}`));
    expect(first).toContain('<span id="shown">1–100 of 250</span>');
    expect(first).toContain('<a rel="next" href="/ui/runs/br-1?offset=100#jobs">next</a>');
    expect(first).not.toContain('rel="prev"');

    const last = runPage(run, result(250), undefined, { offset: 200, limit: 100 });
    expect(tasksShown(last)).toEqual(Array.from({ length: 50 }, (_, i) => `task-${200 + i}`));
    expect(last).toContain('<span id="shown">201–250 of 250</span>');
    expect(last).toContain('<a rel="prev" href="/ui/runs/br-1?offset=100#jobs">previous</a>');
    expect(last).not.toContain('rel="next"');

    const narrow = runPage(run, result(250), undefined, { offset: 10, limit: 20 });
    expect(tasksShown(narrow)).toEqual(Array.from({ length: 20 }, (_, i) => `task-${10 + i}`));
    expect(narrow).toContain('<a rel="next" href="/ui/runs/br-1?offset=30&amp;limit=20#jobs">next</a>');

    const short = runPage(run, result(4));
    expect(tasksShown(short)).toHaveLength(4);
    expect(short).not.toContain('id="pager"');
  });
});

describe('provenance and intervals on the dashboard', () => {
  it("the run page lists the run's provenance as a definition list, values escaped", () => {
    const result: RunResult = {
      runId: 'br-1',
      benchmark: 'arith',
      model: 'm',
      status: 'COMPLETED',
      overall: 1,
      jobs: [],
      provenance: {
        benchrouter: { version: '0.1.0' },
        benchmark: { name: 'arith', digest: 'd1' },
        images: { addition: ['sha256:aa'] },
        gateway: true,
        generation: { set: { stop: '<end>' } },
        seeds: [0, 1],
      },
      startedAt: '',
      finishedAt: '',
    };
    const page = runPage({ runId: 'br-1', status: 'COMPLETED', benchmark: 'arith', model: 'm', progress: null, webUi: 'http://ui' }, result);
    const list = /<dl id="provenance">([\s\S]*?)<\/dl>/.exec(page)?.[1]?.replace(/\s+/g, '');
    expect(list).toBe(
      [
        ['benchmark', 'arithd1'],
        ['imageaddition', 'sha256:aa'],
        ['gateway', 'on'],
        ['generation', 'stop=&lt;end&gt;'],
        ['judge', 'none'],
        ['seeds', '0,1'],
        ['benchrouter', '0.1.0'],
      ]
        .map(([label, value]) => `<dt>${label}</dt><dd>${value}</dd>`)
        .join(''),
    );
    expect(
      runPage({ runId: 'br-1', status: 'COMPLETED', benchmark: 'arith', model: 'm', progress: null, webUi: 'http://ui' }, { ...result, provenance: undefined }),
    ).not.toContain('id="provenance"');
  });

  it('the leaderboard shows each cell with its interval and n, and marks with a tooltip and a note a cell whose provenance differs', () => {
    const entry = (runId: string, model: string, score: number, provenance: string) => ({
      runId,
      model,
      benchmark: 'arith',
      status: 'COMPLETED',
      startTime: '2026-01-01T00:00:00Z',
      score,
      provenance,
      scoreStats: { n: 40, low: 0.652427, high: 0.895, method: 'wilson' as const },
    });
    const page = leaderboardPage(buildLeaderboard([entry('r1', 'a', 0.8, 'h1'), entry('r2', 'b', 0.7, 'h1'), entry('r3', 'c', 0.6, 'h2')]), 'latest');
    expect(page).toContain('<span class="interval">[0.6524, 0.8950]</span> <span class="n">n=40</span>');
    expect(page.match(/<abbr class="differs"/g)).toHaveLength(1);
    expect(page).toMatch(/<a href="\/ui\/runs\/r3">0\.6000<\/a>[^]*?<abbr class="differs" title="† measured with a different setup/);
    expect(page).toContain('id="provenance-note"');
    expect(leaderboardPage(buildLeaderboard([entry('r1', 'a', 0.8, 'h1'), entry('r2', 'b', 0.7, 'h1')]), 'latest')).not.toContain('provenance-note');
  });
});

describe('the tokens file', () => {
  it('keeps only the sha256 of each token, knows read-only tokens, and forgets a removed one without a restart', async () => {
    const file = path.join(scratch, 'tokens.json');
    const full = addToken(file, 'ci', false);
    const reader = addToken(file, 'dash', true);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(full);
    expect(text).toContain(hashToken(full));
    const verify = tokenVerifier(file);
    expect(verify(full)).toMatchObject({ name: 'ci', readOnly: false });
    expect(verify(reader)).toMatchObject({ name: 'dash', readOnly: true });
    expect(verify(`${full}x`)).toBeUndefined();
    expect(() => addToken(file, 'ci', false)).toThrow(/exists already/);
    removeToken(file, 'ci');
    await new Promise((r) => setTimeout(r, 1100));
    expect(verify(full)).toBeUndefined();
    expect(verify(reader)).toBeDefined();
  });
});

describe('the read cache', () => {
  it('runs one load for concurrent callers, reuses it within its interval, and loads again after a failure', async () => {
    const flight = new SingleFlight<number>(10_000);
    let loads = 0;
    const load = async () => ++loads;
    expect(await Promise.all([flight.read('a', load), flight.read('a', load), flight.read('a', load)])).toEqual([1, 1, 1]);
    expect(await flight.read('a', load)).toBe(1);
    expect(await flight.read('b', load)).toBe(2);
    const failing = new SingleFlight<number>(10_000);
    await expect(failing.read('x', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await new Promise((r) => setTimeout(r, 0));
    expect(await failing.read('x', load)).toBe(3);
  });

  it('keeps at most its capacity of finished results, dropping the oldest', () => {
    const results = new FinishedResults<number>(2);
    results.set('a', 1);
    results.set('b', 2);
    results.set('c', 3);
    expect([results.get('a'), results.get('b'), results.get('c')]).toEqual([undefined, 2, 3]);
  });
});

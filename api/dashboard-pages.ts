// The dashboard's pages as server-rendered HTML: runs list, run page, leaderboard, comparison,
// routing analysis and the submit form. Live progress comes from static/dashboard.js over the SSE stream.

import type { RunSummary } from '../client/runs.js';
import { DIFFERS_MARK, DIFFERS_NOTE, type Leaderboard, type LeaderboardCell } from '../runs/leaderboard.js';
import { provenanceEntries, type Provenance } from '../runs/provenance.js';
import type { TableView } from '../runs/table-view.js';
import type { JobResult, RunProgress, RunResult } from '../runs/run-spec.js';
import type { UsageSummary } from '../runs/usage.js';
import { rejectedRecordsNote } from '../contract/records.js';
import type { InstanceAgreement } from '../analysis/instance-agreement.js';
import type { SavedAnalysisListing } from '../analysis/saved-analyses.js';
import { agreementSvg, leaderboardSvg } from './chart-views.js';
import { html, SafeHtml } from './html-text.js';

export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · BenchRouter</title>
        <link rel="stylesheet" href="/static/dashboard.css" />
      </head>
      <body>
        <nav>
          <strong>BenchRouter</strong> <a href="/">Runs</a> <a href="/ui/submit">Submit</a> <a href="/ui/leaderboard">Leaderboard</a>
          <a href="/ui/schedules">Schedules</a> <a href="/ui/compare">Compare</a> <a href="/ui/analysis">Routing analysis</a> <a href="/docs">API</a>
        </nav>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
        <script src="/static/dashboard.js"></script>
      </body>
    </html>`.text;
}

export const score = (value: number | null | undefined) => (value === null || value === undefined ? '–' : value.toFixed(4));

export function table(columns: string[], rows: Array<Array<SafeHtml | string | number | null>>, id?: string): SafeHtml {
  return html`<table${id ? html` id="${id}"` : ''}><thead><tr>${columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>${rows.map(
    (row) =>
      html`<tr>
        ${row.map((cell) => html`<td>${cell}</td>`)}
      </tr>`,
  )}</tbody></table>`;
}

/** A window of a long list: `limit` rows from `offset`. */
export interface ListWindow {
  offset: number;
  limit: number;
}

/** Jobs on one run page: a 10,000-job run's page stays a page, not a 5 MB table. */
export const JOBS_PER_PAGE = 100;

/** "1–100 of 10020 · previous · next" for a list shown a window at a time; `href(offset)` links another window. */
export function pager(window: ListWindow, shown: number, total: number, nextOffset: number | undefined, href: (offset: number) => string): SafeHtml {
  const first = total ? window.offset + 1 : 0;
  const previous = window.offset > 0 ? Math.max(0, window.offset - window.limit) : undefined;
  return html`<p class="pager" id="pager">
    <span id="shown">${first}–${window.offset + shown} of ${total}</span>
    ${previous !== undefined ? html` · <a rel="prev" href="${href(previous)}">previous</a>` : ''}
    ${nextOffset !== undefined ? html` · <a rel="next" href="${href(nextOffset)}">next</a>` : ''}
  </p>`;
}

/** The window of `rows` to show, with the pager above it when they do not fit on one page. */
function pagedRows<T>(rows: T[], window: ListWindow, href: (offset: number) => string): { shown: T[]; pager: SafeHtml | string } {
  const shown = rows.slice(window.offset, window.offset + window.limit);
  if (window.offset === 0 && rows.length <= window.limit) return { shown, pager: '' };
  const next = window.offset + window.limit < rows.length ? window.offset + window.limit : undefined;
  return { shown, pager: pager(window, shown.length, rows.length, next, href) };
}

function runPageHref(runId: string, window: ListWindow): (offset: number) => string {
  return (offset) => {
    const params = new URLSearchParams();
    if (offset) params.set('offset', String(offset));
    if (window.limit !== JOBS_PER_PAGE) params.set('limit', String(window.limit));
    const text = params.toString();
    return `/ui/runs/${encodeURIComponent(runId)}${text ? `?${text}` : ''}#jobs`;
  };
}

function viewTable(view: TableView, id?: string): SafeHtml {
  return table(
    view.columns,
    view.rows.map((row) => row.map((cell) => (typeof cell === 'number' ? Number(cell.toFixed(4)) : typeof cell === 'boolean' ? String(cell) : cell))),
    id,
  );
}

export function status(value: string): SafeHtml {
  return html`<span class="status status-${value.toLowerCase()}">${value}</span>`;
}

function progressBar(runId: string, running: boolean): SafeHtml {
  return running ? html`<span class="progress" data-run="${runId}"><span class="bar"></span><span class="label">…</span></span>` : html``;
}

export function loginPage(next: string, failed: boolean): string {
  return page(
    'Sign in',
    html`${failed ? html`<p class="error">Unknown token.</p>` : ''}
      <form method="post" action="/login" class="card">
        <input type="hidden" name="next" value="${next}" /><label
          >API token <input type="password" name="token" autocomplete="current-password" required /></label
        ><button type="submit">Sign in</button>
      </form>
      <p>
        A token comes from <code>br tokens add &lt;name&gt;</code> (or <code>$BENCHROUTER_HOME/api-token</code> after <code>br up</code>). It is kept in an
        HttpOnly cookie for this site.
      </p>`,
  );
}

export function runsPage(runs: RunSummary[], filter: { model?: string; benchmark?: string; status?: string }): string {
  const rows = runs.map((r) => [
    html`<a href="/ui/runs/${encodeURIComponent(r.runId)}">${r.runId}</a>`,
    status(r.status),
    r.benchmark,
    r.model,
    score(r.score),
    html`${progressBar(r.runId, r.status === 'RUNNING')}`,
    r.startTime,
  ]);
  const statuses = ['', 'RUNNING', 'COMPLETED', 'PARTIAL', 'FAILED', 'CANCELLED', 'TERMINATED'];
  return page(
    'Runs',
    html`<form method="get" action="/" class="filters">
        <label>Model <input name="model" value="${filter.model ?? ''}" /></label
        ><label>Benchmark <input name="benchmark" value="${filter.benchmark ?? ''}" /></label
        ><label
          >Status
          <select name="status">
            ${statuses.map((s) => html`<option value="${s}" ${s === (filter.status ?? '') ? ' selected' : ''}>${s || 'any'}</option>`)}
          </select></label
        ><button type="submit">Filter</button>
      </form>
      ${table(['Run', 'Status', 'Benchmark', 'Model', 'Score', 'Progress', 'Started'], rows, 'runs')}`,
  );
}

function usageCells(usage: UsageSummary | undefined): Array<string | number> {
  if (!usage) return ['–', '–', '–'];
  return [`${usage.promptTokens} / ${usage.completionTokens}`, usage.latencyMs ? `${Math.round(usage.latencyMs.p50)} ms` : '–', `$${usage.cost.toFixed(6)}`];
}

/** "2 of 8 · 4 instances" (and how many were carried over) for a job of a task that lists its instances. */
function shardCell(job: JobResult): string {
  if (!job.shard) return '–';
  const of = job.shard.count > 1 ? `${job.shard.index + 1} of ${job.shard.count} · ` : '';
  return `${of}${job.shard.instances} instance${job.shard.instances === 1 ? '' : 's'}${job.shard.carried ? ` (${job.shard.carried} carried over)` : ''}`;
}

function jobRow(runId: string, job: JobResult): Array<SafeHtml | string | number | null> {
  const logRun = job.carriedFrom ?? runId;
  return [
    job.task,
    html`<span class="shard">${shardCell(job)}</span>`,
    job.repeat ?? 0,
    job.hostsTried && job.hostsTried.length > 1 ? `${job.host ?? '–'} (after ${job.hostsTried.slice(0, -1).join(', ')})` : (job.host ?? '–'),
    status(job.status),
    html`<span class="score" data-task="${job.task}">${score(job.result?.overall)}</span>`,
    job.reason ? `${job.reason}${job.message ? `: ${job.message}` : ''}` : '',
    ...usageCells(job.usage?.model),
    html`<a href="/runs/${encodeURIComponent(logRun)}/jobs/${encodeURIComponent(job.jobId)}/log">log</a>
      · <a class="instances" href="/ui/runs/${encodeURIComponent(runId)}/instances?job=${encodeURIComponent(job.jobId)}">instances</a>
      · <a class="transcript" href="/ui/runs/${encodeURIComponent(runId)}/jobs/${encodeURIComponent(job.jobId)}/transcript">calls</a>`,
  ];
}

export function runPage(
  run: { runId: string; status: string; benchmark: string; model: string; progress: RunProgress | null; webUi: string },
  result: RunResult | undefined,
  /** `complete` false: drawn from the jobs' timings alone, the calls still on the hosts that ran the jobs. */
  timeline?: { svg: string; complete: boolean },
  window: ListWindow = { offset: 0, limit: JOBS_PER_PAGE },
  /** A running run's running jobs and the host each is on. */
  hosts?: ReadonlyMap<string, string>,
): string {
  const running = run.status === 'RUNNING';
  const href = runPageHref(run.runId, window);
  const head = html`<p>
      ${status(run.status)} <strong>${run.benchmark}</strong> against <strong>${run.model}</strong> · <a href="${run.webUi}">Temporal Web UI</a> ·
      <a href="/runs/${encodeURIComponent(run.runId)}">JSON</a>
    </p>
    <p class="run-id">${run.runId}</p>
    ${
      running
        ? html`<p>${progressBar(run.runId, true)}</p>
            <p class="live-figures">
              <span>Time left: <strong id="live-eta">estimating…</strong></span><span>Calls per second: <strong id="live-calls">–</strong></span
              ><span>Tokens per second: <strong id="live-tokens">–</strong></span>
            </p>
            <ul class="warning" id="health-findings" hidden></ul>
            <p class="live" data-reload-on-result="${run.runId}">Following the run live…</p>`
        : ''
    }`;
  if (!result) {
    const jobs = pagedRows(run.progress?.jobs ?? [], window, href);
    const rows = jobs.shown.map((j) => [
      j.task,
      j.jobId,
      j.instances ?? '–',
      hosts?.get(j.jobId) ?? '–',
      html`<span class="job-state" data-job="${j.jobId}">${j.state}</span>`,
    ]);
    return page(`Run ${run.runId}`, html`${head}${jobs.pager}${table(['Task', 'Job', 'Instances', 'Host', 'State'], rows, 'jobs')}`);
  }
  const u = result.usage?.model;
  const jobs = pagedRows(result.jobs, window, href);
  return page(
    `Run ${run.runId}`,
    html`${head}
      <p class="overall">
        Overall score:
        <strong id="overall">${score(result.overall)}</strong
        >${result.overallStd !== undefined && result.overallStd !== null ? ` ± ${result.overallStd.toFixed(4)}` : ''}
      </p>
      <p>
        <a id="instances-link" href="/ui/runs/${encodeURIComponent(run.runId)}/instances">Instances</a> ·
        <a id="failures-link" href="/ui/runs/${encodeURIComponent(run.runId)}/instances?failed=true">only the failures</a>
      </p>
      ${rejectedRecords(result)}
      ${result.provenance ? provenanceList(result.provenance) : ''}
      ${u ? html`<p>Usage: ${u.requests} requests, ${u.promptTokens} prompt + ${u.completionTokens} completion tokens, latency p50 ${u.latencyMs ? Math.round(u.latencyMs.p50) : '–'} ms, cost $${u.cost.toFixed(6)}</p>` : ''}
      ${shardedTasks(result)}
      ${jobs.pager}
      ${table(
        ['Task', 'Shard', 'Repeat', 'Host', 'Status', 'Score', 'Failure', 'Tokens (in / out)', 'Latency p50', 'Cost', 'Files'],
        jobs.shown.map((j) => jobRow(result.runId, j)),
        'jobs',
      )}
      ${timeline ? timelineFigure(run.runId, timeline) : ''}`,
  );
}

/** The tasks run in shards: each repeat's score folded from its shards, its instances scored and carried over. */
function shardedTasks(result: RunResult): SafeHtml | string {
  const rows = (result.tasks ?? []).flatMap((task) =>
    (task.results ?? [])
      .filter((r) => r.shards.total > 1 || r.instances.carried > 0)
      .map((r) => [
        task.task,
        r.repeat,
        html`<span class="score">${score(r.result?.overall)}</span>`,
        `${r.instances.scored} of ${r.instances.total}`,
        r.instances.carried,
        `${r.shards.succeeded} of ${r.shards.total}`,
      ]),
  );
  if (!rows.length) return '';
  return html`<h2>Tasks run in shards</h2>
    ${table(['Task', 'Repeat', 'Score', 'Instances scored', 'Carried over', 'Shards succeeded'], rows, 'sharded-tasks')}`;
}

/** The run over time; when its calls are still to be read from other hosts, dashboard.js draws it again with them. */
function timelineFigure(runId: string, timeline: { svg: string; complete: boolean }): SafeHtml {
  const file = `/runs/${encodeURIComponent(runId)}/timeline`;
  const caption = 'The run over time: jobs finished, and jobs, calls and tokens per minute.';
  if (timeline.complete) return figure(timeline.svg, file, caption);
  return html`<div id="timeline" data-calls-from="${file}.svg">
    ${figure(timeline.svg, file, caption)}
    <p class="note" id="timeline-calls-pending">Calls and tokens per minute are being read from the hosts that ran the jobs…</p>
  </div>`;
}

/** An inline SVG picture with its caption and the API's SVG and PNG of it. */
export function figure(svg: string, file: string, caption: string, query = ''): SafeHtml {
  return html`<figure>
    ${new SafeHtml(svg)}
    <figcaption>${caption} <a href="${file}.svg${query}">SVG</a> · <a href="${file}.png${query}">PNG</a></figcaption>
  </figure>`;
}

/** What the score was measured with: benchmark and image digests, dataset, generation settings, judge, seeds, version. */
function provenanceList(provenance: Provenance): SafeHtml {
  return html`<details class="provenance" open>
    <summary>Provenance</summary>
    <dl id="provenance">${provenanceEntries(provenance).map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl>
  </details>`;
}

/** A warning per job whose records.jsonl had lines that could not be read, with the first reason. */
function rejectedRecords(result: RunResult): SafeHtml | string {
  const notes = result.jobs.flatMap((job) => {
    const note = rejectedRecordsNote(job.records);
    return note ? [html`<li>${job.task}${(job.repeat ?? 0) > 0 ? ` #${job.repeat}` : ''}: ${note}</li>`] : [];
  });
  return notes.length ? html`<div class="warning" id="rejected-records"><p>Per-instance records rejected:</p><ul>${notes}</ul></div>` : '';
}

export function leaderboardPage(board: Leaderboard, pick: string): string {
  const rows = board.models.map((model) => [
    model,
    ...board.benchmarks.map((b) => {
      const cell = board.cells[model]?.[b];
      return cell ? leaderboardCell(cell) : '–';
    }),
  ]);
  const marked = Object.values(board.cells).some((row) => Object.values(row).some((cell) => cell.differs));
  return page(
    'Leaderboard',
    html`<p>
        Showing the <a href="/ui/leaderboard?pick=latest">latest</a> / <a href="/ui/leaderboard?pick=best">best</a> finished run per cell (now: ${pick}).
      </p>
      ${board.models.length ? figure(leaderboardSvg(board), '/leaderboard/heatmap', `Each cell: the score, its 95% interval as a bar (0 at the cell's left edge, 1 at its right) and n; * partial, ${DIFFERS_MARK} provenance differs.`) : ''}
      ${table(['Model', ...board.benchmarks], rows, 'leaderboard')}
      <p class="note">Each cell: the score, its 95% interval in brackets and n, what the score is a mean over (see docs/results.md).</p>
      ${marked ? html`<p class="note" id="provenance-note">${DIFFERS_NOTE}</p>` : ''}`,
  );
}

function leaderboardCell(cell: LeaderboardCell): SafeHtml {
  const { stats } = cell;
  return html`<a href="/ui/runs/${encodeURIComponent(cell.runId)}">${cell.score.toFixed(4)}</a>${
    stats?.low !== undefined && stats.high !== undefined ? html` <span class="interval">[${stats.low.toFixed(4)}, ${stats.high.toFixed(4)}]</span>` : ''
  }${stats ? html` <span class="n">n=${stats.n}</span>` : ''}${cell.partial ? ' (partial)' : ''}${
    cell.differs ? html` <abbr class="differs" title="${DIFFERS_NOTE}">${DIFFERS_MARK}</abbr>` : ''
  }`;
}

function runsForm(action: string, runs: string): SafeHtml {
  return html`<form method="get" action="${action}" class="filters">
    <label>Runs (comma-separated ids) <input name="runs" size="80" value="${runs}" /></label><button type="submit">Show</button>
  </form>`;
}

export interface ComparedInstances {
  runA: string;
  runB: string;
  agreement?: InstanceAgreement;
  /** Why there is no matrix (no shared records on this server). */
  note?: string;
}

export function comparePage(runs: string, view: TableView | undefined, error?: string, instances?: ComparedInstances): string {
  const matrix = instances?.agreement
    ? figure(
        agreementSvg(instances.runA, instances.runB, instances.agreement),
        '/compare/agreement',
        `Instance by instance over the ${instances.agreement.shared} instances both runs have (right: mean score at least 0.5)${
          instances.agreement.onlyInA || instances.agreement.onlyInB
            ? `; ${instances.agreement.onlyInA} only in A and ${instances.agreement.onlyInB} only in B are left out`
            : ''
        }.`,
        `?runs=${encodeURIComponent(`${instances.runA},${instances.runB}`)}`,
      )
    : instances?.note
      ? html`<p class="note">${instances.note}</p>`
      : '';
  return page(
    'Compare runs',
    html`${runsForm('/ui/compare', runs)}${error ? html`<p class="error">${error}</p>` : ''}${view ? viewTable(view, 'compare') : ''}${matrix}`,
  );
}

/** The paper's two tables under their own names; the other sheets keep theirs. */
const ANALYSIS_HEADINGS: Record<string, string> = {
  Methods: 'Pure performance (test)',
  'Cost setting': 'Performance–cost',
};

export interface AnalysisPageInput {
  /** The runs form's value (an analysis of runs' records, computed on the page view). */
  runs: string;
  tables?: TableView[];
  /** Where the plot of what is shown is. */
  plotSrc?: string;
  error?: string;
  /** The analyses `br analyze` saved on this host, newest first, and the one shown. */
  saved: SavedAnalysisListing[];
  selected?: { id: string; createdAt: string; inputs: string[]; embedder: string; problems: string[] };
}

export function analysisPage(input: AnalysisPageInput): string {
  const { runs, tables, plotSrc, error, saved, selected } = input;
  const plot = tables && plotSrc ? html`<figure><img id="plot" alt="accuracy-cost plot with the Pareto frontier" src="${plotSrc}" /></figure>` : '';
  // Above the tables (the frontier's can be long), folded away once one is shown.
  const savedList = saved.length
    ? html`<details id="saved"${selected ? '' : html` open`}>
        <summary>Saved analyses (${saved.length}): <code>br analyze</code> keeps each, router containers' rows and all</summary>
        ${table(
          ['Analysis', 'Created', 'Inputs', 'Models', 'Queries (test)', 'Routers', 'Embeddings'],
          saved.map((a) =>
            'problem' in a
              ? [a.id, '', html`<span class="error">${a.problem}</span>`, null, null, null, null]
              : [
                  a.id === selected?.id ? html`<strong>${a.id}</strong>` : html`<a href="/ui/analysis?id=${encodeURIComponent(a.id)}">${a.id}</a>`,
                  a.createdAt.replace('T', ' ').slice(0, 19),
                  a.inputs.join(' '),
                  a.models,
                  `${a.queries} (${a.testQueries})`,
                  a.routers.length,
                  a.embedder,
                ],
          ),
          'saved-analyses',
        )}
      </details>`
    : html`<p class="note">No saved analyses on this host: <code>br analyze</code> keeps each one (with its router containers' rows) under
        <code>BENCHROUTER_HOME/analyses</code>, and this page lists them.</p>`;
  const header = selected
    ? html`<p id="analysis-header">Analysis <strong>${selected.id}</strong> of ${selected.createdAt.replace('T', ' ').slice(0, 19)} UTC:
          <code>br analyze ${selected.inputs.join(' ')}</code>; embeddings ${selected.embedder}</p>
        ${selected.problems.map((p) => html`<p class="error">${p}</p>`)}`
    : '';
  return page(
    'Routing analysis',
    html`${runsForm('/ui/analysis', runs)}${savedList}${error ? html`<p class="error">${error}</p>` : ''}${header}${plot}${(tables ?? []).map(
      (t) =>
        html`<h2>${ANALYSIS_HEADINGS[t.name] ? `${ANALYSIS_HEADINGS[t.name]}: ${t.name}` : t.name}</h2>
          ${viewTable(t, `table-${t.name.toLowerCase().replace(/\W+/g, '-')}`)}`,
    )}`,
  );
}

export function submitPage(benchmarks: Array<{ name: string; tasks: string[] }>): string {
  return page(
    'Submit a run',
    html`<form id="submit-form" class="card">
      <label
        >Benchmark
        <select name="benchmark">
          ${benchmarks.map((b) => html`<option value="${b.name}">${b.name} (${b.tasks.join(', ')})</option>`)}
        </select></label
      >
      <label>Model <input name="model" required /></label>
      <label>Endpoint <input name="endpoint" required placeholder="http://127.0.0.1:8399/v1" /></label>
      <label>API key variable (on the worker host) <input name="apiKeyEnv" /></label>
      <label>Tasks (comma-separated, empty: all) <input name="tasks" /></label>
      <label>Limit (instances per task) <input name="limit" type="number" min="1" /></label>
      <label>Repeats <input name="repeats" type="number" min="1" value="1" /></label>
      <button type="submit">Submit</button>
      <p class="error" id="submit-error"></p>
    </form>`,
  );
}

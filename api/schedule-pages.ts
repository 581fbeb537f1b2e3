// The dashboard's schedule pages: the list of evaluation schedules, and one schedule's score against
// checkpoint, as a plot (one line per benchmark, each point a link to its run; api/chart-views.ts) and as a table.

import { formatEvery, type ScheduleView } from '../client/schedules.js';
import type { CheckpointBoard } from '../runs/checkpoint-board.js';
import { figure, page, score, status, table } from './dashboard-pages.js';
import { checkpointSvg } from './chart-views.js';
import { html, type SafeHtml } from './html-text.js';

const runLink = (runId: string, text: string | SafeHtml) => html`<a href="/ui/runs/${encodeURIComponent(runId)}">${text}</a>`;

function every(view: ScheduleView): string {
  return view.everySeconds === null ? 'on trigger' : `every ${formatEvery(view.everySeconds)}`;
}

export function schedulesPage(views: ScheduleView[]): string {
  const rows = views.map((v) => [
    html`<a href="/ui/schedules/${encodeURIComponent(v.name)}">${v.name}</a>`,
    v.target,
    v.endpoint,
    every(v),
    v.paused ? status('PAUSED') : status('ACTIVE'),
    v.nextFiring ?? '–',
    v.recentFirings.at(-1) ?? '–',
  ]);
  return page(
    'Schedules',
    html`<p>Each firing reads the checkpoint the endpoint serves (<code>GET /v1/models</code>) and evaluates it once. Create one with <code>br schedule create</code> or <code>POST /schedules</code>.</p>
      ${table(['Schedule', 'Target', 'Endpoint', 'Fires', 'State', 'Next firing', 'Last fired'], rows, 'schedules')}`,
  );
}

/** Score against checkpoint, in the order found; a benchmark's line skips checkpoints without a score. */
function plot(name: string, board: CheckpointBoard): SafeHtml {
  return figure(
    checkpointSvg(board),
    `/schedules/${encodeURIComponent(name)}/plot`,
    'Score against checkpoint, in the order the schedule found them; each point links to its run.',
  );
}

export function schedulePage(view: ScheduleView, board: CheckpointBoard): string {
  const rows = board.rows.map((row) => [
    row.checkpoint,
    row.foundAt,
    ...board.benchmarks.map((b) => {
      const cell = row.cells[b];
      if (!cell) return '–';
      return cell.score === undefined ? html`${runLink(cell.runId, cell.status)}` : html`${runLink(cell.runId, score(cell.score))}`;
    }),
  ]);
  return page(
    `Schedule ${view.name}`,
    html`<p>
        ${view.paused ? status('PAUSED') : status('ACTIVE')} <strong>${view.target}</strong> against the checkpoint <code>${view.endpoint}</code> serves,
        ${every(view)}${view.nextFiring ? html` · next firing ${view.nextFiring}` : ''} · <a href="/schedules/${encodeURIComponent(view.name)}">JSON</a>
      </p>
      ${board.rows.length ? plot(view.name, board) : html`<p>No checkpoint evaluated yet.</p>`}
      ${table(['Checkpoint', 'Found', ...board.benchmarks], rows, 'checkpoints')}`,
  );
}

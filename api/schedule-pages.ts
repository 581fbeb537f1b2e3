// The dashboard's schedule pages: the list of evaluation schedules, and one schedule's score against
// checkpoint, as a plot (one line per benchmark, each point a link to its run) and as a table.

import { formatEvery, type ScheduleView } from '../client/schedules.js';
import type { CheckpointBoard } from '../runs/checkpoint-board.js';
import { page, score, status, table } from './dashboard-pages.js';
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

// `inset` keeps the first checkpoint's slanted label inside the plot.
const PLOT = { width: 760, height: 300, left: 48, right: 24, top: 16, bottom: 72, inset: 90 };
const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563'];

/** Score (0 to 1) against checkpoint, in the order found; a benchmark's line skips checkpoints without a score. */
function plot(board: CheckpointBoard): SafeHtml {
  const { width, height, left, right, top, bottom, inset } = PLOT;
  const innerW = width - left - right - inset;
  const innerH = height - top - bottom;
  const n = board.rows.length;
  const x = (i: number) => left + inset + (n === 1 ? innerW / 2 : (innerW * i) / (n - 1));
  const y = (s: number) => top + innerH * (1 - s);
  const grid = [0, 0.25, 0.5, 0.75, 1].map(
    (s) =>
      html`<line x1="${left}" x2="${width - right}" y1="${y(s)}" y2="${y(s)}" class="grid" /><text x="${left - 6}" y="${y(s) + 4}" text-anchor="end">${s.toFixed(2)}</text>`,
  );
  const labels = board.rows.map(
    (row, i) =>
      html`<text x="${x(i)}" y="${height - bottom + 14}" text-anchor="end" transform="rotate(-30 ${x(i)} ${height - bottom + 14})">${row.checkpoint.length > 24 ? `…${row.checkpoint.slice(-23)}` : row.checkpoint}</text>`,
  );
  const series = board.benchmarks.map((benchmark, b) => {
    const colour = COLOURS[b % COLOURS.length]!;
    const points = board.rows.flatMap((row, i) => {
      const cell = row.cells[benchmark];
      return cell?.score === undefined ? [] : [{ i, cell: { ...cell, score: cell.score }, checkpoint: row.checkpoint }];
    });
    return html`<g class="series" data-benchmark="${benchmark}">
      <polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map((p) => `${x(p.i)},${y(p.cell.score)}`).join(' ')}" />
      ${points.map(
        (p) =>
          html`<a href="/ui/runs/${encodeURIComponent(p.cell.runId)}"
            ><circle class="point" cx="${x(p.i)}" cy="${y(p.cell.score)}" r="5" fill="${colour}" data-checkpoint="${p.checkpoint}" data-score="${p.cell.score}"
              ><title>${benchmark} · ${p.checkpoint}: ${p.cell.score.toFixed(4)}</title></circle
            ></a
          >`,
      )}
    </g>`;
  });
  const legend = board.benchmarks.map(
    (benchmark, b) => html`<span class="legend"><span class="swatch" style="background:${COLOURS[b % COLOURS.length]!}"></span>${benchmark}</span>`,
  );
  return html`<figure>
    <svg id="checkpoint-plot" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="score against checkpoint">
      ${grid}${labels}${series}
    </svg>
    <figcaption>Score against checkpoint, in the order the schedule found them. ${legend}</figcaption>
  </figure>`;
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
      ${board.rows.length ? plot(board) : html`<p>No checkpoint evaluated yet.</p>`}
      ${table(['Checkpoint', 'Found', ...board.benchmarks], rows, 'checkpoints')}`,
  );
}

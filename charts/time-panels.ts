// Figures over time as stacked panels sharing one time axis (a run's progress and throughput: jobs
// finished so far, then jobs, calls and tokens per minute), each panel with its own y scale.

import { esc, linearScale, niceTicks, px, shortNumber, svgDocument, text } from './svg.js';

export interface TimedEvent {
  /** Milliseconds since the epoch. */
  at: number;
  /** What the event adds (1 for a call, its tokens for tokens). */
  weight: number;
}

/** Sums of event weights per bucket of `bucketMs` from `start`; events outside [start, end] are left out. */
export function bucketSums(events: readonly TimedEvent[], start: number, end: number, bucketMs: number): number[] {
  const buckets = new Array<number>(Math.max(1, Math.ceil((end - start) / bucketMs))).fill(0);
  for (const event of events) {
    if (event.at < start || event.at > end) continue;
    buckets[Math.min(buckets.length - 1, Math.floor((event.at - start) / bucketMs))]! += event.weight;
  }
  return buckets;
}

/** Running totals: the figure reached by the end of each bucket. */
export function cumulative(values: readonly number[]): number[] {
  let sum = 0;
  return values.map((v) => (sum += v));
}

export interface TimePanel {
  name: string;
  values: number[];
  kind: 'line' | 'bars';
}

export interface TimePanelsInput {
  id?: string;
  label: string;
  /** The first bucket's start, ms since the epoch. */
  start: number;
  bucketMs: number;
  panels: TimePanel[];
}

export const PANEL_LAYOUT = { width: 760, panelHeight: 110, gap: 26, left: 64, right: 20, top: 10, axis: 30 };

/** The x of a bucket's start (bucket = values.length is the end of the last one). */
export function bucketX(bucket: number, buckets: number): number {
  const { width, left, right } = PANEL_LAYOUT;
  return linearScale([0, Math.max(1, buckets)], [left, width - right])(bucket);
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);

export function timePanels(input: TimePanelsInput): string {
  const { width, panelHeight, gap, left, right, top, axis } = PANEL_LAYOUT;
  const buckets = Math.max(1, ...input.panels.map((p) => p.values.length));
  const height = top + input.panels.length * (panelHeight + gap) + axis;
  const parts: string[] = [];
  input.panels.forEach((panel, i) => {
    const y0 = top + i * (panelHeight + gap) + 16;
    const y1 = y0 + panelHeight - 16;
    const ticks = niceTicks(Math.max(0, ...panel.values), 2);
    const y = linearScale([0, ticks.at(-1)!], [y1, y0]);
    parts.push(text(left, y0 - 6, panel.name, 'font-weight="bold"'));
    for (const t of ticks)
      parts.push(
        `<line x1="${left}" x2="${width - right}" y1="${px(y(t))}" y2="${px(y(t))}" stroke="#e5e7eb"/>`,
        text(left - 6, y(t) + 4, shortNumber(t), 'text-anchor="end"'),
      );
    const marks =
      panel.kind === 'bars'
        ? panel.values
            .map((v, b) => {
              const x0 = bucketX(b, buckets);
              const w = Math.max(1, bucketX(b + 1, buckets) - x0 - 1);
              return `<rect x="${px(x0)}" y="${px(y(v))}" width="${px(w)}" height="${px(y1 - y(v))}" fill="#2563eb"><title>${esc(`${clock(input.start + b * input.bucketMs)}: ${v}`)}</title></rect>`;
            })
            .join('')
        : `<polyline fill="none" stroke="#16a34a" stroke-width="2" points="${panel.values.map((v, b) => `${px(bucketX(b + 1, buckets))},${px(y(v))}`).join(' ')}"/>`;
    parts.push(
      `<g class="panel" data-panel="${esc(panel.name)}" data-total="${panel.kind === 'line' ? (panel.values.at(-1) ?? 0) : panel.values.reduce((a, b) => a + b, 0)}">${marks}</g>`,
    );
  });
  const axisY = height - axis + 14;
  const labels = Math.min(buckets, 6);
  for (let k = 0; k <= labels; k++) {
    const b = Math.round((k * buckets) / labels);
    parts.push(text(bucketX(b, buckets), axisY, clock(input.start + b * input.bucketMs), 'text-anchor="middle" fill="#4b5563"'));
  }
  return svgDocument({ ...(input.id ? { id: input.id } : {}), width, height, label: input.label }, parts.join(''));
}

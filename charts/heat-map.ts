// A table of scores as colour (the leaderboard: a row per model, a column per benchmark), each cell
// with its score, its 95% interval drawn as a bar across the cell's width (0 at the left edge, 1 at
// the right) and n.

import { esc, linearScale, px, svgDocument, text } from './svg.js';

export interface HeatCell {
  value: number;
  low?: number;
  high?: number;
  n?: number;
  href?: string;
  /** A mark after the score (the leaderboard's † for a differing provenance). */
  mark?: string;
}

export interface HeatMapInput {
  id?: string;
  label: string;
  rows: string[];
  columns: string[];
  cell: (row: string, column: string) => HeatCell | undefined;
}

export const HEAT_LAYOUT = { cellWidth: 150, cellHeight: 58, rowLabel: 220, header: 44, pad: 8 };

const STOPS: Array<[number, [number, number, number]]> = [
  [0, [254, 202, 202]],
  [0.5, [254, 240, 138]],
  [1, [134, 239, 172]],
];

/** The cell colour of a score in [0, 1]: red through yellow to green. */
export function heatColour(value: number): string {
  const v = Math.min(1, Math.max(0, value));
  const i = v >= 0.5 ? 1 : 0;
  const [a, ca] = STOPS[i]!;
  const [b, cb] = STOPS[i + 1]!;
  const t = (v - a) / (b - a);
  const channel = (k: number) => Math.round(ca[k]! + (cb[k]! - ca[k]!) * t);
  return `#${[0, 1, 2].map((k) => channel(k).toString(16).padStart(2, '0')).join('')}`;
}

/** The cell's box, by row and column position. */
export function heatCellBox(row: number, column: number): { x: number; y: number; width: number; height: number } {
  const { cellWidth, cellHeight, rowLabel, header } = HEAT_LAYOUT;
  return { x: rowLabel + column * cellWidth, y: header + row * cellHeight, width: cellWidth, height: cellHeight };
}

/** The interval bar's ends and the score's tick inside a cell box. */
export function intervalMarks(box: { x: number; width: number }, cell: HeatCell): { from?: number; to?: number; at: number } {
  const { pad } = HEAT_LAYOUT;
  const x = linearScale([0, 1], [box.x + pad, box.x + box.width - pad]);
  return { at: x(cell.value), ...(cell.low !== undefined && cell.high !== undefined ? { from: x(cell.low), to: x(cell.high) } : {}) };
}

const cut = (label: string, max: number) => (label.length > max ? `${label.slice(0, max - 1)}…` : label);

export function heatMap(input: HeatMapInput): string {
  const { cellWidth, cellHeight, rowLabel, header } = HEAT_LAYOUT;
  const width = rowLabel + Math.max(1, input.columns.length) * cellWidth + 8;
  const height = header + Math.max(1, input.rows.length) * cellHeight + 8;
  const parts: string[] = [];
  input.columns.forEach((column, c) =>
    parts.push(text(rowLabel + c * cellWidth + cellWidth / 2, header - 10, cut(column, 22), 'text-anchor="middle" font-weight="bold"')),
  );
  input.rows.forEach((row, r) => {
    parts.push(text(rowLabel - 8, header + r * cellHeight + cellHeight / 2 + 4, cut(row, 32), 'text-anchor="end"'));
    input.columns.forEach((column, c) => {
      const box = heatCellBox(r, c);
      const cell = input.cell(row, column);
      const frame = `x="${px(box.x)}" y="${px(box.y)}" width="${box.width}" height="${box.height}" stroke="#ffffff" stroke-width="2"`;
      if (!cell) {
        parts.push(`<rect ${frame} fill="#f3f4f6"/>`, text(box.x + box.width / 2, box.y + box.height / 2 + 4, '–', 'text-anchor="middle" fill="#9ca3af"'));
        return;
      }
      const marks = intervalMarks(box, cell);
      const bar =
        marks.from !== undefined && marks.to !== undefined
          ? `<line class="interval" x1="${px(marks.from)}" x2="${px(marks.to)}" y1="${px(box.y + 36)}" y2="${px(box.y + 36)}" stroke="#1d2430" stroke-width="3" stroke-linecap="round"/>`
          : '';
      const tick = `<line x1="${px(marks.at)}" x2="${px(marks.at)}" y1="${px(box.y + 31)}" y2="${px(box.y + 41)}" stroke="#1d2430" stroke-width="1.5"/>`;
      const title = `${row} · ${column}: ${cell.value.toFixed(4)}${cell.low !== undefined && cell.high !== undefined ? ` [${cell.low.toFixed(4)}, ${cell.high.toFixed(4)}]` : ''}${cell.n !== undefined ? ` n=${cell.n}` : ''}`;
      const body =
        `<rect ${frame} fill="${heatColour(cell.value)}"><title>${esc(title)}</title></rect>` +
        text(box.x + box.width / 2, box.y + 20, `${cell.value.toFixed(3)}${cell.mark ?? ''}`, 'text-anchor="middle" font-weight="bold"') +
        bar +
        tick +
        (cell.n !== undefined ? text(box.x + box.width / 2, box.y + 53, `n=${cell.n}`, 'text-anchor="middle" font-size="10" fill="#4b5563"') : '');
      const group = `<g class="cell" data-row="${esc(row)}" data-column="${esc(column)}" data-value="${cell.value}">${body}</g>`;
      parts.push(cell.href ? `<a href="${esc(cell.href)}">${group}</a>` : group);
    });
  });
  return svgDocument({ ...(input.id ? { id: input.id } : {}), width, height, label: input.label }, parts.join(''));
}

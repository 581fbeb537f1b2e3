// A line per series over ordered categories (score against checkpoint: a line per benchmark), y in
// [0, 1]. A point may link somewhere (its run) and carry data attributes for tools and tests.

import { esc, linearScale, px, svgDocument, text } from './svg.js';

export const SERIES_COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563'];

export interface LinePoint {
  /** The category's position in `categories`. */
  at: number;
  value: number;
  href?: string;
  title?: string;
  data?: Record<string, string | number>;
}

export interface LineChartInput {
  id?: string;
  label: string;
  categories: string[];
  series: Array<{ name: string; points: LinePoint[] }>;
}

// `inset` keeps the first category's slanted label inside the picture.
export const LINE_LAYOUT = { width: 760, height: 320, left: 48, right: 24, top: 16, bottom: 96, inset: 90 };

/** Where a point sits: categories spread evenly (one alone in the middle), 1 at the top and 0 at the bottom. */
export function linePosition(at: number, value: number, categories: number): { x: number; y: number } {
  const { width, height, left, right, top, bottom, inset } = LINE_LAYOUT;
  const x = categories <= 1 ? left + inset + (width - left - right - inset) / 2 : linearScale([0, categories - 1], [left + inset, width - right])(at);
  return { x, y: linearScale([0, 1], [height - bottom, top])(value) };
}

const cut = (label: string) => (label.length > 24 ? `…${label.slice(-23)}` : label);

export function lineChart(input: LineChartInput): string {
  const { width, height, left, right, bottom } = LINE_LAYOUT;
  const n = input.categories.length;
  const parts: string[] = [];
  for (const s of [0, 0.25, 0.5, 0.75, 1]) {
    const { y } = linePosition(0, s, n);
    parts.push(
      `<line x1="${left}" x2="${width - right}" y1="${px(y)}" y2="${px(y)}" stroke="#e5e7eb"/>`,
      text(left - 6, y + 4, s.toFixed(2), 'text-anchor="end"'),
    );
  }
  input.categories.forEach((category, i) => {
    const { x } = linePosition(i, 0, n);
    const y = height - bottom + 14;
    parts.push(text(x, y, cut(category), `text-anchor="end" transform="rotate(-30 ${px(x)} ${px(y)})"`));
  });
  input.series.forEach((series, s) => {
    const colour = SERIES_COLOURS[s % SERIES_COLOURS.length]!;
    const points = series.points.map((p) => ({ ...p, ...linePosition(p.at, p.value, n) }));
    const marks = points.map((p) => {
      const data = Object.entries(p.data ?? {})
        .map(([k, v]) => ` data-${esc(k)}="${esc(v)}"`)
        .join('');
      const circle = `<circle class="point" cx="${px(p.x)}" cy="${px(p.y)}" r="5" fill="${colour}"${data}>${p.title ? `<title>${esc(p.title)}</title>` : ''}</circle>`;
      return p.href ? `<a href="${esc(p.href)}">${circle}</a>` : circle;
    });
    parts.push(
      `<g class="series" data-series="${esc(series.name)}"><polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map((p) => `${px(p.x)},${px(p.y)}`).join(' ')}"/>${marks.join('')}</g>`,
    );
    // The legend, along the bottom edge.
    const lx = left + s * 160;
    parts.push(`<rect x="${lx}" y="${height - 18}" width="12" height="12" fill="${colour}"/>`, text(lx + 16, height - 8, series.name));
  });
  return svgDocument({ ...(input.id ? { id: input.id } : {}), width, height, label: input.label }, parts.join(''));
}

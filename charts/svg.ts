// The few pieces every chart is made of: escaped text, a linear scale, tick values and the document
// around the marks. Pure string building with no DOM, so the API serves the same SVG the pages inline
// and resvg turns it into PNG.

export const FONT = 'DejaVu Sans, Helvetica, Arial, sans-serif';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A number short enough for an attribute: two decimals are a hundredth of a pixel. */
export function px(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/** Maps [d0, d1] onto [r0, r1]; a zero-width domain maps to the range's middle. */
export function linearScale(domain: [number, number], range: [number, number]): (value: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  if (d1 === d0) return () => (r0 + r1) / 2;
  return (value) => r0 + ((value - d0) / (d1 - d0)) * (r1 - r0);
}

/** Round tick values from 0 to at least `max`: about `count` of them, steps of 1, 2 or 5 times a power of ten. */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let t = 0; t < max + step / 2; t += step) ticks.push(Number(t.toPrecision(12)));
  if (ticks.at(-1)! < max) ticks.push(Number((ticks.at(-1)! + step).toPrecision(12)));
  return ticks;
}

/** A short label for a count: 1234 → 1.2k. */
export function shortNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`;
  if (abs >= 1e3) return `${Number((value / 1e3).toPrecision(3))}k`;
  return String(Number(value.toPrecision(3)));
}

/** The whole document: a white background (PNG has none otherwise), the font, an accessible name. */
export function svgDocument(options: { id?: string; width: number; height: number; label: string }, body: string): string {
  const { id, width, height, label } = options;
  return `<svg xmlns="http://www.w3.org/2000/svg"${id ? ` id="${esc(id)}"` : ''} width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(label)}" font-family="${FONT}" font-size="12"><rect width="${width}" height="${height}" fill="#ffffff"/>${body}</svg>`;
}

/** One text element. */
export function text(x: number, y: number, content: string, attributes = ''): string {
  return `<text x="${px(x)}" y="${px(y)}"${attributes ? ` ${attributes}` : ''}>${esc(content)}</text>`;
}

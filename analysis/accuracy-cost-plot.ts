// The accuracy–cost plot as hand-written SVG: single models as labelled points, each cost-aware
// router's α curve, the Pareto frontier's step curve, the baselines for reference, and each router
// container's (and reference router's) point with its settings' curve. Cost runs on a
// log axis when it spans more than a decade and a half, as model prices usually do.

import { METHOD, type RoutingReport } from './routing-analysis.js';

const WIDTH = 1080;
const HEIGHT = 640;
const PLOT = { left: 84, top: 56, right: 740, bottom: 560 };
const FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"';
const COLORS = { models: '#7f7f7f', cluster: '#d62728', knn: '#1f77b4', frontier: '#222222', bestSingle: '#000000', oracle: '#2ca02c', random: '#9467bd' };

/** Series ids in the SVG, one group each, so tools (and tests) can find them. */
export const PLOT_SERIES = {
  models: 'single-models',
  clusterCurve: 'cluster-router-cost-aware',
  knnCurve: 'knn-router-cost-aware',
  frontier: 'pareto-frontier',
  baselines: 'baselines',
  routers: 'router-containers',
} as const;

/** One colour per router container or reference router, in report order (cycled past eight). */
const ROUTER_COLORS = ['#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#393b79', '#637939', '#843c39'];

interface Scale {
  map(v: number): number;
  ticks: Array<{ value: number; label: string }>;
  log: boolean;
}

export function renderAccuracyCostSvg(report: RoutingReport): string {
  const method = (name: string) => report.methods.find((m) => m.name === name)!;
  const curve = (name: string) => report.costAware.find((r) => r.name === name)?.settings ?? [];
  const clusterCurve = curve(METHOD.clusterCostAware);
  const knnCurve = curve(METHOD.knnCostAware);
  const baselines = [
    { m: method(METHOD.bestSingle), color: COLORS.bestSingle, shape: 'diamond', label: `Best Single (${method(METHOD.bestSingle).model})` },
    { m: method(METHOD.oracle), color: COLORS.oracle, shape: 'triangle', label: 'Oracle' },
    { m: method(METHOD.randomExpected), color: COLORS.random, shape: 'cross', label: 'Random (expected)' },
    { m: method(METHOD.clusterRouter), color: COLORS.cluster, shape: 'square', label: 'Avengers (cluster router)' },
    { m: method(METHOD.knnRouter), color: COLORS.knn, shape: 'square', label: 'kNN router' },
  ];
  // Every other router row: containers (`--routers`), with their settings' curve, and references.
  const builtIn = new Set<string>([METHOD.clusterRouter, METHOD.knnRouter]);
  const others = report.methods
    .filter((m) => (m.kind === 'router' && !builtIn.has(m.name)) || m.kind === 'reference')
    .map((m, i) => ({
      m,
      color: ROUTER_COLORS[i % ROUTER_COLORS.length]!,
      label: m.kind === 'reference' ? `${m.name} (reference)` : m.name,
      settings: m.kind === 'reference' ? [] : curve(`${m.name} (cost settings)`),
    }));
  const all = [...report.models, ...clusterCurve, ...knnCurve, ...baselines.map((b) => b.m), ...others.flatMap((o) => [o.m, ...o.settings])];
  const x = costScale(all.map((p) => p.cost));
  const y = linearScale(
    all.map((p) => p.acc),
    PLOT.bottom,
    PLOT.top,
    false,
    [0, 1],
  );

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">`);
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`);
  out.push(`<text x="${PLOT.left}" y="30" ${FONT} font-size="18" font-weight="bold" fill="#111">Accuracy vs cost on the test split</text>`);
  out.push(
    `<text x="${PLOT.left}" y="48" ${FONT} font-size="12" fill="#555">${esc(`${report.pool.models.length} models, ${report.pool.datasets.length} datasets, ${report.pool.testQueries} test queries; embeddings ${report.embedder}`)}</text>`,
  );

  // Grid, ticks and axis titles.
  out.push('<g id="axes">');
  for (const t of x.ticks) {
    const px = x.map(t.value);
    out.push(`<line x1="${f(px)}" y1="${PLOT.top}" x2="${f(px)}" y2="${PLOT.bottom}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${f(px)}" y="${PLOT.bottom + 18}" ${FONT} font-size="11" fill="#333" text-anchor="middle">${esc(t.label)}</text>`);
  }
  for (const t of y.ticks) {
    const py = y.map(t.value);
    out.push(`<line x1="${PLOT.left}" y1="${f(py)}" x2="${PLOT.right}" y2="${f(py)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${PLOT.left - 8}" y="${f(py + 4)}" ${FONT} font-size="11" fill="#333" text-anchor="end">${esc(t.label)}</text>`);
  }
  out.push(`<rect x="${PLOT.left}" y="${PLOT.top}" width="${PLOT.right - PLOT.left}" height="${PLOT.bottom - PLOT.top}" fill="none" stroke="#333"/>`);
  out.push(
    `<text x="${(PLOT.left + PLOT.right) / 2}" y="${PLOT.bottom + 44}" ${FONT} font-size="13" fill="#111" text-anchor="middle">Cost of the test split (USD${x.log ? ', log scale' : ''})</text>`,
  );
  out.push(
    `<text transform="translate(24 ${(PLOT.top + PLOT.bottom) / 2}) rotate(-90)" ${FONT} font-size="13" fill="#111" text-anchor="middle">Accuracy (macro mean over datasets)</text>`,
  );
  out.push('</g>');

  // The frontier's step curve: across at each point's accuracy to the next point's cost, then up.
  const steps = report.frontier.map((p) => [x.map(p.cost), y.map(p.acc)] as const);
  if (steps.length) {
    let d = `M${f(steps[0]![0])},${f(steps[0]![1])}`;
    for (let i = 1; i < steps.length; i++) d += ` H${f(steps[i]![0])} V${f(steps[i]![1])}`;
    d += ` H${PLOT.right}`;
    out.push(
      `<g id="${PLOT_SERIES.frontier}" data-series="Pareto frontier"><path d="${d}" fill="none" stroke="${COLORS.frontier}" stroke-width="1.5" stroke-dasharray="6 4"/></g>`,
    );
  }

  for (const [id, name, settings, color] of [
    [PLOT_SERIES.clusterCurve, METHOD.clusterCostAware, clusterCurve, COLORS.cluster],
    [PLOT_SERIES.knnCurve, METHOD.knnCostAware, knnCurve, COLORS.knn],
  ] as const) {
    if (!settings.length) continue;
    const pts = settings.map((s) => `${f(x.map(s.cost))},${f(y.map(s.acc))}`).join(' ');
    out.push(`<g id="${id}" data-series="${esc(name)}">`);
    out.push(`<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="1.8" stroke-opacity="0.85"/>`);
    for (const s of settings) out.push(`<circle cx="${f(x.map(s.cost))}" cy="${f(y.map(s.acc))}" r="2.2" fill="${color}" data-alpha="${s.alpha.toFixed(2)}"/>`);
    const first = settings[0]!;
    const last = settings[settings.length - 1]!;
    out.push(`<text x="${f(x.map(first.cost) + 6)}" y="${f(y.map(first.acc) + 14)}" ${FONT} font-size="10" fill="${color}">α=0</text>`);
    out.push(`<text x="${f(x.map(last.cost) + 6)}" y="${f(y.map(last.acc) - 6)}" ${FONT} font-size="10" fill="${color}">α=1</text>`);
    out.push('</g>');
  }

  // Single models, labelled where a label fits without covering another.
  out.push(`<g id="${PLOT_SERIES.models}" data-series="single models">`);
  const placed: Array<[number, number, number, number]> = [];
  for (const m of report.models) {
    const px = x.map(m.cost);
    const py = y.map(m.acc);
    out.push(
      `<circle cx="${f(px)}" cy="${f(py)}" r="4" fill="${m.onFrontier ? COLORS.frontier : COLORS.models}" fill-opacity="0.8" data-label="${esc(m.model)}"/>`,
    );
    const w = m.model.length * 5.6;
    const box: [number, number, number, number] = [px + 6, py - 12, px + 6 + w, py];
    if (box[2] <= WIDTH && !placed.some((b) => overlaps(b, box))) {
      placed.push(box);
      out.push(`<text x="${f(px + 6)}" y="${f(py - 4)}" ${FONT} font-size="9.5" fill="#444">${esc(m.model)}</text>`);
    }
  }
  out.push('</g>');

  out.push(`<g id="${PLOT_SERIES.routers}" data-series="router containers and references">`);
  for (const o of others) {
    if (o.settings.length > 1) {
      const pts = o.settings.map((s) => `${f(x.map(s.cost))},${f(y.map(s.acc))}`).join(' ');
      out.push(`<polyline points="${pts}" fill="none" stroke="${o.color}" stroke-width="1.2" stroke-opacity="0.7" stroke-dasharray="3 2"/>`);
    }
    for (const s of o.settings)
      out.push(`<circle cx="${f(x.map(s.cost))}" cy="${f(y.map(s.acc))}" r="2" fill="${o.color}" data-setting="${esc(`${o.m.name} ${s.alpha}`)}"/>`);
    out.push(marker(o.m.kind === 'reference' ? 'cross' : 'square', x.map(o.m.cost), y.map(o.m.acc), o.color, o.label));
  }
  out.push('</g>');

  out.push(`<g id="${PLOT_SERIES.baselines}" data-series="baselines">`);
  for (const b of baselines) out.push(marker(b.shape, x.map(b.m.cost), y.map(b.m.acc), b.color, b.label));
  out.push('</g>');

  // Legend, outside the plot on the right.
  const legend: Array<[string, string]> = [
    [`<circle cx="0" cy="0" r="4" fill="${COLORS.models}"/>`, 'single model'],
    [`<circle cx="0" cy="0" r="4" fill="${COLORS.frontier}"/>`, 'single model on the frontier'],
    [`<line x1="-9" y1="0" x2="9" y2="0" stroke="${COLORS.cluster}" stroke-width="2"/>`, `${METHOD.clusterCostAware}, α 0→1`],
    [`<line x1="-9" y1="0" x2="9" y2="0" stroke="${COLORS.knn}" stroke-width="2"/>`, `${METHOD.knnCostAware}, α 0→1`],
    [`<line x1="-9" y1="0" x2="9" y2="0" stroke="${COLORS.frontier}" stroke-width="1.5" stroke-dasharray="6 4"/>`, 'Pareto frontier'],
    ...baselines.map((b): [string, string] => [marker(b.shape, 0, 0, b.color, b.label), b.label]),
    ...others.map((o): [string, string] => [
      marker(o.m.kind === 'reference' ? 'cross' : 'square', 0, 0, o.color, o.label),
      o.settings.length > 1 ? `${o.label}, settings dotted` : o.label,
    ]),
  ];
  // Rows closer together when every router's entry would run past the plot's height.
  const rowHeight = Math.min(22, (HEIGHT - PLOT.top - 24) / legend.length);
  out.push('<g id="legend">');
  legend.forEach(([swatch, label], i) => {
    const ly = PLOT.top + 14 + i * rowHeight;
    out.push(`<g transform="translate(${PLOT.right + 28} ${ly})">${swatch}</g>`);
    out.push(`<text x="${PLOT.right + 44}" y="${ly + 4}" ${FONT} font-size="11.5" fill="#222">${esc(truncate(label, 34))}</text>`);
  });
  out.push('</g>');
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function marker(shape: string, px: number, py: number, color: string, label: string): string {
  const title = `<title>${esc(label)}</title>`;
  switch (shape) {
    case 'diamond':
      return `<path d="M${f(px)},${f(py - 7)} L${f(px + 7)},${f(py)} L${f(px)},${f(py + 7)} L${f(px - 7)},${f(py)} Z" fill="${color}" data-label="${esc(label)}">${title}</path>`;
    case 'triangle':
      return `<path d="M${f(px)},${f(py - 7)} L${f(px + 7)},${f(py + 6)} L${f(px - 7)},${f(py + 6)} Z" fill="${color}" data-label="${esc(label)}">${title}</path>`;
    case 'cross':
      return `<path d="M${f(px - 6)},${f(py - 6)} L${f(px + 6)},${f(py + 6)} M${f(px + 6)},${f(py - 6)} L${f(px - 6)},${f(py + 6)}" stroke="${color}" stroke-width="2.5" data-label="${esc(label)}">${title}</path>`;
    default:
      return `<rect x="${f(px - 5)}" y="${f(py - 5)}" width="10" height="10" fill="none" stroke="${color}" stroke-width="2" data-label="${esc(label)}">${title}</rect>`;
  }
}

// Reduced, not spread into Math.min/max: a spread of a large array overflows the call stack.
function smallest(values: readonly number[]): number {
  return values.reduce((a, b) => Math.min(a, b), Infinity);
}

function largest(values: readonly number[]): number {
  return values.reduce((a, b) => Math.max(a, b), -Infinity);
}

function costScale(values: number[]): Scale {
  const positive = values.filter((v) => v > 0);
  const min = smallest(values);
  const max = largest(values);
  if (min > 0 && max / min >= 30) {
    const lo = Math.log10(smallest(positive)) - 0.08;
    const hi = Math.log10(max) + 0.08;
    const map = (v: number) => PLOT.left + ((Math.log10(v) - lo) / (hi - lo)) * (PLOT.right - PLOT.left);
    const ticks: Scale['ticks'] = [];
    const decades = Math.ceil(hi) - Math.floor(lo);
    for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) {
      for (const mult of decades <= 2 ? [1, 2, 5] : [1]) {
        const value = mult * 10 ** e;
        if (Math.log10(value) >= lo && Math.log10(value) <= hi) ticks.push({ value, label: usdLabel(value) });
      }
    }
    return { map, ticks, log: true };
  }
  return { ...linearScale(values, PLOT.left, PLOT.right, true), log: false };
}

function linearScale(values: number[], from: number, to: number, usd = false, bounds?: [number, number]): Scale {
  let lo = smallest(values);
  let hi = largest(values);
  if (hi === lo) {
    lo -= 0.5;
    hi += 0.5;
  }
  const step = niceStep((hi - lo) / 6);
  lo = Math.floor(lo / step - 0.3) * step;
  hi = Math.ceil(hi / step + 0.3) * step;
  if (usd && lo < 0 && smallest(values) >= 0) lo = 0;
  // Accuracy never leaves [0, 1]: the axis does not either.
  if (bounds) {
    lo = Math.max(lo, bounds[0]);
    hi = Math.min(hi, bounds[1]);
  }
  const map = (v: number) => from + ((v - lo) / (hi - lo)) * (to - from);
  const ticks: Scale['ticks'] = [];
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push({ value: v, label: usd ? usdLabel(v) : v.toFixed(digits) });
  return { map, ticks, log: false };
}

function niceStep(raw: number): number {
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const residual = raw / magnitude;
  return (residual >= 5 ? 10 : residual >= 2 ? 5 : residual >= 1 ? 2 : 1) * magnitude;
}

function usdLabel(v: number): string {
  if (v === 0) return '$0';
  if (Math.abs(v) >= 1) return `$${Number(v.toPrecision(3))}`;
  return `$${Number(v.toPrecision(2))}`;
}

function overlaps(a: [number, number, number, number], b: [number, number, number, number]): boolean {
  return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function f(n: number): string {
  return Number.isFinite(n) ? (Math.round(n * 10) / 10).toString() : '0';
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

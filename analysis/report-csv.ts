// The routing report as one CSV table (RFC 4180), a row per method, model, cost-aware router, α
// setting and frontier point, with per-dataset accuracies as extra columns: one file a spreadsheet
// or pandas reads whole.

import { formatAlpha, type RoutingReport } from './routing-analysis.js';

type Cell = string | number | boolean | null | undefined;

const COLUMNS = ['section', 'name', 'model', 'alpha', 'acc', 'cost_usd', 'train_acc', 'gain_at_r', 'gain_at_b', 'gap_at_o', 'perf_gain', 'cost_save', 'pareto_dist', 'on_frontier'] as const;

export function renderReportCsv(report: RoutingReport): string {
  const datasets = report.pool.datasets.map((d) => d.name);
  const header = [...COLUMNS, ...datasets.map((d) => `acc:${d}`)];
  const rows: Cell[][] = [];
  const row = (values: Partial<Record<(typeof COLUMNS)[number], Cell>>, datasetAcc?: Record<string, number | null>) =>
    rows.push([...COLUMNS.map((c) => values[c]), ...datasets.map((d) => datasetAcc?.[d])]);

  for (const m of report.methods) {
    row({ section: m.kind, name: m.name, model: m.model, acc: m.acc, cost_usd: m.cost, gain_at_r: m.gainOverRandom, gain_at_b: m.gainOverBestSingle, gap_at_o: m.gapToOracle }, m.datasetAcc);
  }
  for (const m of report.models) row({ section: 'model', name: m.model, model: m.model, acc: m.acc, cost_usd: m.cost, train_acc: m.trainAcc, on_frontier: m.onFrontier }, m.datasetAcc);
  for (const r of report.costAware) {
    // CostSave's "n/a" is written out: an empty cell would read as a missing value, not "never reached".
    row({ section: 'cost-aware', name: r.name, perf_gain: r.perfGain, cost_save: r.costSave ?? 'n/a', pareto_dist: r.paretoDist });
  }
  for (const r of report.costAware) for (const s of r.settings) row({ section: 'setting', name: r.name, alpha: formatAlpha(s.alpha), acc: s.acc, cost_usd: s.cost, on_frontier: s.onFrontier });
  for (const p of report.frontier) row({ section: 'frontier', name: p.label, acc: p.acc, cost_usd: p.cost, on_frontier: true });

  return `${[header, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n')}\r\n`;
}

function csvCell(value: Cell): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' ? String(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

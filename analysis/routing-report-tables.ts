// The routing report (`br analyze`) as tables: methods, the cost setting, the α sweeps, single models,
// the Pareto frontier, datasets and options. The exporter makes them CSV, Markdown or XLSX sheets.

import { formatAlpha, type RoutingReport } from './routing-analysis.js';
import type { TableCell, TableView } from '../runs/table-view.js';

export const SHEETS = ['Methods', 'Cost setting', 'Alpha sweeps', 'Models', 'Pareto frontier', 'Datasets', 'Options'] as const;

export function routingReportTables(report: RoutingReport): TableView[] {
  const datasets = report.pool.datasets.map((d) => d.name);
  const perDataset = (acc: Record<string, number | null>) => datasets.map((d) => acc[d] ?? null);
  const accColumns = datasets.map((d) => `Acc ${d}`);
  const tables: Array<TableView & { name: (typeof SHEETS)[number] }> = [
    {
      name: 'Methods',
      // The paper's pure-performance table (AvgAcc, Gain@R, Gain@B, Gap@O), with each router's training time.
      columns: ['Method', 'Kind', 'Model', 'Acc', 'Cost (USD)', 'Gain@R', 'Gain@B', 'Gap@O', 'Train (s)', ...accColumns],
      rows: report.methods.map((m) => [
        m.name,
        m.kind,
        m.model ?? null,
        m.acc,
        m.cost,
        m.gainOverRandom,
        m.gainOverBestSingle,
        m.gapToOracle,
        m.trainSeconds ?? null,
        ...perDataset(m.datasetAcc),
      ]),
      percentColumns: ['Gain@R', 'Gain@B', 'Gap@O'],
    },
    {
      name: 'Cost setting',
      // CostSave's "n/a" is written out: an empty cell would read as a missing value, not "never reached".
      columns: ['Router', 'PerfGain', 'CostSave', 'ParetoDist', 'Settings on frontier', 'Settings', 'Train (s)'],
      rows: report.costAware.map((r) => [
        r.name,
        r.perfGain,
        r.costSave ?? 'n/a',
        r.paretoDist,
        r.settings.filter((s) => s.onFrontier).length,
        r.settings.length,
        r.trainSeconds ?? null,
      ]),
      percentColumns: ['PerfGain', 'CostSave'],
    },
    {
      name: 'Alpha sweeps',
      // Alpha is α for the built-in cost-aware routers, a router container's own setting for its rows.
      columns: ['Router', 'Alpha', 'Acc', 'Cost (USD)', 'On frontier'],
      rows: report.costAware.flatMap((r) =>
        r.settings.map((s): TableCell[] => [r.name, r.settingName ? s.alpha : Number(formatAlpha(s.alpha)), s.acc, s.cost, s.onFrontier]),
      ),
    },
    {
      name: 'Models',
      columns: ['Model', 'Train Acc', 'Test Acc', 'Cost (USD)', 'On frontier', ...accColumns],
      rows: report.models.map((m) => [m.model, m.trainAcc, m.acc, m.cost, m.onFrontier, ...perDataset(m.datasetAcc)]),
    },
    { name: 'Pareto frontier', columns: ['Point', 'Cost (USD)', 'Acc'], rows: report.frontier.map((p) => [p.label, p.cost, p.acc]) },
    {
      name: 'Datasets',
      columns: ['Dataset', 'Queries', 'Train', 'Test', 'Dropped'],
      rows: report.pool.datasets.map((d) => [d.name, d.queries, d.train, d.test, d.dropped]),
    },
    {
      name: 'Options',
      columns: ['Option', 'Value'],
      rows: [
        ...Object.entries(report.options).map(([k, v]): TableCell[] => [k, typeof v === 'object' && v !== null ? JSON.stringify(v) : (v as TableCell)]),
        ['embedder', report.embedder],
        ['droppedQueries', report.pool.droppedQueries],
        ['duplicateRecords', report.pool.duplicateRecords],
      ],
    },
  ];
  return tables;
}

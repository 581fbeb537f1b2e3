// The routing report as an Excel workbook (one sheet per table), returned as bytes: the caller
// decides where it goes, so this module stays free of file I/O.

import ExcelJS from 'exceljs';
import { formatAlpha, type RoutingReport } from './routing-analysis.js';

type Row = Array<string | number | boolean | null>;

export const SHEETS = ['Methods', 'Cost setting', 'Alpha sweeps', 'Models', 'Pareto frontier', 'Datasets', 'Options'] as const;

export async function renderReportXlsx(report: RoutingReport): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'BenchRouter br analyze';
  const datasets = report.pool.datasets.map((d) => d.name);
  const perDataset = (acc: Record<string, number | null>) => datasets.map((d) => acc[d] ?? null);

  addSheet(workbook, 'Methods', ['Method', 'Kind', 'Model', 'Acc', 'Cost (USD)', 'Gain@R', 'Gain@B', 'Gap@O', ...datasets.map((d) => `Acc ${d}`)], report.methods.map((m) => [m.name, m.kind, m.model ?? null, m.acc, m.cost, m.gainOverRandom, m.gainOverBestSingle, m.gapToOracle, ...perDataset(m.datasetAcc)]), { percent: [5, 6, 7] });
  addSheet(workbook, 'Cost setting', ['Router', 'PerfGain', 'CostSave', 'ParetoDist', 'Settings on frontier', 'Settings'], report.costAware.map((r) => [r.name, r.perfGain, r.costSave ?? 'n/a', r.paretoDist, r.settings.filter((s) => s.onFrontier).length, r.settings.length]), { percent: [1, 2] });
  addSheet(workbook, 'Alpha sweeps', ['Router', 'Alpha', 'Acc', 'Cost (USD)', 'On frontier'], report.costAware.flatMap((r) => r.settings.map((s): Row => [r.name, Number(formatAlpha(s.alpha)), s.acc, s.cost, s.onFrontier])));
  addSheet(workbook, 'Models', ['Model', 'Train Acc', 'Test Acc', 'Cost (USD)', 'On frontier', ...datasets.map((d) => `Acc ${d}`)], report.models.map((m) => [m.model, m.trainAcc, m.acc, m.cost, m.onFrontier, ...perDataset(m.datasetAcc)]));
  addSheet(workbook, 'Pareto frontier', ['Point', 'Cost (USD)', 'Acc'], report.frontier.map((p) => [p.label, p.cost, p.acc]));
  addSheet(workbook, 'Datasets', ['Dataset', 'Queries', 'Train', 'Test', 'Dropped'], report.pool.datasets.map((d) => [d.name, d.queries, d.train, d.test, d.dropped]));
  addSheet(workbook, 'Options', ['Option', 'Value'], [
    ...Object.entries(report.options).map(([k, v]): Row => [k, v]),
    ['embedder', report.embedder],
    ['droppedQueries', report.pool.droppedQueries],
    ['duplicateRecords', report.pool.duplicateRecords],
  ]);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

function addSheet(workbook: ExcelJS.Workbook, name: (typeof SHEETS)[number], headers: string[], rows: Row[], format: { percent?: number[] } = {}): void {
  const sheet = workbook.addWorksheet(name, { views: [{ state: 'frozen', ySplit: 1 }] });
  sheet.addRow(headers).font = { bold: true };
  for (const row of rows) sheet.addRow(row);
  headers.forEach((header, i) => {
    const column = sheet.getColumn(i + 1);
    column.width = Math.min(48, rows.reduce((w, r) => Math.max(w, typeof r[i] === 'number' ? 12 : String(r[i] ?? '').length + 2), Math.max(10, header.length + 2)));
    if (format.percent?.includes(i)) column.numFmt = '0.00%';
  });
}

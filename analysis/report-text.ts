// The routing report as terminal tables: what was analysed, baselines and routers with their relative
// metrics, the cost-aware routers' cost-setting figures, single models, and the Pareto frontier.

import type { RoutingReport } from './routing-analysis.js';

export function renderReportText(report: RoutingReport): string {
  const { pool, options } = report;
  const lines = [
    `Routing analysis: ${pool.datasets.length} datasets, ${pool.models.length} models, ${pool.queries} queries (${pool.trainQueries} train / ${pool.testQueries} test)`,
    `dropped ${pool.droppedQueries} queries missing for some model${pool.duplicateRecords ? `; ignored ${pool.duplicateRecords} duplicate records` : ''}`,
    `split seed ${options.seed}, train ratio ${options.trainRatio}; embeddings ${report.embedder}; cluster router k=${options.k} top_k=${options.topK} β=${options.beta} n_init=${options.nInit}; kNN k=${options.knnK}`,
    '',
    'Pure performance (test):',
    textTable(
      ['METHOD', 'ACC', 'COST (USD)', 'GAIN@R', 'GAIN@B', 'GAP@O', 'TRAINED'],
      report.methods.map((m) => [
        m.model ? `${m.name}: ${m.model}` : m.kind === 'reference' ? `${m.name} (reference)` : m.name,
        formatAcc(m.acc),
        formatUsd(m.cost),
        formatPercent(m.gainOverRandom),
        formatPercent(m.gainOverBestSingle),
        formatPercent(m.gapToOracle),
        formatTrainSeconds(m.trainSeconds),
      ]),
      [false, true, true, true, true, true, true],
    ),
    '',
    "Performance–cost (over each router's settings):",
    textTable(
      ['COST-AWARE ROUTER (SETTINGS)', 'PERFGAIN', 'COSTSAVE', 'PARETODIST', 'ON FRONTIER', 'TRAINED'],
      report.costAware.map((r) => [
        r.settingName === 'reference' ? `${r.name} (reference)` : r.name,
        formatPercent(r.perfGain),
        formatPercent(r.costSave),
        r.paretoDist === null ? 'n/a' : r.paretoDist.toFixed(4),
        `${r.settings.filter((s) => s.onFrontier).length}/${r.settings.length}`,
        formatTrainSeconds(r.trainSeconds),
      ]),
      [false, true, true, true, true, true],
    ),
    '',
    textTable(
      ['MODEL', 'TRAIN ACC', 'TEST ACC', 'COST (USD)', 'FRONTIER'],
      report.models.map((m) => [m.model, formatAcc(m.trainAcc), formatAcc(m.acc), formatUsd(m.cost), m.onFrontier ? 'yes' : '']),
      [false, true, true, true, false],
    ),
    '',
    'Pareto frontier (test cost, Acc):',
    textTable(
      ['POINT', 'COST (USD)', 'ACC'],
      report.frontier.map((p) => [p.label, formatUsd(p.cost), formatAcc(p.acc)]),
      [false, true, true],
    ),
  ];
  return lines.join('\n');
}

export function textTable(headers: string[], rows: string[][], alignRight: boolean[] = []): string {
  const widths = headers.map((h, i) => rows.reduce((w, r) => Math.max(w, (r[i] ?? '').length), h.length));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (alignRight[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function formatAcc(acc: number): string {
  return acc.toFixed(4);
}

/** Dollars with enough digits to tell small costs apart. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '0';
  if (Math.abs(usd) >= 100) return usd.toFixed(2);
  return usd.toPrecision(4);
}

/**
 * A router's training time: tenths of a second, or milliseconds under a tenth (the in-process routers fit
 * small pools that fast); '?' where a container did not say, empty for a row that trains nothing.
 */
export function formatTrainSeconds(seconds: number | null | undefined): string {
  if (seconds === undefined) return '';
  if (seconds === null) return '?';
  return seconds < 0.1 ? `${(seconds * 1000).toFixed(1)} ms` : `${seconds.toFixed(1)} s`;
}

/** A signed percentage, or n/a where the metric is undefined (for CostSave: no setting reached Best Single). */
export function formatPercent(x: number | null): string {
  if (x === null) return 'n/a';
  return `${x > 0 ? '+' : ''}${(x * 100).toFixed(2)}%`;
}

// The SVG charts' geometry (where a score, an interval, a bucket lands) and that each picture is a
// document resvg can render to PNG, names escaped.

import { describe, expect, it } from 'vitest';
import { renderPng } from '../../analysis/plot-png.js';
import { agreementCells, agreementMatrix } from '../../charts/agreement-matrix.js';
import { HEAT_LAYOUT, heatCellBox, heatColour, heatMap, intervalMarks } from '../../charts/heat-map.js';
import { LINE_LAYOUT, lineChart, linePosition } from '../../charts/line-chart.js';
import { linearScale, niceTicks, shortNumber } from '../../charts/svg.js';
import { bucketSums, bucketX, cumulative, PANEL_LAYOUT, timePanels } from '../../charts/time-panels.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

describe('svg pieces', () => {
  it('scales linearly, and a zero-width domain to the middle', () => {
    expect(linearScale([0, 1], [300, 100])(0.25)).toBe(250);
    expect(linearScale([5, 5], [0, 10])(5)).toBe(5);
  });

  it('picks round ticks of 1, 2 or 5 times a power of ten that reach the maximum', () => {
    expect(niceTicks(7, 4)).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(1000, 2)).toEqual([0, 500, 1000]);
    expect(niceTicks(0.3, 3)).toEqual([0, 0.1, 0.2, 0.3]);
    expect(niceTicks(0)).toEqual([0, 1]);
    expect([shortNumber(1234), shortNumber(2_500_000), shortNumber(12)]).toEqual(['1.23k', '2.5M', '12']);
  });
});

describe('line chart (score against checkpoint)', () => {
  it('spreads checkpoints evenly, puts 1 at the top and 0 at the bottom, and one checkpoint in the middle', () => {
    const { width, height, left, right, top, bottom, inset } = LINE_LAYOUT;
    expect(linePosition(0, 1, 3)).toEqual({ x: left + inset, y: top });
    expect(linePosition(2, 0, 3)).toEqual({ x: width - right, y: height - bottom });
    expect(linePosition(1, 0.5, 3).x).toBe((left + inset + width - right) / 2);
    expect(linePosition(0, 0.5, 1).x).toBe(left + inset + (width - left - right - inset) / 2);
  });

  it('draws a point per scored checkpoint with its link and data, names escaped, as a document resvg renders', () => {
    const svg = lineChart({
      id: 'plot',
      label: 'score against checkpoint',
      categories: ['step-100', 'step-200', 'step-300'],
      series: [{ name: '<arith>', points: [0.5, 0.7, 0.9].map((value, at) => ({ at, value, href: `/ui/runs/r${at}`, data: { score: value } })) }],
    });
    expect(svg.match(/<circle class="point"/g)).toHaveLength(3);
    expect(svg).toContain('<a href="/ui/runs/r2"><circle class="point" cx="736" cy="36.8"');
    expect(svg).toContain('data-series="&lt;arith&gt;"');
    expect(svg).not.toContain('<arith>');
    expect(renderPng(svg).subarray(0, 4)).toEqual(PNG_SIGNATURE);
  });
});

describe('heat map (the leaderboard with intervals)', () => {
  it('colours 0 red, ½ yellow and 1 green', () => {
    expect([heatColour(0), heatColour(0.5), heatColour(1), heatColour(7)]).toEqual(['#fecaca', '#fef08a', '#86efac', '#86efac']);
  });

  it('draws the interval across the cell: 0 at its left edge and 1 at its right, less the padding', () => {
    const box = heatCellBox(1, 2);
    expect(box).toEqual({ x: HEAT_LAYOUT.rowLabel + 2 * HEAT_LAYOUT.cellWidth, y: HEAT_LAYOUT.header + HEAT_LAYOUT.cellHeight, width: 150, height: 58 });
    const marks = intervalMarks(box, { value: 0.5, low: 0, high: 1 });
    expect(marks).toEqual({ from: box.x + HEAT_LAYOUT.pad, to: box.x + box.width - HEAT_LAYOUT.pad, at: box.x + box.width / 2 });
    expect(intervalMarks(box, { value: 0.5 })).toEqual({ at: box.x + box.width / 2 });
  });

  it('shows each cell with score, interval and n, and an empty cell as a dash', () => {
    const svg = heatMap({
      label: 'leaderboard',
      rows: ['model-a', 'model-b'],
      columns: ['arith'],
      cell: (row) => (row === 'model-a' ? { value: 0.8, low: 0.49, high: 0.94, n: 10, href: '/ui/runs/x' } : undefined),
    });
    expect(svg.match(/class="interval"/g)).toHaveLength(1);
    expect(svg).toContain('>0.800<');
    expect(svg).toContain('>n=10<');
    expect(svg).toContain('[0.4900, 0.9400] n=10');
    expect(svg).toContain('>–<');
    expect(renderPng(svg).subarray(0, 4)).toEqual(PNG_SIGNATURE);
  });
});

describe('agreement matrix (two runs instance by instance)', () => {
  it('puts agreement on the diagonal, with each cell’s share of the shared instances', () => {
    const cells = agreementCells({ bothRight: 6, onlyA: 2, onlyB: 1, neither: 1 });
    expect(cells.map((c) => [c.key, c.row, c.column, c.share])).toEqual([
      ['bothRight', 0, 0, 0.6],
      ['onlyA', 0, 1, 0.2],
      ['onlyB', 1, 0, 0.1],
      ['neither', 1, 1, 0.1],
    ]);
    expect(agreementCells({ bothRight: 0, onlyA: 0, onlyB: 0, neither: 0 }).every((c) => c.share === 0)).toBe(true);
    const svg = agreementMatrix({ label: 'agreement', nameA: 'run-a', nameB: 'run-b', counts: { bothRight: 6, onlyA: 2, onlyB: 1, neither: 1 } });
    expect(svg).toContain('data-cell="onlyA" data-count="2"');
    expect(renderPng(svg).subarray(0, 4)).toEqual(PNG_SIGNATURE);
  });
});

describe('time panels (a run over time)', () => {
  const start = Date.UTC(2026, 11, 2, 7, 0, 0);
  it('sums events per minute from the start, the last instant in the last bucket, others left out', () => {
    const events = [0, 59_000, 60_000, 130_000, 180_000, 200_000, -1].map((offset) => ({ at: start + offset, weight: 2 }));
    expect(bucketSums(events, start, start + 180_000, 60_000)).toEqual([4, 2, 4]);
    expect(cumulative([1, 0, 3])).toEqual([1, 1, 4]);
    expect(bucketSums([], start, start, 60_000)).toEqual([0]);
  });

  it('shares one time axis across panels, each with its total', () => {
    expect(bucketX(0, 4)).toBe(PANEL_LAYOUT.left);
    expect(bucketX(4, 4)).toBe(PANEL_LAYOUT.width - PANEL_LAYOUT.right);
    const svg = timePanels({
      label: 'run over time',
      start,
      bucketMs: 60_000,
      panels: [
        { name: 'jobs finished', values: [1, 3, 4], kind: 'line' },
        { name: 'calls per minute', values: [10, 5, 0], kind: 'bars' },
      ],
    });
    expect(svg).toContain('data-panel="jobs finished" data-total="4"');
    expect(svg).toContain('data-panel="calls per minute" data-total="15"');
    expect(svg).toContain('>07:00<');
    expect(renderPng(svg).subarray(0, 4)).toEqual(PNG_SIGNATURE);
  });
});

// Two runs instance by instance as a 2 × 2 matrix: rows A right / A wrong, columns B right / B wrong,
// so the diagonal is where they agree (both right, neither) and the corners off it where only one is.

import { px, svgDocument, text } from './svg.js';

export interface AgreementCounts {
  bothRight: number;
  onlyA: number;
  onlyB: number;
  neither: number;
}

export interface AgreementMatrixInput {
  id?: string;
  label: string;
  nameA: string;
  nameB: string;
  counts: AgreementCounts;
}

export const MATRIX_LAYOUT = { cell: 150, left: 150, top: 70 };

/** The four cells in reading order, with the share of the shared instances each holds. */
export function agreementCells(counts: AgreementCounts): Array<{ key: keyof AgreementCounts; row: number; column: number; count: number; share: number }> {
  const total = counts.bothRight + counts.onlyA + counts.onlyB + counts.neither;
  const cells: Array<[keyof AgreementCounts, number, number]> = [
    ['bothRight', 0, 0],
    ['onlyA', 0, 1],
    ['onlyB', 1, 0],
    ['neither', 1, 1],
  ];
  return cells.map(([key, row, column]) => ({ key, row, column, count: counts[key], share: total ? counts[key] / total : 0 }));
}

const LABELS: Record<keyof AgreementCounts, string> = { bothRight: 'both right', onlyA: 'only A', onlyB: 'only B', neither: 'neither' };
const cut = (label: string) => (label.length > 40 ? `…${label.slice(-39)}` : label);

export function agreementMatrix(input: AgreementMatrixInput): string {
  const { cell, left, top } = MATRIX_LAYOUT;
  const width = left + 2 * cell + 20;
  const height = top + 2 * cell + 44;
  const parts: string[] = [
    text(left + cell, 18, `B: ${cut(input.nameB)}`, 'text-anchor="middle" font-weight="bold"'),
    text(left + cell / 2, top - 10, 'B right', 'text-anchor="middle"'),
    text(left + cell * 1.5, top - 10, 'B wrong', 'text-anchor="middle"'),
    text(left - 10, top + cell / 2 + 4, 'A right', 'text-anchor="end"'),
    text(left - 10, top + cell * 1.5 + 4, 'A wrong', 'text-anchor="end"'),
    text(left + cell, height - 12, `A: ${cut(input.nameA)}`, 'text-anchor="middle" font-weight="bold"'),
  ];
  for (const c of agreementCells(input.counts)) {
    const x = left + c.column * cell;
    const y = top + c.row * cell;
    // Agreement in blue, disagreement in orange, deeper with a larger share.
    const hue = c.row === c.column ? '37, 99, 235' : '234, 88, 12';
    parts.push(
      `<g class="agreement" data-cell="${c.key}" data-count="${c.count}"><rect x="${px(x)}" y="${px(y)}" width="${cell}" height="${cell}" fill="rgba(${hue}, ${px(0.12 + 0.6 * c.share)})" stroke="#ffffff" stroke-width="2"/>` +
        text(x + cell / 2, y + cell / 2 - 4, String(c.count), 'text-anchor="middle" font-size="26" font-weight="bold"') +
        text(x + cell / 2, y + cell / 2 + 20, `${LABELS[c.key]} · ${(100 * c.share).toFixed(1)}%`, 'text-anchor="middle"') +
        '</g>',
    );
  }
  return svgDocument({ ...(input.id ? { id: input.id } : {}), width, height, label: input.label }, parts.join(''));
}

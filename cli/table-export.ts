// A table `br` shows (results, compare, leaderboard) as one value, rendered for people (table, md)
// or programs (json, csv), or written as an Excel workbook with one sheet per table.

import ExcelJS from 'exceljs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { table } from './render.js';

export type TableCell = string | number | null;

export interface TableView {
  /** Names the table: the XLSX sheet, and a heading wherever several tables are shown. */
  name: string;
  columns: string[];
  rows: TableCell[][];
}

export type ViewFormat = 'table' | 'json' | 'csv' | 'md';

export const VIEW_FORMATS: readonly ViewFormat[] = ['table', 'json', 'csv', 'md'];

export function renderView(view: TableView, format: ViewFormat): string {
  switch (format) {
    case 'table':
      return `${table(view.columns, view.rows.map((row) => view.columns.map((_, i) => showCell(cellAt(row, i)))))}\n`;
    case 'json':
      return `${JSON.stringify(view.rows.map((row) => Object.fromEntries(view.columns.map((c, i) => [c, cellAt(row, i)]))), null, 2)}\n`;
    case 'csv':
      return [view.columns, ...view.rows.map((row) => view.columns.map((_, i) => cellAt(row, i)))].map((r) => `${r.map(csvField).join(',')}\r\n`).join('');
    case 'md':
      return renderMarkdown(view);
  }
}

/** A cell as stored: NaN and ±Infinity have no place in JSON, CSV or a spreadsheet, so they are missing. */
function cellAt(row: TableCell[], i: number): TableCell {
  const value = row[i] ?? null;
  return typeof value === 'number' && !Number.isFinite(value) ? null : value;
}

/** A number for a person: integers whole, others to 4 decimals, tiny ones in 2 significant digits. */
export function showNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  if (Math.abs(n) < 0.0001) return n.toPrecision(2);
  return n.toFixed(4);
}

function showCell(value: TableCell): string {
  if (value === null) return '-';
  if (typeof value === 'number') return showNumber(value);
  return value.replace(/\r?\n/g, ' ');
}

// RFC 4180: a field with a comma, quote or line break is quoted, and its quotes doubled.
function csvField(value: TableCell): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function renderMarkdown(view: TableView): string {
  const escape = (text: string) => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
  const numeric = view.columns.map((_, i) => view.rows.some((r) => typeof cellAt(r, i) === 'number') && view.rows.every((r) => typeof cellAt(r, i) !== 'string'));
  const line = (cells: string[]) => `| ${cells.join(' | ')} |\n`;
  return [
    line(view.columns.map(escape)),
    line(numeric.map((right) => (right ? '---:' : '---'))),
    ...view.rows.map((row) => line(view.columns.map((_, i) => {
      const cell = cellAt(row, i);
      return typeof cell === 'string' ? escape(cell) : showCell(cell);
    }))),
  ].join('');
}

const SHEET_NAME_MAX = 31;

/**
 * Names Excel accepts: at most 31 characters, none of []:*?/\, no apostrophe at either end, unique
 * regardless of case. A clash gets " (2)", " (3)"... within the 31 characters.
 */
export function sheetNames(names: readonly string[]): string[] {
  const taken = new Set<string>();
  return names.map((name) => {
    const base = name.replace(/[[\]:*?/\\]/g, '_').replace(/^'+|'+$/g, '').trim() || 'Sheet';
    let candidate = base.slice(0, SHEET_NAME_MAX);
    for (let n = 2; taken.has(candidate.toLowerCase()); n++) {
      const suffix = ` (${n})`;
      candidate = `${base.slice(0, SHEET_NAME_MAX - suffix.length)}${suffix}`;
    }
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}

// Characters XML 1.0 forbids would make the file unreadable; Excel caps a cell at 32,767 characters.
// eslint-disable-next-line no-control-regex -- these control characters are exactly what the pattern removes
const XML_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const CELL_TEXT_MAX = 32_767;

function sheetCell(value: TableCell): string | number | null {
  if (typeof value !== 'string') return value;
  return value.replace(XML_FORBIDDEN, '').slice(0, CELL_TEXT_MAX);
}

const COLUMN_WIDTH = { min: 8, max: 60 };

export async function writeXlsx(views: readonly TableView[], file: string): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'BenchRouter';
  const names = sheetNames(views.map((v) => v.name));
  views.forEach((view, v) => {
    const sheet = workbook.addWorksheet(names[v]!, { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.addRow(view.columns).font = { bold: true };
    for (const row of view.rows) sheet.addRow(view.columns.map((_, i) => sheetCell(cellAt(row, i))));
    view.columns.forEach((column, i) => {
      const widest = Math.max(column.length, ...view.rows.map((r) => showCell(cellAt(r, i)).length));
      sheet.getColumn(i + 1).width = Math.min(COLUMN_WIDTH.max, Math.max(COLUMN_WIDTH.min, widest + 2));
    });
  });
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  await workbook.xlsx.writeFile(file);
}

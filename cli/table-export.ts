// The one exporter of `br`'s tables: aligned text and Markdown for people, JSON and CSV for programs,
// XLSX workbooks for spreadsheets. Every CSV and XLSX cell is guarded against formula injection.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TableCell, TableView } from '../runs/table-view.js';

export type ViewFormat = 'table' | 'json' | 'csv' | 'md';

/** Columns padded to their widest cell, two spaces apart: what people read in a terminal. */
export function textTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (c ?? '').padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function renderView(view: TableView, format: ViewFormat): string {
  switch (format) {
    case 'table':
      return `${textTable(
        view.columns,
        view.rows.map((row) => view.columns.map((_, i) => showCell(cellAt(row, i)))),
      )}\n`;
    case 'json':
      return `${JSON.stringify(rowObjects(view), null, 2)}\n`;
    case 'csv':
      return [view.columns, ...view.rows.map((row) => view.columns.map((_, i) => cellAt(row, i)))].map((r) => `${r.map(csvField).join(',')}\r\n`).join('');
    case 'md':
      return renderMarkdown(view);
  }
}

/**
 * Several tables in one text: headed sections for people (table, md), an object of row arrays keyed by
 * table name (json), and one rectangular CSV whose first column names each row's table (csv).
 */
export function renderViews(views: readonly TableView[], format: ViewFormat): string {
  if (views.length === 1) return renderView(views[0]!, format);
  switch (format) {
    case 'table':
      return views.map((view) => `${view.name}\n\n${renderView(view, 'table')}`).join('\n');
    case 'md':
      return views.map((view) => `## ${view.name}\n\n${renderView(view, 'md')}`).join('\n');
    case 'json':
      return `${JSON.stringify(Object.fromEntries(views.map((view) => [view.name, rowObjects(view)])), null, 2)}\n`;
    case 'csv':
      return renderView(joinViews(views), 'csv');
  }
}

/** Several tables as one: a `table` column, then every table's columns (same name, same column) in first-seen order. */
function joinViews(views: readonly TableView[]): TableView {
  const columns = [...new Set(views.flatMap((view) => view.columns))];
  const rows = views.flatMap((view) =>
    view.rows.map((row): TableCell[] => [
      view.name,
      ...columns.map((column) => (view.columns.includes(column) ? cellAt(row, view.columns.indexOf(column)) : null)),
    ]),
  );
  return { name: 'tables', columns: ['table', ...columns], rows };
}

function rowObjects(view: TableView): Array<Record<string, TableCell>> {
  return view.rows.map((row) => Object.fromEntries(view.columns.map((c, i) => [c, cellAt(row, i)])));
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
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return value.replace(/\r?\n/g, ' ');
}

/**
 * Text a spreadsheet would run as a formula (it starts with = + - @, a tab or a carriage return) gets
 * a leading apostrophe, so a model's name or a benchmark's prediction cannot execute on the reader's
 * machine (OWASP "CSV injection"). Numbers are numbers, never text, so negative values are untouched.
 */
export function spreadsheetSafe(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

// RFC 4180: a field with a comma, quote or line break is quoted, and its quotes doubled.
function csvField(value: TableCell): string {
  if (value === null) return '';
  const text = typeof value === 'string' ? spreadsheetSafe(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function renderMarkdown(view: TableView): string {
  const escape = (text: string) => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
  const numeric = view.columns.map(
    (_, i) => view.rows.some((r) => typeof cellAt(r, i) === 'number') && view.rows.every((r) => typeof cellAt(r, i) !== 'string'),
  );
  const line = (cells: string[]) => `| ${cells.join(' | ')} |\n`;
  return [
    line(view.columns.map(escape)),
    line(numeric.map((right) => (right ? '---:' : '---'))),
    ...view.rows.map((row) =>
      line(
        view.columns.map((_, i) => {
          const cell = cellAt(row, i);
          return typeof cell === 'string' ? escape(cell) : showCell(cell);
        }),
      ),
    ),
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
    const base =
      name
        .replace(/[[\]:*?/\\]/g, '_')
        .replace(/^'+|'+$/g, '')
        .trim() || 'Sheet';
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

function sheetCell(value: TableCell): string | number | boolean | null {
  if (typeof value !== 'string') return value;
  return spreadsheetSafe(value).replace(XML_FORBIDDEN, '').slice(0, CELL_TEXT_MAX);
}

const COLUMN_WIDTH = { min: 8, max: 60 };

/** A workbook with one sheet per table: bold frozen header, fitted widths, numbers as numbers. */
export async function xlsxBytes(views: readonly TableView[]): Promise<Buffer> {
  // Loaded here, not at the top: exceljs costs every `br` start about 0.5 s, and only xlsx output needs it.
  const { default: ExcelJS } = await import('exceljs');
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'BenchRouter';
  const names = sheetNames(views.map((v) => v.name));
  views.forEach((view, v) => {
    const sheet = workbook.addWorksheet(names[v]!, { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.addRow(view.columns.map(spreadsheetSafe)).font = { bold: true };
    for (const row of view.rows) sheet.addRow(view.columns.map((_, i) => sheetCell(cellAt(row, i))));
    view.columns.forEach((column, i) => {
      const widest = view.rows.reduce((w, r) => Math.max(w, showCell(cellAt(r, i)).length), column.length);
      sheet.getColumn(i + 1).width = Math.min(COLUMN_WIDTH.max, Math.max(COLUMN_WIDTH.min, widest + 2));
      if (view.percentColumns?.includes(column)) sheet.getColumn(i + 1).numFmt = '0.00%';
    });
  });
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

export async function writeXlsx(views: readonly TableView[], file: string): Promise<void> {
  writeOutputFile(file, await xlsxBytes(views));
}

/** Writes a file, making its directory first. */
export function writeOutputFile(file: string, content: string | Buffer): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, content);
}

/** A directory export (`br run --output DIR`): a CSV per table and one workbook with them all. Returns the files written. */
export async function writeOutputDir(views: readonly TableView[], dir: string, baseName: string): Promise<string[]> {
  const files: string[] = [];
  for (const view of views) {
    const file = path.join(dir, `${baseName}-${view.name.replace(/[^A-Za-z0-9._-]/g, '_')}.csv`);
    writeOutputFile(file, renderView(view, 'csv'));
    files.push(file);
  }
  const workbook = path.join(dir, `${baseName}.xlsx`);
  await writeXlsx(views, workbook);
  files.push(workbook);
  return files;
}

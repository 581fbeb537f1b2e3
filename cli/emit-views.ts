// Where a command's tables go: stdout in the chosen format, or an XLSX workbook (one sheet per
// table), and with --output DIR both a CSV per table and a workbook.

import { Option, type Command } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderView, writeXlsx, type TableView, type ViewFormat } from './table-export.js';

export type OutputFormat = ViewFormat | 'xlsx';

export interface ViewFlags {
  format: OutputFormat;
  out?: string;
}

export function addViewFlags(command: Command, defaultName: string): Command {
  return command
    .addOption(new Option('--format <format>', 'table, json, csv, md, or xlsx').choices(['table', 'json', 'csv', 'md', 'xlsx']).default('table'))
    .option('--out <file>', `with --format xlsx: the workbook to write (default ./${defaultName}.xlsx)`);
}

export async function emitViews(views: TableView[], flags: ViewFlags, defaultName: string, write: (text: string) => void): Promise<void> {
  if (flags.format === 'xlsx') {
    const file = path.resolve(flags.out ?? `${defaultName}.xlsx`);
    await writeXlsx(views, file);
    write(`${file}\n`);
    return;
  }
  const several = views.length > 1 && (flags.format === 'table' || flags.format === 'md');
  for (const view of views) write(`${several ? `${flags.format === 'md' ? '## ' : ''}${view.name}\n\n` : ''}${renderView(view, flags.format)}${several ? '\n' : ''}`);
}

/** `--output DIR`: a CSV per view and one workbook with them all. Returns the files written. */
export async function writeOutputDir(views: TableView[], dir: string, baseName: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (const view of views) {
    const file = path.join(dir, `${baseName}-${view.name.replace(/[^A-Za-z0-9._-]/g, '_')}.csv`);
    writeFileSync(file, renderView(view, 'csv'));
    files.push(file);
  }
  const workbook = path.join(dir, `${baseName}.xlsx`);
  await writeXlsx(views, workbook);
  files.push(workbook);
  return files;
}

// The output convention of every read command: `--format table|json|csv|md|xlsx`, `--out FILE`, and
// `--json` as another name for `--format json`. A command hands over what it shows; this writes it.

import { Option, type Command } from 'commander';
import path from 'node:path';
import { InputError } from '../contract/problems.js';
import { renderViews, writeOutputFile, xlsxBytes } from './table-export.js';
import type { TableView } from '../runs/table-view.js';

export const OUTPUT_FORMATS = ['table', 'json', 'csv', 'md', 'xlsx'] as const;

export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface OutputFlags {
  format: OutputFormat;
  out?: string;
  json?: boolean;
}

/** What a read command shows, in every format. */
export interface CommandOutput {
  /** The command's tables: what csv, md and xlsx hold, and the table format unless `text` is given. */
  tables: TableView[];
  /** What json prints, where the command has more to say than its tables (a whole run result). Default: the tables' rows as objects. */
  json?: unknown;
  /** The table format, where the command lays its output out for people itself. */
  text?: string;
}

/** `defaultName` is how help names the workbook --format xlsx writes without --out, e.g. `<run>-records`. */
export function addOutputFlags(command: Command, defaultName: string): Command {
  return command
    .addOption(new Option('--format <format>', 'output format').choices([...OUTPUT_FORMATS]).default('table'))
    .option('--out <file>', `write the output to this file instead of stdout (with --format xlsx, default ./${defaultName}.xlsx)`)
    .option('--json', 'the same as --format json')
    .hook('preAction', (_, action) => void formatOf(action.opts<OutputFlags>()));
}

/** The format the flags ask for; `--json` beside another explicit format is a contradiction, so bad input. */
export function formatOf(flags: OutputFlags): OutputFormat {
  if (!flags.json) return flags.format;
  if (flags.format !== 'table' && flags.format !== 'json') {
    throw new InputError([{ file: '--json', field: '', message: `means --format json; it cannot be combined with --format ${flags.format}` }]);
  }
  return 'json';
}

export interface OutputSinks {
  stdout(text: string): void | Promise<void>;
  /** Notes for people, on stderr: the files written. */
  say(line: string): void;
}

export async function emitOutput(output: CommandOutput, flags: OutputFlags, defaultName: string, sinks: OutputSinks): Promise<void> {
  const format = formatOf(flags);
  if (format === 'xlsx') {
    const file = path.resolve(flags.out ?? `${defaultName}.xlsx`);
    writeOutputFile(file, await xlsxBytes(output.tables));
    sinks.say(`wrote ${file}`);
    return;
  }
  const text =
    format === 'json' && output.json !== undefined
      ? `${JSON.stringify(output.json, null, 2)}\n`
      : format === 'table' && output.text !== undefined
        ? output.text
        : renderViews(output.tables, format);
  if (flags.out) {
    writeOutputFile(flags.out, text);
    sinks.say(`wrote ${path.resolve(flags.out)}`);
  } else await sinks.stdout(text);
}

// What every `br` command is given: settings read on first use, where output and notes go, and how
// the exit code is set. main() passes the process's own; a test builds the program with its own.

import { once } from 'node:events';
import os from 'node:os';
import { settingsFrom, type Settings } from '../config/settings.js';

export interface CliDeps {
  /** Settings from the environment, read when a command first needs them: building the program reads nothing. */
  settings(): Settings;
  /** Where output goes (tables, JSON); may wait while a pipe is full. */
  stdout(text: string): void | Promise<void>;
  /** Progress and notes, one line each, on stderr. */
  say(line: string): void;
  /** The exit code `br` ends with, for outcomes that are not errors (a PARTIAL run exits 3). */
  setExitCode(code: number): void;
  env: NodeJS.ProcessEnv;
}

export function processDeps(env: NodeJS.ProcessEnv = process.env): CliDeps {
  let settings: Settings | undefined;
  return {
    settings: () => (settings ??= settingsFrom(env, os.homedir())),
    stdout: writeStdout,
    say: (line) => void process.stderr.write(`${line}\n`),
    setExitCode: (code) => {
      process.exitCode = code;
    },
    env,
  };
}

let stdoutGuarded = false;

/** A reader of stdout that went away (`br --help | head`) ends `br` quietly, whoever was writing. */
export function endQuietlyWhenStdoutCloses(): void {
  if (stdoutGuarded) return;
  stdoutGuarded = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

/** Writes to stdout, waiting while the pipe is full; a reader that went away (`| head`) ends `br` quietly. */
export async function writeStdout(text: string): Promise<void> {
  endQuietlyWhenStdoutCloses();
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

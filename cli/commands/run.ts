// `br run`: start a run (or a suite of runs), follow its progress and print the results table; with
// --output DIR also export the results as CSV and XLSX (into DIR/NAME with --folder-name NAME).

import { jobsOf } from '../run-text.js';
import type { Command } from 'commander';
import path from 'node:path';
import { submitRun } from '../../client/runs.js';
import { followSuite, newSuiteId, submitSuite } from '../../client/suites.js';
import { runWebUiLink } from '../../config/settings.js';
import { InputError } from '../../contract/problems.js';
import type { CliDeps } from '../cli-deps.js';
import { sayDashboardLink } from '../dashboard-link.js';
import { exitCodeOf } from '../exit-codes.js';
import { example } from '../help-example.js';
import { runResultView, scoreNotesView, suiteSummaryView } from '../results-view.js';
import { addSuiteFlags, specFromFlags, suiteRunsFromFlags, type SuiteFlags } from '../run-definition.js';
import { addRunOptionFlags, type ParsedFlags } from '../run-option-flags.js';
import { watchRunWhileWaiting } from '../health-watch.js';
import { printRun, progressReporter, waitWithProgress } from '../run-progress.js';
import { renderSuiteResult } from '../run-text.js';
import { writeOutputDir } from '../table-export.js';
import { connectTemporal } from '../temporal-access.js';

type RunCommandFlags = ParsedFlags & SuiteFlags & { json?: boolean; output?: string; folderName?: string };

export function registerRunCommand(program: Command, deps: CliDeps): Command {
  return addSuiteFlags(
    addRunOptionFlags(
      program
        .command('run')
        .description('start a run (or a suite of runs), follow its progress and print the results table')
        .argument('[benchmark]', 'benchmark directory, or the name of a built-in benchmark'),
    ),
    'run',
  )
    .option('--json', 'print the result as JSON')
    .option('--output <dir>', 'also write the results as CSV and XLSX into this directory')
    .option(
      '--folder-name <name>',
      'with --output: write them into <dir>/<name>/, as <name>.xlsx and <name>-<table>.csv (default: in <dir>, named by the run id)',
    )
    .addHelpText(
      'after',
      example(
        '$ br run arith --model reference-acc80 --endpoint http://127.0.0.1:8399/v1 --concurrency 4 --output results/',
        '$ br run --suite lite --model gpt-4o-mini --endpoint https://api.openai.com/v1 --api-key-env OPENAI_API_KEY',
      ),
    )
    .action(async (arg: string | undefined, flags: RunCommandFlags) => {
      checkFolderName(flags);
      if (flags.suite) {
        if (arg)
          throw new InputError([{ file: '--suite', field: '', message: `give a benchmark or --suite, not both (got "${arg}" and --suite ${flags.suite})` }]);
        return runSuite(deps, flags);
      }
      if (!arg) throw new InputError([{ file: 'br run', field: '', message: 'expected a benchmark (a directory or a built-in name) or --suite <name>' }]);
      const spec = specFromFlags(arg, flags);
      const handle = await submitRun(await connectTemporal(deps, true), deps.settings(), spec, { say: deps.say });
      deps.say(`run ${spec.runId}: ${jobsOf(handle.spec)} of ${spec.benchmark.name} against ${spec.options.model}`);
      deps.say(`Web UI: ${runWebUiLink(deps.settings(), spec.runId)} (Ctrl-C stops waiting; the run keeps going)`);
      await sayDashboardLink(deps, spec.runId);
      const result = await waitWithProgress(deps, handle);
      await printRun(deps, result, flags.json);
      if (flags.output) {
        const views = [runResultView(result, 'results'), scoreNotesView([result])].filter((v) => v !== null);
        for (const file of await writeOutputDir(views, ...outputPlace(flags.output, flags.folderName, result.runId))) deps.say(`wrote ${file}`);
      }
    });
}

async function runSuite(deps: CliDeps, flags: RunCommandFlags): Promise<void> {
  const settings = deps.settings();
  const { suite, runs } = suiteRunsFromFlags(flags, settings);
  const spec = { suiteId: newSuiteId(suite), suite, model: String(flags.model), runs, parallel: flags.suiteParallel };
  const handle = await submitSuite(await connectTemporal(deps, true), settings, spec);
  deps.say(`suite ${spec.suiteId}: ${runs.map((r) => r.benchmark.name).join(', ')} against ${spec.model}`);
  deps.say(`Web UI: ${runWebUiLink(settings, spec.suiteId)} (Ctrl-C stops waiting; the suite keeps going)`);
  const progress = progressReporter(deps);
  // The suite's own workflow task and its runs' jobs are checked the way a run's are.
  const watch = watchRunWhileWaiting(deps, spec.suiteId, { suite: true, newLine: progress.newLine });
  let result;
  try {
    result = await followSuite(await connectTemporal(deps, false), handle, (p) => {
      watch.progress(p);
      progress.show(p);
    });
  } finally {
    watch.stop();
    progress.done();
  }
  await deps.stdout(flags.json ? `${JSON.stringify(result, null, 2)}\n` : `${renderSuiteResult(result, runWebUiLink(settings, result.suiteId))}\n`);
  if (flags.output) {
    const views = [suiteSummaryView(result), ...result.runs.map((run) => runResultView(run, run.benchmark)), scoreNotesView(result.runs)].filter(
      (v) => v !== null,
    );
    for (const file of await writeOutputDir(views, ...outputPlace(flags.output, flags.folderName, result.suiteId))) deps.say(`wrote ${file}`);
  }
  deps.setExitCode(exitCodeOf(result.status));
}

/** `--folder-name` names a folder inside `--output`: one path segment, checked before anything is submitted. */
function checkFolderName(flags: RunCommandFlags): void {
  if (flags.folderName === undefined) return;
  if (!flags.output) throw new InputError([{ file: '--folder-name', field: '', message: 'names a folder inside --output DIR: give --output too' }]);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(flags.folderName) || flags.folderName.length > 200) {
    throw new InputError([
      {
        file: '--folder-name',
        field: '',
        message: `"${flags.folderName}" is not a folder name: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 200`,
      },
    ]);
  }
}

/** Where the exports go: the folder and the files' base name. */
function outputPlace(output: string, folderName: string | undefined, id: string): [string, string] {
  return folderName ? [path.join(output, folderName), folderName] : [output, id];
}

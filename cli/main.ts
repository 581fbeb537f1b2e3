// `br`, the BenchRouter command line, built from one module per command (cli/commands/). Each command
// is a thin layer over client/, contract/ and workers/: parse flags, call, print (a table for people,
// --format json|csv|md|xlsx for programs and spreadsheets), exit with a code that says how it went.

import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { recordsOfRuns } from '../client/run-records.js';
import { InputError } from '../contract/problems.js';
import { processDeps, type CliDeps } from './cli-deps.js';
import { registerAnalyzeCommand } from './commands/analyze.js';
import { runRouterJobs, stageRoutersBenchmark } from '../client/router-jobs.js';
import { registerArtifactsCommand } from './commands/artifacts.js';
import { registerBenchmarksCommand } from './commands/benchmarks.js';
import { registerCancelCommand } from './commands/cancel.js';
import { registerCodecServerCommand } from './commands/codec-server.js';
import { registerCompareCommand } from './commands/compare.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDoctorCommand } from './commands/doctor.js';
import { registerDownCommand } from './commands/down.js';
import { registerImagesCommand } from './commands/images.js';
import { registerImportCommand } from './commands/import.js';
import { registerLeaderboardCommand } from './commands/leaderboard.js';
import { registerListCommand } from './commands/list.js';
import { registerLogsCommand } from './commands/logs.js';
import { registerTranscriptsCommand } from './commands/transcripts.js';
import { registerExportCommand } from './commands/export.js';
import { registerRecordsCommand } from './commands/records.js';
import { registerReferenceModelCommand } from './commands/reference-model.js';
import { registerReplayModelCommand } from './commands/replay-model.js';
import { registerRerunCommand } from './commands/rerun.js';
import { registerResultsCommand } from './commands/results.js';
import { registerRetryCommand } from './commands/retry.js';
import { registerRunCommand } from './commands/run.js';
import { registerScheduleCommand } from './commands/schedule.js';
import { registerServeCommand } from './commands/serve.js';
import { registerStatusCommand } from './commands/status.js';
import { registerSubmitCommand } from './commands/submit.js';
import { registerTokensCommand } from './commands/tokens.js';
import { registerUpCommand } from './commands/up.js';
import { registerValidateCommand } from './commands/validate.js';
import { registerWorkerCommand } from './commands/worker.js';
import { EXIT_CODES } from './exit-codes.js';
import { ExitError } from './exit-error.js';
import { BUILTIN_BENCHMARKS_DIR } from '../contract/builtin-benchmarks.js';
import { example } from './help-example.js';
import { remoteArtifactAccess } from './remote-artifact-access.js';
import { connectTemporal } from './temporal-access.js';

/**
 * The whole `br` program; nothing is read from the environment until a command runs. Parse errors
 * throw a CommanderError (every command inherits the override) instead of exiting the process, so
 * that main() gives a bad flag of any command the bad-input exit code.
 */
export function buildProgram(deps: CliDeps = processDeps()): Command {
  const program = new Command('br')
    .description('BenchRouter: run containerized LLM benchmarks on Temporal and Docker')
    .exitOverride()
    .showHelpAfterError()
    .addHelpText('after', example('$ br run arith --model reference-acc80 --endpoint http://127.0.0.1:8399/v1'));

  registerValidateCommand(program, deps);
  registerBenchmarksCommand(program, { ...deps, benchmarksDir: BUILTIN_BENCHMARKS_DIR });
  registerSubmitCommand(program, deps);
  registerRunCommand(program, deps);
  registerStatusCommand(program, deps);
  registerResultsCommand(program, deps);
  registerListCommand(program, deps);
  registerRetryCommand(program, deps);
  registerRerunCommand(program, deps);
  registerCancelCommand(program, deps);
  registerScheduleCommand(program, deps);
  registerImagesCommand(program, deps);
  registerImportCommand(program, deps);
  registerUpCommand(program, deps);
  registerDownCommand(program, deps);
  registerWorkerCommand(program, deps);
  registerDoctorCommand(program, deps);
  registerCodecServerCommand(program, deps);
  registerServeCommand(program, deps);
  registerTokensCommand(program, deps);
  registerReferenceModelCommand(program, deps);
  registerReplayModelCommand(program, deps);
  registerDemoCommand(program, deps);
  registerCompareCommand(program, deps);
  registerLeaderboardCommand(program, deps);
  const artifacts = {
    artifactsRoot: () => deps.settings().artifactsRoot,
    stdout: deps.stdout,
    stderr: deps.say,
    remote: once(() => remoteArtifactAccess(deps)),
  };
  registerArtifactsCommand(program, artifacts);
  registerRecordsCommand(program, artifacts);
  registerLogsCommand(program, artifacts);
  registerTranscriptsCommand(program, artifacts);
  registerExportCommand(program, deps, artifacts);
  registerAnalyzeCommand(program, {
    stdout: deps.stdout,
    say: deps.say,
    env: deps.env,
    runRecords: async (runs) => recordsOfRuns(await connectTemporal(deps, false), deps.settings().artifactsRoot, runs),
    runRouters: async (workDir, inputDir, routers, options, onSubmitted) => {
      const benchmark = stageRoutersBenchmark(path.join(workDir, 'staged'), inputDir, routers, options.seed);
      const { run, outcomes } = await runRouterJobs(await connectTemporal(deps, true), deps.settings(), benchmark, routers, options, onSubmitted);
      return { runId: run.runId, outcomes };
    },
  });
  return program;
}

/** `make` called at most once, on first use. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/**
 * The first word of `args` that names no command where one is expected (`br transcripts`, `br schedule
 * bogus`, `br help bogus`), with the command it was given to; undefined when every word is known.
 * Checked before parsing: commander prints the top-level help and exits 0 for `br bogus --help`.
 */
export function unknownCommand(program: Command, args: readonly string[]): { word: string; parent: string } | undefined {
  let command = program;
  let helpFor = false;
  for (const word of args) {
    if (word.startsWith('-')) continue;
    if (command.commands.length === 0) return undefined;
    if (word === 'help' && !helpFor) {
      helpFor = true;
      continue;
    }
    const next = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next) return { word, parent: command === program ? 'br' : commandPath(command) };
    command = next;
  }
  return undefined;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Runs `br` on the given arguments (`process.argv` shape); every failure becomes a message and an exit code. */
export async function main(argv: readonly string[], deps: CliDeps = processDeps()): Promise<void> {
  const program = buildProgram(deps);
  const unknown = unknownCommand(program, argv.slice(2));
  if (unknown) {
    deps.say(`br: unknown command '${unknown.word}' for ${unknown.parent} (\`${unknown.parent} --help\` lists its commands)`);
    deps.setExitCode(EXIT_CODES.BAD_INPUT);
    return;
  }
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      deps.setExitCode(error.exitCode === 0 ? 0 : EXIT_CODES.BAD_INPUT);
    } else if (error instanceof InputError) {
      deps.say(error.message);
      deps.setExitCode(EXIT_CODES.BAD_INPUT);
    } else if (error instanceof ExitError) {
      deps.say(`br: ${error.message}`);
      deps.setExitCode(error.code);
    } else {
      deps.say(`br: ${error instanceof Error ? error.message : String(error)}`);
      deps.setExitCode(EXIT_CODES.ERROR);
    }
  }
}

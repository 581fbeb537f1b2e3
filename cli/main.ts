// `br`, the BenchRouter command line. Each command is a thin layer over client/, contract/ and
// workers/: parse flags, call, print (a table for people, --json for programs), exit with a code
// that says how it went.

import { Command, CommanderError, Option } from 'commander';
import { registerAnalyzeCommand } from './analyze-command.js';
import { registerBenchmarksCommand } from './benchmarks-command.js';
import { entryNames, loadSuites, selectEntries, type Suite, type SuiteEntry } from '../runs/suites.js';
import { followSuite, newSuiteId, submitSuite } from '../client/suites.js';
import type { SuiteResult } from '../workflows/suite-workflow.js';
import { renderSuiteResult, suiteSummaryView } from './render.js';
import { registerArtifactCommands } from './artifact-commands.js';
import { addViewFlags, emitViews, writeOutputDir, type ViewFlags } from './emit-views.js';
import { buildLeaderboard, compareView, leaderboardView } from '../runs/leaderboard.js';
import { finishedRuns, runResults } from '../client/leaderboard.js';
import { recordsOfRuns } from '../client/run-records.js';
import { runResultView } from './results-view.js';
import { addRunFlags, gatewayFrom, generationFrom, judgeFrom, positiveInt, pricesFrom, runOptionsFrom, type RunFlags } from './run-flags.js';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspectBenchmark, loadBenchmark } from '../contract/load-benchmark.js';
import { formatProblem, InputError } from '../contract/problems.js';
import { EXIT_CODES, exitCodeOf } from './exit-codes.js';
import { DEFAULT_RUN_OPTIONS, type RunProgress, type RunResult } from '../runs/run-spec.js';
import { runWebUiLink, settingsFrom, type Settings } from '../config/settings.js';
import { startBackgroundWorker, startEmbeddedServer, stopEmbedded, isReachable } from '../client/embedded-services.js';
import { connectClient, createRerunSpec, createRetrySpec, createRunSpec, followRun, listRuns, queryProgress, runExists, runHandle, runSpecOf, submitRun, type RunHandle } from '../client/runs.js';
import { startReferenceModel } from '../reference-model/reference-model-server.js';
import { payloadCodecsFromEnv } from '../client/payload-codec.js';
import { startCodecServer } from '../client/codec-server.js';
import { resolveHostId } from '../workers/host-id.js';
import { DockerEngine } from '../activities/docker-engine.js';
import { ensureImageArchive } from '../activities/preload-images.js';
import { startWorker } from '../workers/start-worker.js';
import { progressLine, renderRunResult, table } from './render.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const settings: Settings = settingsFrom(process.env, os.homedir());
const say = (line: string) => process.stderr.write(`${line}\n`);
const printJson = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
const write = (text: string) => process.stdout.write(text);

class ExitError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** A benchmark argument is a directory, or the name of a built-in one under benchmarks/. */
function resolveBenchmarkDir(arg: string): string {
  if (existsSync(arg)) return path.resolve(arg);
  const builtin = path.join(repoRoot, 'benchmarks', arg);
  if (existsSync(builtin)) return builtin;
  throw new InputError([{ file: arg, field: '', message: 'benchmark not found: expected a benchmark directory or the name of a built-in one (see benchmarks/)' }]);
}

async function temporal(autoStart: boolean) {
  if (settings.embedded && autoStart) {
    await startEmbeddedServer(settings, say);
    startBackgroundWorker(settings, say);
  } else if (!(await isReachable(settings.temporalAddress))) {
    const hint = settings.embedded ? 'start the embedded server with `br up`' : 'check TEMPORAL_ADDRESS';
    throw new ExitError(`cannot reach Temporal at ${settings.temporalAddress}: ${hint}`, EXIT_CODES.ERROR);
  }
  return connectClient(settings);
}

async function existingRun(runId: string): Promise<RunHandle> {
  const handle = runHandle(await temporal(false), runId);
  if (!(await runExists(handle))) throw new ExitError(`run ${runId} not found in namespace ${settings.temporalNamespace}`, EXIT_CODES.BAD_INPUT);
  return handle;
}

async function submitFromFlags(benchmarkArg: string, flags: RunFlags) {
  const spec = specFromFlags(benchmarkArg, flags);
  const client = await temporal(true);
  const handle = await submitRun(client, settings, spec);
  return { spec, handle };
}

interface SuiteFlags {
  suite?: string;
  suites?: string;
  only?: string;
  exclude?: string;
  suiteParallel: number;
}

const list = (text: string | undefined) => text?.split(',').map((t) => t.trim()).filter(Boolean) ?? [];

/** A suite by name, from the built-in file and the user's (`--suites`, else ~/.benchrouter/suites.yaml). */
function findSuite(name: string, suitesFile: string | undefined): Suite {
  if (suitesFile && !existsSync(suitesFile)) throw new InputError([{ file: suitesFile, field: '', message: 'file not found' }]);
  const suites = loadSuites([path.join(repoRoot, 'benchmarks', 'suites.yaml'), suitesFile ?? path.join(settings.home, 'suites.yaml')]);
  const suite = suites.get(name);
  if (!suite) throw new InputError([{ file: '--suite', field: '', message: `no suite "${name}" (have ${[...suites.keys()].join(', ')})` }]);
  return suite;
}

async function runSuite(flags: RunFlags & SuiteFlags & { output?: string }): Promise<void> {
  const suite = findSuite(flags.suite!, flags.suites);
  const entries = selectEntries(suite, list(flags.only), list(flags.exclude));
  const runs = entries.map((entry, i) => specFromFlags(entry.benchmark, flags, { entry, file: suite.file, field: `suites.${suite.name}.benchmarks[${i}]` }));
  const spec = { suiteId: newSuiteId(suite.name), suite: suite.name, model: flags.model, runs, parallel: flags.suiteParallel };
  const handle = await submitSuite(await temporal(true), settings, spec);
  say(`suite ${spec.suiteId}: ${runs.map((r) => r.benchmark.name).join(', ')} against ${flags.model}`);
  say(`Web UI: ${runWebUiLink(settings, spec.suiteId)}`);
  const progress = progressReporter();
  const result: SuiteResult = await followSuite(await temporal(false), handle, progress.show);
  progress.done();
  if (flags.json) printJson(result);
  else process.stdout.write(`${renderSuiteResult(result, runWebUiLink(settings, result.suiteId))}\n`);
  if (flags.output) {
    const views = [suiteSummaryView(result), ...result.runs.map((run) => runResultView(run, run.benchmark))];
    for (const file of await writeOutputDir(views, flags.output, result.suiteId)) say(`wrote ${file}`);
  }
  process.exitCode = exitCodeOf(result.status);
}

/** A run definition from the flags; a suite entry's tasks, repeats and generation apply on top. */
function specFromFlags(benchmarkArg: string, flags: RunFlags, suite?: { entry: SuiteEntry; file: string; field: string }) {
  const benchmark = loadBenchmark(resolveBenchmarkDir(benchmarkArg));
  const taskNames = suite?.entry.tasks ?? flags.tasks?.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = taskNames?.filter((t) => !benchmark.tasks.some((task) => task.name === t)) ?? [];
  if (unknown.length) {
    throw new InputError([{ file: path.join(benchmark.dir, 'benchmark.yaml'), field: 'tasks', message: `no task named ${unknown.map((t) => `"${t}"`).join(', ')} (have ${benchmark.tasks.map((t) => t.name).join(', ')})` }]);
  }
  if (!/^https?:\/\//.test(flags.endpoint)) throw new InputError([{ file: '--endpoint', field: '', message: `expected an http(s) URL ending in /v1, got "${flags.endpoint}"` }]);
  const options = { ...withoutUndefined(runOptionsFrom(flags)), ...(suite?.entry.repeats ? { repeats: suite.entry.repeats } : {}), ...(suite?.entry.limit ? { limit: suite.entry.limit } : {}) };
  return createRunSpec(benchmark, { name: flags.model, endpoint: flags.endpoint, apiKeyEnv: flags.apiKeyEnv }, options, taskNames, {
    gateway: withoutUndefined(gatewayFrom(flags)),
    generation: generationFrom(flags, benchmark.name, suite?.entry.generation ? { file: suite.file, field: suite.field, generation: suite.entry.generation } : undefined),
    judge: judgeFrom(flags),
    prices: pricesFrom(flags),
  });
}

/** Progress on stderr: a bar redrawn in place on a TTY, a quiet line per change otherwise (CI logs). */
function progressReporter(): { show: (p: RunProgress) => void; done: () => void } {
  const tty = process.stderr.isTTY;
  let last = '';
  return {
    show(p) {
      const line = progressLine(p);
      if (line === last) return;
      last = line;
      if (tty) process.stderr.write(`\r${line}\x1b[K`);
      else say(line);
    },
    done() {
      if (tty) process.stderr.write('\n');
    },
  };
}

async function waitWithProgress(handle: RunHandle): Promise<RunResult> {
  const progress = progressReporter();
  const result = await followRun(handle, progress.show);
  progress.done();
  return result;
}

function printRun(result: RunResult, json: boolean | undefined): void {
  if (json) printJson(result);
  else process.stdout.write(`${renderRunResult(result, runWebUiLink(settings, result.runId))}\n`);
  process.exitCode = exitCodeOf(result.status);
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const example = (text: string) => `\nExample:\n  ${text}\n`;

export function buildProgram(): Command {
  const program = new Command('br')
    .description('BenchRouter: run containerized LLM benchmarks on Temporal and Docker')
    .showHelpAfterError()
    .addHelpText('after', example('$ br run arith --model reference-acc80 --endpoint http://127.0.0.1:8399/v1'));

  program
    .command('validate')
    .description('check a benchmark directory against the contract and print every problem')
    .argument('<benchmark>', 'benchmark directory, or the name of a built-in benchmark')
    .option('--json', 'print problems as JSON')
    .addHelpText('after', example('$ br validate benchmarks/arith'))
    .action((arg: string, flags: { json?: boolean }) => {
      const outcome = inspectBenchmark(resolveBenchmarkDir(arg));
      if (flags.json) printJson({ valid: outcome.problems.length === 0, problems: outcome.problems });
      else if (outcome.problems.length === 0) process.stdout.write(`${arg}: valid (${outcome.benchmark!.tasks.length} tasks)\n`);
      else say(outcome.problems.map(formatProblem).join('\n'));
      if (outcome.problems.length) process.exitCode = EXIT_CODES.BAD_INPUT;
    });

  addRunFlags(program.command('submit').description('start a run and print its id without waiting'))
    .addHelpText('after', example('$ br submit arith --model gpt-4o-mini --endpoint https://api.openai.com/v1 --api-key-env OPENAI_API_KEY'))
    .action(async (arg: string, flags: RunFlags) => {
      const { spec } = await submitFromFlags(arg, flags);
      if (flags.json) printJson({ runId: spec.runId, webUi: runWebUiLink(settings, spec.runId) });
      else process.stdout.write(`${spec.runId}\n`);
    });

  addRunFlags(program.command('run').description('start a run (or a suite of runs), follow its progress and print the results table'), 'optional')
    .option('--suite <name>', 'run every benchmark of a suite under one parent (see benchmarks/suites.yaml)')
    .option('--suites <file>', 'a suites YAML file of your own (default ~/.benchrouter/suites.yaml)')
    .option('--only <benchmarks>', 'with --suite: only these benchmarks (comma-separated)')
    .option('--exclude <benchmarks>', 'with --suite: all but these benchmarks (comma-separated)')
    .option('--suite-parallel <n>', 'with --suite: benchmarks running at once', positiveInt, 2)
    .option('--output <dir>', 'also write the results as CSV and XLSX into this directory')
    .addHelpText('after', example('$ br run arith --model reference-acc80 --endpoint http://127.0.0.1:8399/v1 --concurrency 4 --output results/\n  $ br run --suite lite --model gpt-4o-mini --endpoint https://api.openai.com/v1 --api-key-env OPENAI_API_KEY'))
    .action(async (arg: string | undefined, flags: RunFlags & SuiteFlags & { output?: string }) => {
      if (flags.suite) {
        if (arg) throw new InputError([{ file: '--suite', field: '', message: `give a benchmark or --suite, not both (got "${arg}" and --suite ${flags.suite})` }]);
        return runSuite(flags);
      }
      if (!arg) throw new InputError([{ file: 'br run', field: '', message: 'expected a benchmark (a directory or a built-in name) or --suite <name>' }]);
      const { spec, handle } = await submitFromFlags(arg, flags);
      say(`run ${spec.runId}: ${spec.tasks.length * spec.options.repeats} jobs of ${spec.benchmark.name} against ${spec.model.name}`);
      say(`Web UI: ${runWebUiLink(settings, spec.runId)}`);
      const result = await waitWithProgress(handle);
      printRun(result, flags.json);
      if (flags.output) for (const file of await writeOutputDir([runResultView(result, 'results')], flags.output, result.runId)) say(`wrote ${file}`);
    });

  program
    .command('status')
    .description("show a run's state and progress")
    .argument('<run>', 'run id')
    .option('--json', 'print as JSON')
    .addHelpText('after', example('$ br status br-20261129-120000-a1b2c3'))
    .action(async (runId: string, flags: { json?: boolean }) => {
      const handle = await existingRun(runId);
      const description = await handle.describe();
      const workflowStatus = description.status.name;
      const progress = await queryProgress(handle).catch(() => undefined);
      const result = workflowStatus === 'COMPLETED' ? await handle.result() : undefined;
      if (flags.json) printJson({ runId, workflowStatus, status: result?.status ?? workflowStatus, progress });
      else {
        process.stdout.write(`${runId}: ${result?.status ?? workflowStatus}\n`);
        if (progress) process.stdout.write(`${progressLine(progress)}\n${table(['JOB', 'STATE'], progress.jobs.map((j) => [j.task, j.state]))}\n`);
      }
      if (result) process.exitCode = exitCodeOf(result.status);
    });

  addViewFlags(
    program
      .command('results')
      .description("print a finished run's results table")
      .argument('<run>', 'run id')
      .option('--json', 'print the whole result as JSON')
      .option('--wait', 'wait for a run that is still going'),
    'results',
  )
    .addHelpText('after', example('$ br results br-20261129-120000-a1b2c3 --format xlsx --out results.xlsx'))
    .action(async (runId: string, flags: ViewFlags & { json?: boolean; wait?: boolean }) => {
      const handle = await existingRun(runId);
      const { status } = await handle.describe();
      if (status.name === 'RUNNING' && !flags.wait) throw new ExitError(`run ${runId} is still running: see \`br status ${runId}\`, or add --wait`, EXIT_CODES.ERROR);
      if (status.name !== 'RUNNING' && status.name !== 'COMPLETED') throw new ExitError(`run ${runId} ended as ${status.name} without a result`, EXIT_CODES.ERROR);
      const result = await handle.result();
      if (flags.json || flags.format === 'table') printRun(result, flags.json);
      else {
        await emitViews([runResultView(result, 'results')], flags, runId, write);
        process.exitCode = exitCodeOf(result.status);
      }
    });

  program
    .command('list')
    .description('list recent runs')
    .option('--limit <n>', 'how many runs', positiveInt, 20)
    .option('--model <name>', 'only runs of this model')
    .option('--benchmark <name>', 'only runs of this benchmark')
    .option('--status <status>', 'only runs with this status (RUNNING, COMPLETED, PARTIAL, FAILED, CANCELLED)')
    .option('--json', 'print as JSON')
    .addHelpText('after', example('$ br list --model reference-acc80 --status COMPLETED'))
    .action(async (flags: { limit: number; json?: boolean; model?: string; benchmark?: string; status?: string }) => {
      const runs = await listRuns(await temporal(false), flags.limit, { model: flags.model, benchmark: flags.benchmark, status: flags.status?.toUpperCase() });
      if (flags.json) printJson(runs);
      else process.stdout.write(`${table(['RUN', 'STATUS', 'BENCHMARK', 'MODEL', 'STARTED'], runs.map((r) => [r.runId, r.status, r.benchmark, r.model, r.startTime]))}\n`);
    });

  program
    .command('retry')
    .description('start a new run of the jobs that did not succeed, carrying the succeeded results over')
    .argument('<run>', 'run id of a finished run')
    .option('--json', 'print the result as JSON')
    .option('--no-wait', 'print the new run id and return')
    .addHelpText('after', example('$ br retry br-20261129-120000-a1b2c3'))
    .action(async (runId: string, flags: { json?: boolean; wait: boolean }) => {
      const original = await existingRun(runId);
      const { status } = await original.describe();
      if (status.name !== 'COMPLETED') throw new ExitError(`run ${runId} is ${status.name}: only a finished run can be retried`, EXIT_CODES.BAD_INPUT);
      const result = await original.result();
      const spec = createRetrySpec(await runSpecOf(original), result);
      if (spec.tasks.length === 0) {
        say(`run ${runId}: every job succeeded; nothing to retry`);
        return;
      }
      const handle = await submitRun(await temporal(true), settings, spec);
      say(`run ${spec.runId}: retrying ${spec.tasks.length} of ${result.jobs.length} jobs of ${runId} (${spec.retryOf!.carried.length} carried over)`);
      if (!flags.wait) {
        process.stdout.write(`${spec.runId}\n`);
        return;
      }
      printRun(await waitWithProgress(handle), flags.json);
    });

  program
    .command('rerun')
    .description('start a new run of every task of a run, on the definitions it pinned (with --cache, replaying its answers)')
    .argument('<run>', 'run id')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', example('$ br rerun br-20261129-120000-a1b2c3 --json'))
    .action(async (runId: string, flags: { json?: boolean }) => {
      const original = await existingRun(runId);
      const spec = createRerunSpec(await runSpecOf(original));
      const handle = await submitRun(await temporal(true), settings, spec);
      say(`run ${spec.runId}: rerun of ${runId}${spec.gateway.cache ? ' (cached answers replayed)' : ''}`);
      printRun(await waitWithProgress(handle), flags.json);
    });

  program
    .command('cancel')
    .description('cancel a run: stop its containers and keep the results already harvested')
    .argument('<run>', 'run id')
    .option('--json', 'print the final result as JSON')
    .addHelpText('after', example('$ br cancel br-20261129-120000-a1b2c3'))
    .action(async (runId: string, flags: { json?: boolean }) => {
      const handle = await existingRun(runId);
      await handle.cancel();
      say(`cancellation requested for ${runId}; waiting for its containers to stop`);
      printRun(await handle.result(), flags.json);
    });

  const images = program.command('images').description('image archives preloaded into DinD tasks');
  images
    .command('save')
    .description("write archives of host images into the preload cache, for tasks' docker_images")
    .argument('<image...>', 'image references on this host')
    .option('--json', 'print the archive paths as JSON')
    .addHelpText('after', example('$ br images save postgres:16 benchrouter-test/inner-service:1'))
    .action(async (refs: string[], flags: { json?: boolean }) => {
      const docker = new DockerEngine();
      const hostId = resolveHostId(settings.home);
      const missing: string[] = [];
      for (const image of refs) if (!(await docker.imageExists(image))) missing.push(image);
      if (missing.length) throw new ExitError(`not on this host's Docker daemon: ${missing.join(', ')} (nothing is pulled; build or load them first)`, EXIT_CODES.BAD_INPUT);
      const saved: Array<{ image: string; archive: string }> = [];
      for (const image of refs) {
        saved.push({ image, archive: await ensureImageArchive({ docker, imageCacheDir: settings.imageCacheDir, locksDir: settings.locksDir }, hostId, image) });
      }
      if (flags.json) printJson(saved);
      else for (const { image, archive } of saved) process.stdout.write(`${image}\t${archive}\n`);
    });

  program
    .command('up')
    .description('start the embedded Temporal dev server (with Web UI) and a background worker')
    .addHelpText('after', example('$ br up'))
    .action(async () => {
      if (!settings.embedded) throw new ExitError(`TEMPORAL_ADDRESS is set (${settings.temporalAddress}): nothing embedded to start`, EXIT_CODES.BAD_INPUT);
      await startEmbeddedServer(settings, say);
      startBackgroundWorker(settings, say);
      say(`ready: Temporal ${settings.temporalAddress}, Web UI ${settings.webUiUrl}`);
    });

  program
    .command('down')
    .description('stop the embedded Temporal dev server and the background worker')
    .addHelpText('after', example('$ br down'))
    .action(async () => stopEmbedded(settings, say));

  program
    .command('worker')
    .description("run this host's worker in the foreground: the shared queue and the host's own queue")
    .addHelpText('after', example('$ BENCHROUTER_HOST_ID=gpu-box-1 TEMPORAL_ADDRESS=temporal.internal:7233 br worker'))
    .action(async () => {
      const hostId = resolveHostId(settings.home);
      const worker = await startWorker({ settings, hostId, workflowBundlePath: process.env.BENCHROUTER_WORKFLOW_BUNDLE, say });
      say(`worker on host ${hostId}: polling ${settings.sharedQueue} and ${worker.hostQueue} at ${settings.temporalAddress}`);
      await worker.done;
    });

  program
    .command('codec-server')
    .description('serve /encode and /decode so the Temporal Web UI can show encrypted payloads')
    .option('--port <n>', 'port on 127.0.0.1', positiveInt, 8888)
    .option('--ui-origin <url>', 'the Web UI origin allowed to call it', settings.webUiUrl)
    .addHelpText('after', example('$ BENCHROUTER_PAYLOAD_KEY=... br codec-server --port 8888   # then start-dev --ui-codec-endpoint http://127.0.0.1:8888'))
    .action(async (flags: { port: number; uiOrigin: string }) => {
      const [codec] = payloadCodecsFromEnv();
      if (!codec) throw new ExitError('BENCHROUTER_PAYLOAD_KEY is not set: there is nothing to decode with', EXIT_CODES.BAD_INPUT);
      await startCodecServer(codec, { port: flags.port, allowOrigin: flags.uiOrigin });
      say(`codec server on http://127.0.0.1:${flags.port} for ${flags.uiOrigin}`);
      await new Promise(() => undefined);
    });

  program
    .command('reference-model')
    .description('serve the deterministic OpenAI-compatible reference model')
    .option('--port <n>', 'port on 127.0.0.1', positiveInt, 8399)
    .addHelpText('after', example('$ br reference-model --port 8399'))
    .action(async (flags: { port: number }) => {
      const server = await startReferenceModel({ port: flags.port, recordRequests: false });
      say(`reference model listening on ${server.url}`);
      await new Promise(() => undefined);
    });

  program
    .command('demo')
    .description('run the built-in arith benchmark against the reference model on the embedded default')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', example('$ npm run demo'))
    .action(async (flags: { json?: boolean }) => {
      const model = await startReferenceModel({ port: 0, recordRequests: false });
      try {
        say(`reference model on ${model.url}`);
        const { spec, handle } = await submitFromFlags('arith', { model: 'reference-acc80', endpoint: model.url, concurrency: 8, json: flags.json, gateway: true, gen: [], repeats: 1 });
        say(`run ${spec.runId}: ${spec.tasks.length} jobs of arith against reference-acc80 (the first run builds the image)`);
        printRun(await waitWithProgress(handle), flags.json);
      } finally {
        await model.close();
      }
    });

  addViewFlags(
    program
      .command('compare')
      .description('one table of several runs: benchmarks and tasks as rows, one column per model')
      .argument('<run...>', 'run ids'),
    'compare',
  )
    .addHelpText('after', example('$ br compare br-20261129-120000-a1b2c3 br-20261129-130000-d4e5f6 --format md'))
    .action(async (runIds: string[], flags: ViewFlags) => {
      const client = await temporal(false);
      for (const runId of runIds) if (!(await runExists(runHandle(client, runId)))) throw new ExitError(`run ${runId} not found in namespace ${settings.temporalNamespace}`, EXIT_CODES.BAD_INPUT);
      await emitViews([compareView(await runResults(client, runIds))], flags, 'compare', write);
    });

  addViewFlags(
    program
      .command('leaderboard')
      .description('the latest (or best) finished result per model and benchmark, across every run in the cluster')
      .option('--benchmark <name>', 'only this benchmark')
      .option('--suite <name>', "only this suite's benchmarks")
      .option('--suites <file>', 'a suites YAML file of your own (default ~/.benchrouter/suites.yaml)')
      .addOption(new Option('--pick <which>', 'which run a cell shows').choices(['latest', 'best']).default('latest')),
    'leaderboard',
  )
    .addHelpText('after', example('$ br leaderboard --pick best --format xlsx --out leaderboard.xlsx'))
    .action(async (flags: ViewFlags & { benchmark?: string; suite?: string; suites?: string; pick: 'latest' | 'best' }) => {
      let entries = await finishedRuns(await temporal(false), { benchmark: flags.benchmark });
      if (flags.suite) {
        const names = new Set(findSuite(flags.suite, flags.suites).entries.flatMap(entryNames));
        entries = entries.filter((e) => names.has(e.benchmark));
      }
      await emitViews([leaderboardView(buildLeaderboard(entries, flags.pick))], flags, 'leaderboard', write);
    });

  registerArtifactCommands(program, { artifactsRoot: () => settings.artifactsRoot });
  registerBenchmarksCommand(program, { benchmarksDir: path.join(repoRoot, 'benchmarks'), stdout: write });
  registerAnalyzeCommand(program, {
    stdout: write,
    say,
    runRecords: async (runs) => recordsOfRuns(await temporal(false), settings.artifactsRoot, runs),
  });
  return program;
}

async function main(): Promise<void> {
  const program = buildProgram();
  program.exitOverride();
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode = error.exitCode === 0 ? 0 : EXIT_CODES.BAD_INPUT;
    } else if (error instanceof InputError) {
      say(error.message);
      process.exitCode = EXIT_CODES.BAD_INPUT;
    } else if (error instanceof ExitError) {
      say(`br: ${error.message}`);
      process.exitCode = error.code;
    } else {
      say(`br: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = EXIT_CODES.ERROR;
    }
  }
}

await main();

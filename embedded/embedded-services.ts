// The embedded default (docs/operations.md): with no Temporal address configured, `br` runs a local
// `temporal server start-dev` persisted under the BenchRouter home, with the Web UI on, a background
// worker and (from `br up`) the API server. All are detached processes tracked by pid files
// (embedded/background-process.ts).

import { REPO_ROOT } from '../config/repository.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { DEV_SERVER_SEARCH_ATTRIBUTE_ARGS, SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { DEFAULT_API_PORT, DEFAULT_GATEWAY_PORT, EMBEDDED_TEMPORAL_PORT, EMBEDDED_UI_PORT, type Settings } from '../config/settings.js';
import { temporalConnectionOptions } from '../config/temporal-connection.js';
import { workerIdentity } from '../runs/worker-identity.js';
import { ensureHomeDir, keepOutputTail, pidInFile, processRuns, stopProcess, waitUntilReady, type StartedProcess } from './background-process.js';
import { queueState } from '../client/run-health.js';
import { connectClient } from '../client/runs.js';
import { trimVisibilityIndexes } from './dev-server-store.js';

/**
 * SQLite settings for the embedded dev server: write-ahead logging with normal sync survives a
 * crash of any process (only a power loss can lose the last commits) and costs the server about
 * 40% less CPU per job than the default rollback journal (perf/overhead).
 */
export const DEV_SERVER_SQLITE_ARGS = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'];

/** `--dynamic-config-value` arguments of the dev server, one per `key=JSON value` setting. */
function dynamicConfigArgs(...settings: string[]): string[] {
  return settings.flatMap((setting) => ['--dynamic-config-value', setting]);
}

/**
 * How often the history service may read its task queues (transfer: workflow and activity tasks, child
 * starts, signals; timer; visibility). The default, 20 reads a second, makes every hop wait for the
 * next read: measured, a one-job run spent 450 of its 635 ms in such waits (~45 ms at each of ten
 * hops); with this, 198 ms. The reads are still made only when there are tasks to read.
 * cluster/temporal/dynamic-config.yaml sets the same for the cluster.
 */
export const QUEUE_READ_RATE_ARGS = dynamicConfigArgs(
  'history.transferProcessorMaxPollRPS=10000',
  'history.timerProcessorMaxPollRPS=10000',
  'history.visibilityProcessorMaxPollRPS=10000',
);

/**
 * How often the history service checkpoints each of its task queues: drops the tasks done since the
 * last checkpoint from the queue's in-memory tracker, and deletes them from the database. Every read of
 * new tasks merges a slice into the tracker, and once a checkpoint has narrowed a slice to the workflows
 * still pending in it, each merge walks every task the tracker holds, done or not (Temporal's
 * service/history/queues slice.go and tracker.go). At the default (30 s) a busy server's tracker held
 * half a minute of tasks: the dev server, profiled with `perf` after 1,200 no-op jobs, spent 12% of its
 * CPU in that walk (executableTracker.split); with a checkpoint each second, none after as many (server
 * CPU a job 30-33 -> 27-28 ms, those runs). Costs an idle server ~4 ms of CPU a second; the shard's own
 * record is still written only every 1,000 tasks or 5 minutes. cluster/temporal/dynamic-config.yaml
 * sets the same.
 */
export const QUEUE_CHECKPOINT_ARGS = dynamicConfigArgs(
  'history.transferProcessorUpdateAckInterval="1s"',
  'history.timerProcessorUpdateAckInterval="1s"',
  'history.visibilityProcessorUpdateAckInterval="1s"',
);

/**
 * Eager activity dispatch: a job's first attempt, scheduled on the workflow's own queue, comes back in
 * the reply to the workflow task that scheduled it, to the worker that sent it (no trip through
 * matching: ~20 ms and a poll less per job). Off in the server by default; the cluster's dynamic
 * config turns it on too.
 */
export const EAGER_ACTIVITY_ARGS = dynamicConfigArgs('system.enableActivityEagerExecution=true');

/**
 * The search attributes' definitions cached in each of the server's services (re-read each minute),
 * not read from the database at every use: the dev server turns that cache off by default, and a job
 * then cost ~6.6 reads of the cluster's metadata (one per search-attribute lookup: starting a child,
 * writing each visibility record), ~1.5 ms of server CPU a job (the server restarted with and without
 * it, in turn). The attributes `--search-attribute` registers are written with the database, before any service reads them; one
 * registered later (ensureSearchAttributes) is not seen until the cache expires, so the server is
 * restarted after that (startEmbeddedServer).
 */
export const SEARCH_ATTRIBUTE_CACHE_ARGS = dynamicConfigArgs('system.forceSearchAttributesCacheRefreshOnRead=false');

/**
 * The Go runtime's settings for the embedded dev server, unless the environment sets them already.
 * It shares its machine with the worker and the task containers, and its CPU per job is what a run
 * pays beyond Docker's own work (perf/overhead). Measured on 2 cores (100 no-op jobs, three runs each
 * way, twice): one processor instead of two cut its CPU per job ~10% (32.3 -> 29.0 ms: fewer scheduler
 * threads spinning and waking each other for a server that uses a third of a core), and collecting at
 * 400% heap growth instead of 100% a further ~5% (30.2 -> 28.7 ms; 5 collections instead of 20 in the
 * same work, resident memory ~230 -> ~400 MB), capped by a soft memory limit of 1 GiB. Half the cores
 * (at least one) keeps a bigger machine's server parallel.
 */
export function devServerEnv(): NodeJS.ProcessEnv {
  return {
    GOMAXPROCS: String(Math.max(1, Math.floor(os.availableParallelism() / 2))),
    GOGC: '400',
    GOMEMLIMIT: '1GiB',
    ...process.env,
  };
}

export function isReachable(address: string, timeoutMs = 1000): Promise<boolean> {
  const [host = '127.0.0.1', port = '7233'] = address.split(':');
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * A TCP port that nothing on this machine is bound to right now, for a process started next to listen on.
 *
 * It is drawn at random from outside the kernel's ephemeral range (net.ipv4.ip_local_port_range), not asked of
 * the kernel with port 0: the kernel hands ports of that range to every outgoing connection and every
 * `listen(0)`, so a port it gave out and took back here could be another connection's local port by the time
 * the process binds it (a parallel test's gateway failed with EADDRINUSE that way). Outside the range only
 * explicit binds compete, and a random draw keeps two callers apart (freePortRange). 0.0.0.0 is tested: a
 * listener on any IPv4 address of this machine takes it there.
 */
export async function freePort(): Promise<number> {
  const [bottom, top] = freePortRange();
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = bottom + Math.floor(Math.random() * (top - bottom + 1));
    if (!FIXED_PORTS.has(port) && !(await portTaken('0.0.0.0', port))) return port;
  }
  throw new Error(`no free TCP port in ${bottom}-${top} after 100 tries (is this machine out of ports?)`);
}

/** How many ports freePort draws from. */
const FREE_PORT_SPAN = 12_000;
/** BenchRouter's fixed default ports, never handed out: a `br up` beside the tests would find them taken. */
const FIXED_PORTS = new Set([EMBEDDED_TEMPORAL_PORT, EMBEDDED_UI_PORT, DEFAULT_GATEWAY_PORT, DEFAULT_API_PORT]);

/**
 * The ports freePort draws from: FREE_PORT_SPAN below the kernel's ephemeral range, or above it where too few
 * lie below; the whole unprivileged range where the ephemeral range takes nearly all of it (then the race
 * above is back, and nothing better can be had).
 */
export function freePortRange(): [number, number] {
  let [low, high] = [49_152, 65_535]; // IANA's dynamic range, which macOS and Windows use
  try {
    const [start, end] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(start) && Number.isInteger(end) && start! <= end!) [low, high] = [start!, end!];
  } catch {
    // Not Linux: the IANA range.
  }
  const room = 4_000;
  if (low - 1024 >= room) return [Math.max(1024, low - FREE_PORT_SPAN), low - 1];
  if (65_535 - high >= room) return [high + 1, Math.min(65_535, high + FREE_PORT_SPAN)];
  return [1024, 65_535];
}

/** What /proc/<pid>/cmdline holds for each detached process, so a recycled pid is not taken for it. */
const COMMAND_MARKERS = { worker: 'bin.ts\0worker', temporal: 'temporal', api: 'bin.ts\0serve' } as const;

type Detached = keyof typeof COMMAND_MARKERS;

function pidFileOf(settings: Settings, name: Detached): string {
  return path.join(settings.home, `${name}.pid`);
}

function liveProcess(settings: Settings, name: Detached): number | undefined {
  const pid = pidInFile(pidFileOf(settings, name));
  return pid !== undefined && processRuns(pid, COMMAND_MARKERS[name]) ? pid : undefined;
}

/** Starts a detached process logging to `<name>.log`; its pid, and where in the log its own lines begin. */
function startDetached(
  settings: Settings,
  name: Detached,
  command: string,
  args: string[],
  say: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): StartedProcess {
  ensureHomeDir(settings.home);
  const pidFile = pidFileOf(settings, name);
  const stale = pidInFile(pidFile);
  if (stale !== undefined) say(`${pidFile} named pid ${stale}, which is not a running ${name} (stale): replacing it`);
  const logFile = path.join(settings.home, `${name}.log`);
  const logFrom = existsSync(logFile) ? statSync(logFile).size : 0;
  const log = openSync(logFile, 'a');
  const child = spawn(command, args, { detached: true, stdio: ['ignore', log, log], cwd: REPO_ROOT, env });
  closeSync(log);
  child.unref();
  writeFileSync(pidFile, String(child.pid));
  return { pid: child.pid!, logFile, logFrom };
}

/**
 * Registers BenchRouter's search attributes where they are missing. `start-dev --search-attribute`
 * registers them only when it creates the database, so an older embedded database needs this.
 */
export async function ensureSearchAttributes(settings: Settings): Promise<string[]> {
  const connection = await Connection.connect(temporalConnectionOptions(settings.temporalAddress, settings.temporalTls));
  try {
    const namespace = settings.temporalNamespace;
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.values(SEARCH_ATTRIBUTES).filter((key) => !(key.name in (customAttributes ?? {})));
    if (missing.length === 0) return [];
    const { IndexedValueType } = proto.temporal.api.enums.v1;
    const indexedType = (key: (typeof missing)[number]) =>
      key.type === 'DOUBLE' ? IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, indexedType(key)])),
    });
    return missing.map((key) => key.name);
  } finally {
    await connection.close();
  }
}

/**
 * `temporal server start-dev` arguments: loopback, a SQLite file with BenchRouter's pragmas and its
 * search attributes; the Web UI on `uiPort`, or none (tests and perf runs).
 */
export function devServerArgs(port: number, dbFile: string, options: { uiPort?: number; logLevel?: string } = {}): string[] {
  return [
    'server',
    'start-dev',
    '--db-filename',
    dbFile,
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    ...(options.uiPort ? ['--ui-port', String(options.uiPort)] : ['--headless']),
    '--log-level',
    options.logLevel ?? 'error',
    ...DEV_SERVER_SQLITE_ARGS,
    ...DEV_SERVER_SEARCH_ATTRIBUTE_ARGS,
    ...QUEUE_READ_RATE_ARGS,
    ...QUEUE_CHECKPOINT_ARGS,
    ...EAGER_ACTIVITY_ARGS,
    ...SEARCH_ATTRIBUTE_CACHE_ARGS,
  ];
}

/** Resolves once `address` accepts connections; false after `timeoutMs`. */
export async function waitUntilReachable(address: string, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await isReachable(address))) {
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
  return true;
}

/** How long a starting dev server may take to answer: it opens (and may migrate) its database first, slow on a loaded machine. */
const DEV_SERVER_START_TIMEOUT_MS = 60_000;

/**
 * A headless dev server on `port` persisted to `dbFile`, as it is: see startDevServer. Its stderr, where
 * Temporal says why it cannot start, is drained and its last lines kept for the caller's error.
 */
function spawnTemporal(port: number, dbFile: string): { child: ChildProcess; stderrTail: () => string } {
  const child = spawn('temporal', devServerArgs(port, dbFile), { stdio: ['ignore', 'ignore', 'pipe'], env: devServerEnv() });
  return { child, stderrTail: keepOutputTail(child.stderr) };
}

/**
 * Readies the database file of a dev server started with devServerArgs: a missing one is created by a
 * first start of that server (Temporal writes its schema and BenchRouter's search attributes), stopped
 * once it answers; then its visibility indexes are trimmed (embedded/dev-server-store.ts). No server may
 * have the file open.
 */
export async function prepareEmbeddedDatabase(dbFile: string, say: (line: string) => void = () => undefined): Promise<void> {
  if (!existsSync(dbFile)) {
    // The dev server does not create the database's folder: on a new machine ~/.benchrouter is not there yet.
    ensureHomeDir(path.dirname(dbFile));
    await createDatabase(dbFile);
  }
  const outcome = trimVisibilityIndexes(dbFile);
  if ('skipped' in outcome) say(`${dbFile}: keeping all of Temporal's visibility indexes (${outcome.skipped}); each job costs the server more to record`);
  else if (outcome.dropped.length > 0) say(`${dbFile}: dropped ${outcome.dropped.length} visibility indexes no query uses (docs/operations.md)`);
}

async function createDatabase(dbFile: string): Promise<void> {
  const port = await freePort();
  const server = spawnTemporal(port, dbFile);
  try {
    await untilAnswering(server, port, `creating ${dbFile}: the Temporal dev server`);
  } finally {
    await stopTemporal(server.child);
  }
}

/**
 * Resolves once the dev server answers on `port`; throws, saying why, when it could not be started, exited
 * first (with what it said), or did not answer within DEV_SERVER_START_TIMEOUT_MS. `what` opens the message.
 */
async function untilAnswering({ child, stderrTail }: ReturnType<typeof spawnTemporal>, port: number, what: string): Promise<void> {
  // What ended the process, once it has and its stderr is read to the end: how it exited, or the
  // spawn's error (no `temporal` on PATH).
  let ended: Error | string | undefined;
  child.once('close', (code, signal) => void (ended ??= signal ? `signal ${signal}` : `exit code ${code}`));
  child.once('error', (error) => void (ended = error));
  const failure = (why: string) => new Error(`${what} ${why}`);
  const deadline = Date.now() + DEV_SERVER_START_TIMEOUT_MS;
  while (!(await waitUntilReachable(`127.0.0.1:${port}`, 1_000))) {
    if (ended instanceof Error) throw failure(`could not be started (${ended.message})`);
    if (ended) throw failure(`exited (${ended}) before it answered; it said:\n${stderrTail() || '(nothing)'}`);
    if (Date.now() > deadline)
      throw failure(`did not answer on 127.0.0.1:${port} within ${DEV_SERVER_START_TIMEOUT_MS / 1000} s; it said:\n${stderrTail() || '(nothing)'}`);
  }
}

/** SIGTERM, then SIGKILL after 15 s; resolves once the process is gone. */
async function stopTemporal(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await gone;
  clearTimeout(killer);
}

/**
 * A headless dev server of BenchRouter's settings on `port`, its database readied first as `br up`
 * readies it (prepareEmbeddedDatabase): the test suite's, perf stacks' and the history recorder's.
 * Resolves once it answers, given as long as `br up` gives one (a loaded machine opens the database
 * slowly); a server that does not is stopped, and the error says why, with what it printed.
 */
export async function startDevServer(port: number, dbFile: string): Promise<ChildProcess> {
  await prepareEmbeddedDatabase(dbFile);
  const server = spawnTemporal(port, dbFile);
  try {
    await untilAnswering(server, port, `the Temporal dev server on 127.0.0.1:${port} (database ${dbFile})`);
  } catch (error) {
    await stopTemporal(server.child);
    throw error;
  }
  return server.child;
}

export async function startEmbeddedServer(settings: Settings, say: (line: string) => void): Promise<void> {
  // A running server was started by `br` (below), which registered the search attributes then.
  if (await isReachable(settings.temporalAddress)) return;
  const db = path.join(settings.home, 'temporal.db');
  say(`starting Temporal dev server on ${settings.temporalAddress} (database ${db}, Web UI ${settings.webUiUrl})`);
  const port = Number(settings.temporalAddress.split(':')[1]) || EMBEDDED_TEMPORAL_PORT;
  const uiPort = Number(new URL(settings.webUiUrl).port) || EMBEDDED_UI_PORT;
  const start = async () => {
    const server = startDetached(settings, 'temporal', 'temporal', devServerArgs(port, db, { uiPort, logLevel: 'warn' }), say, devServerEnv());
    await waitUntilReady(server, 'the Temporal dev server', () => isReachable(settings.temporalAddress), {
      timeoutMs: DEV_SERVER_START_TIMEOUT_MS,
      waitingFor: `it answered on ${settings.temporalAddress}`,
      stillRunning: 'it keeps running, `br down` stops it',
      onExit: () => rmSync(pidFileOf(settings, 'temporal'), { force: true }),
    });
  };
  await prepareEmbeddedDatabase(db, say);
  await start();
  const added = await ensureSearchAttributes(settings);
  if (added.length === 0) return;
  // The services cache the attributes' definitions (SEARCH_ATTRIBUTE_CACHE_ARGS): a restart has them all read the new ones now.
  say(`registered search attributes ${added.join(', ')}; restarting the dev server so that every service sees them`);
  await stopProcess('temporal', pidFileOf(settings, 'temporal'), say, { commandMarker: COMMAND_MARKERS.temporal });
  await start();
}

export function backgroundWorkerPid(settings: Settings): number | undefined {
  return liveProcess(settings, 'worker');
}

export function apiServerPid(settings: Settings): number | undefined {
  return liveProcess(settings, 'api');
}

/** `br serve` on the fixed API port, detached like the worker, so the dashboard link stays the same; undefined when one runs. */
export function startApiServer(settings: Settings, say: (line: string) => void): StartedProcess | undefined {
  if (apiServerPid(settings)) return undefined;
  const api = startDetached(
    settings,
    'api',
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'cli/bin.ts'), 'serve', '--port', String(settings.apiPort)],
    say,
  );
  say(`starting the API server and dashboard on port ${settings.apiPort}, pid ${api.pid} (log ${api.logFile})`);
  return api;
}

/** How long a starting API server may take to listen: it loads the CLI's sources first. */
export const API_START_TIMEOUT_MS = 60_000;

/** Resolves once the API server just started listens on its port; throws with its own last log lines when it exits first. */
export async function waitForApiServer(settings: Settings, api: StartedProcess): Promise<void> {
  await waitUntilReady(api, 'the API server', () => isReachable(`127.0.0.1:${settings.apiPort}`), {
    timeoutMs: API_START_TIMEOUT_MS,
    waitingFor: `it listened on port ${settings.apiPort}`,
    stillRunning: 'it keeps running, `br down` stops it',
    onExit: () => rmSync(pidFileOf(settings, 'api'), { force: true }),
  });
}

/**
 * Whether something already listens on the address (binding is the only sure test). Other bind errors
 * (an address this machine does not have) are the worker's to report, in its own words.
 */
export function portTaken(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE'));
    server.listen(port, host, () => server.close(() => resolve(false)));
  });
}

/**
 * Throws when no live background worker is recorded and yet the gateway's port is taken: a worker
 * started now would die on it with only its log saying why (the port is fixed, see Settings).
 */
export async function refuseTakenGatewayPort(settings: Settings): Promise<void> {
  if (backgroundWorkerPid(settings) || !(await portTaken(settings.gatewayHost, settings.gatewayPort))) return;
  throw new Error(
    `cannot start the background worker: the model gateway's port ${settings.gatewayHost}:${settings.gatewayPort} is taken by another process (a leftover worker? \`ss -ltnp 'sport = :${settings.gatewayPort}'\` names it); stop it or set BENCHROUTER_GATEWAY_PORT`,
  );
}

/** How long a starting worker may take to poll: it bundles the workflows first, slow on a loaded machine. */
export const WORKER_START_TIMEOUT_MS = 120_000;

/**
 * Starts the background worker unless a live one is recorded, and waits until it is really working:
 * Temporal lists it (by its identity) polling the shared queue and its gateway accepts connections.
 * Throws with the worker's own last log lines when it exits or does not get there in time.
 */
export async function ensureBackgroundWorker(
  settings: Settings,
  hostId: string,
  say: (line: string) => void,
  timeoutMs = WORKER_START_TIMEOUT_MS,
): Promise<number> {
  const running = backgroundWorkerPid(settings);
  if (running) return running;
  await refuseTakenGatewayPort(settings);
  const worker = startDetached(settings, 'worker', process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'cli/bin.ts'), 'worker'], say);
  say(`starting a background worker, pid ${worker.pid} (log ${worker.logFile}); waiting until it polls`);
  const identity = workerIdentity(hostId, worker.pid);
  const client = await connectClient(settings);
  const polling = async () => {
    const { pollers } = await queueState(client, settings.temporalNamespace, settings.sharedQueue, 'workflow');
    return pollers.some((p) => p.identity === identity) && (await isReachable(`127.0.0.1:${settings.gatewayPort}`));
  };
  try {
    await waitUntilReady(worker, 'the background worker', polling, {
      timeoutMs,
      waitingFor: `it polled ${settings.sharedQueue}`,
      stillRunning: 'it keeps running, `br down` stops it',
      onExit: () => rmSync(pidFileOf(settings, 'worker'), { force: true }),
    });
    return worker.pid;
  } finally {
    await client.connection.close();
  }
}

/** Stops the background worker, then the embedded server: each gracefully, else with SIGKILL, and says which. */
export async function stopEmbedded(settings: Settings, say: (line: string) => void, graceMs?: number): Promise<void> {
  for (const name of ['api', 'worker', 'temporal'] as const) {
    const outcome = await stopProcess(name, pidFileOf(settings, name), say, { graceMs, commandMarker: COMMAND_MARKERS[name] });
    if (outcome === 'not-running') say(`${name}: not running`);
  }
}

// The embedded default (docs/operations.md): with no Temporal address configured, `br` runs a local
// `temporal server start-dev` persisted under the BenchRouter home, with the Web UI on, a background
// worker and (from `br up`) the API server. All are detached processes tracked by pid files.

import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { DEV_SERVER_SEARCH_ATTRIBUTE_ARGS, SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { EMBEDDED_TEMPORAL_PORT, EMBEDDED_UI_PORT, type Settings } from '../config/settings.js';

/**
 * SQLite settings for the embedded dev server: write-ahead logging with normal sync survives a
 * crash of any process (only a power loss can lose the last commits) and costs the server about
 * 40% less CPU per job than the default rollback journal (perf/overhead).
 */
export const DEV_SERVER_SQLITE_ARGS = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'];

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

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

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function pidAlive(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

function startDetached(settings: Settings, name: string, command: string, args: string[]): number {
  mkdirSync(settings.home, { recursive: true });
  const log = openSync(path.join(settings.home, `${name}.log`), 'a');
  const child = spawn(command, args, { detached: true, stdio: ['ignore', log, log], cwd: repoRoot, env: process.env });
  closeSync(log);
  child.unref();
  writeFileSync(path.join(settings.home, `${name}.pid`), String(child.pid));
  return child.pid!;
}

/**
 * Registers BenchRouter's search attributes where they are missing. `start-dev --search-attribute`
 * registers them only when it creates the database, so an older embedded database needs this.
 */
export async function ensureSearchAttributes(settings: Settings): Promise<void> {
  const connection = await Connection.connect({ address: settings.temporalAddress });
  try {
    const namespace = settings.temporalNamespace;
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.values(SEARCH_ATTRIBUTES).filter((key) => !(key.name in (customAttributes ?? {})));
    if (missing.length === 0) return;
    // temporal.api.enums.v1.IndexedValueType: KEYWORD 2, DOUBLE 4.
    const indexedType = (key: (typeof missing)[number]) => (key.type === 'DOUBLE' ? 4 : 2);
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map((key) => [key.name, indexedType(key)])) });
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
    'server', 'start-dev',
    '--db-filename', dbFile,
    '--ip', '127.0.0.1',
    '--port', String(port),
    ...(options.uiPort ? ['--ui-port', String(options.uiPort)] : ['--headless']),
    '--log-level', options.logLevel ?? 'error',
    ...DEV_SERVER_SQLITE_ARGS,
    ...DEV_SERVER_SEARCH_ATTRIBUTE_ARGS,
  ];
}

/** Resolves once `address` accepts connections; false after `timeoutMs`. */
export async function waitUntilReachable(address: string, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await isReachable(address))) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
  return true;
}

export async function startEmbeddedServer(settings: Settings, say: (line: string) => void): Promise<void> {
  // A running server was started by `br` (below), which registered the search attributes then.
  if (await isReachable(settings.temporalAddress)) return;
  const db = path.join(settings.home, 'temporal.db');
  say(`starting Temporal dev server on ${settings.temporalAddress} (database ${db}, Web UI ${settings.webUiUrl})`);
  startDetached(settings, 'temporal', 'temporal', devServerArgs(EMBEDDED_TEMPORAL_PORT, db, { uiPort: EMBEDDED_UI_PORT, logLevel: 'warn' }));
  if (!(await waitUntilReachable(settings.temporalAddress))) {
    throw new Error(`the Temporal dev server did not answer on ${settings.temporalAddress} within 30 s; see ${path.join(settings.home, 'temporal.log')}`);
  }
  await ensureSearchAttributes(settings);
}

export function backgroundWorkerPid(settings: Settings): number | undefined {
  return pidAlive(path.join(settings.home, 'worker.pid'));
}

export function startBackgroundWorker(settings: Settings, say: (line: string) => void): void {
  if (backgroundWorkerPid(settings)) return;
  say(`starting a background worker (log ${path.join(settings.home, 'worker.log')})`);
  startDetached(settings, 'worker', process.execPath, ['--import', 'tsx', path.join(repoRoot, 'cli/bin.ts'), 'worker']);
}

export function apiServerPid(settings: Settings): number | undefined {
  return pidAlive(path.join(settings.home, 'api.pid'));
}

/** `br serve` on the fixed API port, detached like the worker, so the dashboard link stays the same. */
export function startApiServer(settings: Settings, say: (line: string) => void): void {
  if (apiServerPid(settings)) return;
  say(`starting the API server and dashboard on port ${settings.apiPort} (log ${path.join(settings.home, 'api.log')})`);
  startDetached(settings, 'api', process.execPath, ['--import', 'tsx', path.join(repoRoot, 'cli/bin.ts'), 'serve', '--port', String(settings.apiPort)]);
}

export async function stopEmbedded(settings: Settings, say: (line: string) => void): Promise<void> {
  for (const name of ['api', 'worker', 'temporal']) {
    const pidFile = path.join(settings.home, `${name}.pid`);
    const pid = pidAlive(pidFile);
    if (pid) {
      say(`stopping ${name} (pid ${pid})`);
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 100 && pidAlive(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
    }
    rmSync(pidFile, { force: true });
  }
}

// The path a new user takes, on a machine where BenchRouter never ran: `br up`, `br run arith`, `br down`
// with a home (and HOME) that do not exist yet, so every directory BenchRouter writes to is made on first
// use; and a dev server that cannot start, reported in Temporal's own words.

import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, prepareEmbeddedDatabase } from '../embedded/embedded-services.js';
import { startReferenceModel, type ReferenceModelServer } from '../reference-model/reference-model-server.js';
import { br } from './support/harness.js';

/** An embedded setup of its own (ports, queue, host id) in a home that does not exist yet. */
async function newcomerEnv(root: string): Promise<Record<string, string>> {
  const { TEMPORAL_ADDRESS: _configured, ...rest } = process.env;
  return {
    ...(rest as Record<string, string>),
    HOME: path.join(root, 'home'),
    BENCHROUTER_HOME: path.join(root, 'home', '.benchrouter'),
    BENCHROUTER_EMBEDDED_PORT: String(await freePort()),
    BENCHROUTER_EMBEDDED_UI_PORT: String(await freePort()),
    BENCHROUTER_GATEWAY_PORT: String(await freePort()),
    BENCHROUTER_API_PORT: String(await freePort()),
    BENCHROUTER_TASK_QUEUE: `newcomer-${process.pid}`,
    BENCHROUTER_HOST_ID: `newcomer-${process.pid}`,
  };
}

describe('a newcomer on a machine where BenchRouter never ran', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'br-test-newcomer-'));
  let model: ReferenceModelServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    model = await startReferenceModel({ port: 0 });
    env = await newcomerEnv(root);
  });

  afterAll(async () => {
    await br(['down', '--grace', '2'], env);
    await model.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('br up, br run arith and br down work with a home that does not exist yet', { timeout: 300_000 }, async () => {
    expect(existsSync(env.HOME!)).toBe(false);
    const up = await br(['up'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stderr).toContain('ready:');
    // Made on first use, readable by its owner only: it holds the API token and the database.
    expect(statSync(env.BENCHROUTER_HOME!).mode & 0o777).toBe(0o700);

    const run = await br(['run', 'arith', '--model', 'reference-acc80', '--endpoint', model.url, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { status: string; overall: number; jobs: Array<{ task: string; result: { overall: number } }> };
    expect(result.status).toBe('COMPLETED');
    expect(result.overall).toBeCloseTo(0.8, 10);
    expect(Object.fromEntries(result.jobs.map((j) => [j.task, j.result.overall]))).toEqual({ addition: 0.85, multiplication: 0.75 });

    const down = await br(['down'], env);
    expect(down.code, down.stderr).toBe(0);
    expect(down.stderr).toMatch(/temporal \(pid \d+\) stopped/);
  });

  it('a database the dev server cannot open: br up exits 1 with Temporal own reason and its log', { timeout: 120_000 }, async () => {
    const broken = await newcomerEnv(path.join(root, 'broken'));
    // A folder where the database file should be: the server cannot open it.
    mkdirSync(path.join(broken.BENCHROUTER_HOME!, 'temporal.db'), { recursive: true });
    const up = await br(['up'], broken);
    expect(up.code, up.stderr).toBe(1);
    expect(up.stderr).toContain('the Temporal dev server (pid');
    expect(up.stderr).toContain(
      `exited before it answered on 127.0.0.1:${broken.BENCHROUTER_EMBEDDED_PORT}; the end of ${broken.BENCHROUTER_HOME}/temporal.log:`,
    );
    expect(up.stderr).toContain('unable to open database file');
    expect(existsSync(path.join(broken.BENCHROUTER_HOME!, 'temporal.pid'))).toBe(false);
  });

  it('creating a database where none can be made fails with Temporal own reason', { timeout: 60_000 }, async () => {
    // /proc/1 exists but takes no new files: the folder is there, the database cannot be made in it.
    await expect(prepareEmbeddedDatabase('/proc/1/benchrouter-temporal.db')).rejects.toThrow(
      /creating \/proc\/1\/benchrouter-temporal\.db: the Temporal dev server exited \(exit code 1\) before it answered; it said:\nError: failed starting server: .*unable to open database file/,
    );
  });
});

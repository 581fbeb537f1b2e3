// The embedded dev server caches search attributes' definitions in each of its services, so one
// registered on a running server is not usable at once. `br up` on a database made before BenchRouter
// had its attributes (an older home) registers the missing ones and restarts the server: a run started
// right after carries them, and listing by them finds it.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startEmbeddedServer, stopEmbedded, waitUntilReachable } from '../embedded/embedded-services.js';
import { settingsFrom } from '../config/settings.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';

describe('the embedded server on a database without BenchRouter search attributes', () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'br-test-attributes-'));
  const lines: string[] = [];
  let settings: ReturnType<typeof settingsFrom>;

  afterAll(async () => {
    if (settings) await stopEmbedded(settings, () => undefined, 5_000);
    rmSync(home, { recursive: true, force: true });
  });

  it('registers them, restarts, and a workflow started at once carries them and is listed by them', { timeout: 120_000 }, async () => {
    const port = await freePort();
    // An older home: a database created by a dev server without BenchRouter's attributes.
    const plain = spawn(
      'temporal',
      ['server', 'start-dev', '--db-filename', path.join(home, 'temporal.db'), '--ip', '127.0.0.1', '--port', String(port), '--headless'],
      {
        stdio: 'ignore',
      },
    );
    expect(await waitUntilReachable(`127.0.0.1:${port}`, 60_000)).toBe(true);
    const exited = new Promise((resolve) => plain.once('exit', resolve));
    plain.kill('SIGTERM');
    await exited;

    settings = settingsFrom(
      { BENCHROUTER_HOME: home, BENCHROUTER_EMBEDDED_PORT: String(port), BENCHROUTER_EMBEDDED_UI_PORT: String(await freePort()) },
      os.homedir(),
    );
    await startEmbeddedServer(settings, (line) => lines.push(line));
    expect(lines.join('\n')).toContain(
      `registered search attributes ${Object.values(SEARCH_ATTRIBUTES)
        .map((key) => key.name)
        .join(', ')}; restarting the dev server`,
    );

    const connection = await Connection.connect({ address: settings.temporalAddress });
    try {
      const client = new Client({ connection });
      const model = `attributes-${process.pid}`;
      // No worker polls this queue: the workflow stays running, which is all listing needs.
      const handle = await client.workflow.start('noSuchWorkflow', {
        taskQueue: `attributes-${process.pid}`,
        workflowId: `attributes-${process.pid}`,
        typedSearchAttributes: [{ key: SEARCH_ATTRIBUTES.model, value: model }],
      });
      const listed = async () => {
        const ids: string[] = [];
        for await (const execution of client.workflow.list({ query: `${SEARCH_ATTRIBUTES.model.name} = '${model}'` })) ids.push(execution.workflowId);
        return ids;
      };
      const deadline = Date.now() + 10_000;
      let ids = await listed();
      while (ids.length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        ids = await listed();
      }
      expect(ids).toEqual([handle.workflowId]);
      await handle.terminate('test over');
    } finally {
      await connection.close();
    }
  });
});

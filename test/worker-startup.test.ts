// Starting a worker that cannot finish starting: what it opened before the failing step (the model
// gateway's port, the Temporal connection) is closed again, so `br worker` ends with its error instead
// of staying alive on the port. The real dev server; a Docker engine whose network step fails.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { DockerEngine } from '../activities/docker-engine.js';
import { settingsFrom } from '../config/settings.js';
import { startWorker } from '../workers/start-worker.js';

const home = mkdtempSync(path.join(os.tmpdir(), 'br-test-worker-startup-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** A Docker engine that answers, except that the task network cannot be made. */
class NoNetworkDocker extends DockerEngine {
  override async ensureNetwork(): Promise<never> {
    throw new Error('docker network benchrouter-tasks: refused by this test');
  }
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** True when something listens on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('a worker that fails to start', () => {
  it('closes its model gateway again, so its port is free and the process can end', async () => {
    const port = await freePort();
    const settings = settingsFrom(
      {
        BENCHROUTER_HOME: home,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        BENCHROUTER_TASK_QUEUE: `test-worker-startup-${randomBytes(3).toString('hex')}`,
        BENCHROUTER_GATEWAY_PORT: String(port),
        BENCHROUTER_GATEWAY_HOST: '127.0.0.1',
      },
      os.homedir(),
    );
    await expect(
      startWorker({ settings, hostId: 'host-worker-startup', docker: new NoNetworkDocker(), workflowBundlePath: inject('workflowBundlePath') }),
    ).rejects.toThrow('docker network benchrouter-tasks: refused by this test');
    expect(await listening(port)).toBe(false);
  });
});

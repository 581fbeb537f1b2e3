// What the @temporalio/worker patch gives up (patches/@temporalio+worker+1.24.0.patch): with the SDK's vm
// watchdog (isolateExecutionTimeout, 5 s by default) a workflow stuck in a synchronous loop has its workflow task
// failed after 5 s and the worker goes on; with the patch's 0, as BenchRouter's workers run, nothing stops it: it
// holds the worker's one workflow thread, and a second workflow on the same worker gets no turn. Starts a dev
// server, then for each setting a worker, the stuck workflow and, a second later, a quick one; prints how long the
// quick one took (or that it did not finish in 30 s) and what the stuck one's history holds; the worker's core logs
// "[TMPRL1104] ... Workflow task duration exceeded 5 seconds" on stderr either way.
//
//   npm run perf:sandbox-guard

import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDevServer } from '../embedded/embedded-services.js';
import { freePort, stopProcess } from './perf-support.js';

const WAIT_MS = 30_000;
// The SDK's own log lines are left out; its core's (stderr) say "[TMPRL1104] ... Workflow task duration exceeded".
const quiet = () => undefined;
Runtime.install({ logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet } });

async function trial(
  address: string,
  setting: 'SDK default (5 s watchdog)' | 'patched (0: no watchdog)',
  bundle: Awaited<ReturnType<typeof bundleWorkflowCode>>,
) {
  const taskQueue = `guard-${Date.now()}`;
  const connection = await NativeConnection.connect({ address });
  const watchdog = setting.startsWith('patched') ? { isolateExecutionTimeout: 0 } : {};
  const worker = await Worker.create({ connection, taskQueue, workflowBundle: bundle, ...watchdog } as Parameters<typeof Worker.create>[0]);
  const running = worker.run();
  const client = new Client({ connection: await Connection.connect({ address }) });
  const stuck = await client.workflow.start('spinForever', { taskQueue, workflowId: `spin-${taskQueue}`, workflowTaskTimeout: '5s' });
  await new Promise((r) => setTimeout(r, 1000));
  const started = Date.now();
  const quick = await client.workflow.start('quick', { taskQueue, workflowId: `quick-${taskQueue}` });
  const outcome = await Promise.race([
    quick.result().then(() => `finished in ${((Date.now() - started) / 1000).toFixed(1)} s`),
    new Promise<string>((r) => setTimeout(() => r(`not finished after ${WAIT_MS / 1000} s`), WAIT_MS)),
  ]);
  const history = (await stuck.fetchHistory()).events ?? [];
  const timedOut = history.filter((e) => e.workflowTaskTimedOutEventAttributes).length;
  const failed = history.filter((e) => e.workflowTaskFailedEventAttributes).length;
  console.log(
    `${setting}: the quick workflow ${outcome}; the stuck one's history: ${timedOut} workflow task(s) timed out by the server, ${failed} failed by the worker`,
  );
  await stuck.terminate('perf:sandbox-guard done');
  await quick.terminate().catch(() => undefined);
  return { worker, running };
}

const home = mkdtempSync(path.join(os.tmpdir(), 'br-perf-guard-'));
const port = await freePort();
const server = await startDevServer(port, path.join(home, 'temporal.db'));
try {
  const bundle = await bundleWorkflowCode({
    workflowsPath: new URL('./sandbox-guard-workflows.ts', import.meta.url).pathname,
    logger: Runtime.instance().logger,
  });
  const address = `127.0.0.1:${port}`;
  await trial(address, 'SDK default (5 s watchdog)', bundle);
  await trial(address, 'patched (0: no watchdog)', bundle);
} finally {
  await stopProcess(server);
  rmSync(home, { recursive: true, force: true });
  // A worker whose thread is stuck never shuts down: the process ends here.
  process.exit(0);
}

// Records the workflow histories that workflow-replay.test.ts replays: real runs (completed with repeats,
// PARTIAL, failover to a second host, cancel, retry, suite) on a dev server of its own, with the real
// Docker engine and short tasks. Run it (`npm run test:record-histories`) only to add a kind of run or
// after a deliberate break of replay; docs/workflow-versioning.md says when that is right.
// `npm run test:record-histories -- batches` records only the runs that continue as new into
// `batches/` (every execution of each chain), leaving the other fixtures as they are.

import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHostActivities, createSharedActivities, hostFoldersFrom } from '../../activities/index.js';
import { DockerEngine } from '../../activities/docker-engine.js';
import type { JobOnHostInput } from '../../activities/run-job-on-host.js';
import { FAILURE_TYPES } from '../../runs/failure-types.js';
import { ApplicationFailure } from '@temporalio/common';
import { createRetrySpec, createRunSpec, followRun, queryProgress, runHandle, submitRun } from '../../client/runs.js';
import { followSuite, newSuiteId, submitSuite } from '../../client/suites.js';
import { loadDefinitionsPage } from '../../client/task-definitions.js';
import { freePort, startDevServer } from '../../embedded/embedded-services.js';
import { settingsFrom } from '../../config/settings.js';
import { loadBenchmark } from '../../contract/load-benchmark.js';
import { gatewaySecret, ModelGateway } from '../../gateway/model-gateway.js';
import { startReferenceModel } from '../../reference-model/reference-model-server.js';
import { hostQueueName, type ClaimedHost } from '../../runs/host-queues.js';
import type { RunResult, RunSpec } from '../../runs/run-spec.js';
import { definitionsPageId } from '../../runs/task-definition-pages.js';
import type { Benchmark } from '../../contract/benchmark.js';
import type { Settings } from '../../config/settings.js';
import type { runWorkflow } from '../../workflows/run-workflow.js';
import type { SuiteResult } from '../../workflows/suite-workflow.js';
import { workflowsPath } from '../../workers/start-worker.js';
// Not from support/harness.ts: that reads vitest's context, and this runs as a plain script.
const fixturesDir = fileURLToPath(new URL('../fixtures', import.meta.url));
const historiesDir = path.join(fixturesDir, 'workflow-histories');
const onlyBatches = process.argv[2] === 'batches';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-record-histories-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const server = await startDevServer(port, path.join(scratch, 'temporal.db'));
  try {
    const settings = settingsFrom(
      { BENCHROUTER_HOME: path.join(scratch, 'home'), TEMPORAL_ADDRESS: address, BENCHROUTER_TASK_QUEUE: 'record', BENCHROUTER_GATEWAY_PORT: '0' },
      os.homedir(),
    );
    const host: ClaimedHost = { hostId: 'host-a', taskQueue: hostQueueName(settings.sharedQueue, 'host-a') };
    // A host whose queue nobody polls: a job whose first attempt names it (as a worker of that host that
    // shut down mid-attempt would) is pinned there, sees the host stop answering and fails over.
    const silentHost: ClaimedHost = { hostId: 'host-silent', taskQueue: hostQueueName(settings.sharedQueue, 'host-silent') };
    let silentFirstAttemptsLeft = 0;

    const connection = await NativeConnection.connect({ address });
    const gateway = new ModelGateway(gatewaySecret(settings.home));
    const gatewayPort = await gateway.listen(0, settings.gatewayHost);
    const hostActivities = await createHostActivities({
      docker: new DockerEngine(),
      hostId: host.hostId,
      ...hostFoldersFrom(settings),
      gateway: { instance: gateway, url: `http://127.0.0.1:${gatewayPort}/v1` },
    });
    const shared = await Worker.create({
      connection,
      taskQueue: settings.sharedQueue,
      workflowsPath,
      activities: {
        ...createSharedActivities(host, (ref) => loadDefinitionsPage(client.workflow, ref.runId, ref.page, ref.digest)),
        // Jobs' first attempts, as a worker's shared queue runs them (workers/start-worker.ts).
        runJobOnHost: async (input: JobOnHostInput) => {
          if (silentFirstAttemptsLeft-- > 0)
            throw ApplicationFailure.create({
              type: FAILURE_TYPES.attemptAborted,
              message: 'the worker of host-silent shut down',
              details: [{ host: silentHost.hostId }],
            });
          return hostActivities.runJobOnHost(input);
        },
      },
      maxHeartbeatThrottleInterval: '1s',
      defaultHeartbeatThrottleInterval: '1s',
    });
    const onHost = await Worker.create({
      connection,
      taskQueue: host.taskQueue,
      activities: hostActivities,
      maxHeartbeatThrottleInterval: '1s',
      defaultHeartbeatThrottleInterval: '1s',
    });
    const workersDone = Promise.all([shared.run(), onHost.run()]);
    const client = new Client({ connection: await Connection.connect({ address }) });
    const model = await startReferenceModel({ port: 0 });
    const target = { model: 'reference', endpoint: model.url };

    const outcomes = loadBenchmark(path.join(fixturesDir, 'benchmarks', 'outcomes'));
    const seeded = loadBenchmark(path.join(fixturesDir, 'benchmarks', 'seeded'));
    // The sleeper fixture times out after 3 s; a cancel needs a container that is still running.
    const sleeperDir = path.join(scratch, 'sleeper');
    cpSync(path.join(fixturesDir, 'benchmarks', 'sleeper'), sleeperDir, { recursive: true });
    const sleeperTask = path.join(sleeperDir, 'tasks', 'sleeps', 'task.yaml');
    writeFileSync(sleeperTask, readFileSync(sleeperTask, 'utf8').replace('timeout: 3', 'timeout: 120'));
    const sleeper = loadBenchmark(sleeperDir);

    const recorded: Array<{ name: string; workflowId: string }> = [];
    const runAndJobs = (scenario: string, result: RunResult) => {
      recorded.push({ name: `${scenario}.run`, workflowId: result.runId });
      result.jobs.filter((job) => !job.carriedFrom).forEach((job, i) => recorded.push({ name: `${scenario}.job-${i}`, workflowId: job.jobId }));
    };
    const run = async (spec: RunSpec) => followRun(await submitRun(client, settings, spec));
    const expectStatus = (scenario: string, actual: string, expected: string) => {
      if (actual !== expected) throw new Error(`${scenario}: expected the run to end ${expected}, it ended ${actual}`);
      console.log(`${scenario}: ${actual}`);
    };

    if (onlyBatches) {
      await recordBatches(client, settings, outcomes, target);
    } else {
      const completed = await run(createRunSpec(outcomes, { ...target, repeats: 2, tasks: ['scores-half'] }));
      expectStatus('completed', completed.status, 'COMPLETED');
      runAndJobs('completed', completed);

      const partialSpec = createRunSpec(outcomes, { ...target, tasks: ['scores-half', 'exits-nonzero'] });
      const partial = await run(partialSpec);
      expectStatus('partial', partial.status, 'PARTIAL');
      runAndJobs('partial', partial);

      const retried = await run(createRetrySpec(partialSpec, partial));
      expectStatus('retry', retried.status, 'PARTIAL');
      runAndJobs('retry', retried);

      silentFirstAttemptsLeft = 1;
      const failover = await run(createRunSpec(outcomes, { ...target, hostTimeout: 2, tasks: ['scores-half'] }));
      expectStatus('failover', failover.status, 'COMPLETED');
      if (failover.jobs[0]?.hostsTried?.join(',') !== 'host-silent,host-a')
        throw new Error(`failover: expected hosts host-silent,host-a, got ${failover.jobs[0]?.hostsTried?.join(',')}`);
      runAndJobs('failover', failover);

      const cancelSpec = createRunSpec(sleeper, { ...target });
      const cancelHandle = await submitRun(client, settings, cancelSpec);
      for (let i = 0; ; i++) {
        const progress = await queryProgress(cancelHandle).catch(() => undefined);
        if (progress?.running) break;
        if (i > 600) throw new Error('cancel: the sleeper job never started running');
        await new Promise((r) => setTimeout(r, 100));
      }
      // Give the container time to start, so the cancel goes through the running container's activity.
      await new Promise((r) => setTimeout(r, 4000));
      await cancelHandle.cancel();
      const cancelled = await followRun(runHandle(client, cancelSpec.runId));
      expectStatus('cancel', cancelled.status, 'CANCELLED');
      runAndJobs('cancel', cancelled);

      const suiteId = newSuiteId('record');
      const suite: SuiteResult = await followSuite(
        client,
        await submitSuite(client, settings, {
          suiteId,
          suite: 'record',
          model: target.model,
          parallel: 2,
          runs: [createRunSpec(outcomes, { ...target, tasks: ['scores-half'] }), createRunSpec(seeded, { ...target, tasks: ['constant'] })],
        }),
        () => undefined,
      );
      expectStatus('suite', suite.status, 'COMPLETED');
      recorded.push({ name: 'suite.suite', workflowId: suiteId });
      suite.runs.forEach((result, i) => runAndJobs(`suite.run-${i}`, result));

      mkdirSync(historiesDir, { recursive: true });
      for (const file of readdirSync(historiesDir)) if (file.endsWith('.json')) rmSync(path.join(historiesDir, file));
      for (const { name, workflowId } of recorded) {
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        writeFileSync(path.join(historiesDir, `${name}.json`), `${historyToJSON(history)}\n`);
      }
      console.log(`wrote ${recorded.length} histories to ${path.relative(process.cwd(), historiesDir)}`);
    }

    await model.close();
    shared.shutdown();
    onHost.shutdown();
    await workersDone;
    await gateway.close();
    await client.connection.close();
    await connection.close();
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Two runs of one task × two repeats at one job per execution (two executions each, pass@k counted
 * per batch): `inline`, whose input holds its task definitions as inputs did before
 * `task-definitions-by-reference`, and `by-reference`, submitted as `br` submits now, with the holder
 * of its one page of definitions, and (both runs) a page of results per execution: the by-reference run's
 * are recorded too.
 */
async function recordBatches(client: Client, settings: Settings, benchmark: Benchmark, target: { model: string; endpoint: string }): Promise<void> {
  const dir = path.join(historiesDir, 'batches');
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(dir)) if (file.endsWith('.json')) rmSync(path.join(dir, file));
  const options = { repeats: 2, jobsPerExecution: 1 };
  const inline = createRunSpec(benchmark, { ...target, ...options, tasks: ['scores-half'] });
  const inlineHandle = await client.workflow.start<typeof runWorkflow>('runWorkflow', {
    workflowId: inline.runId,
    taskQueue: settings.sharedQueue,
    args: [inline],
  });
  const byReference = createRunSpec(benchmark, { ...target, ...options, tasks: ['scores-half'] });
  const byReferenceHandle = await submitRun(client, settings, byReference, { definitionsByReference: true });
  let resultPages: string[] = [];
  for (const [name, handle] of [
    ['inline', inlineHandle],
    ['by-reference', byReferenceHandle],
  ] as const) {
    const result = await followRun(handle);
    if (result.status !== 'COMPLETED' || result.jobCount !== 2)
      throw new Error(`${name}: expected COMPLETED with 2 jobs, got ${result.status} with ${result.jobCount}`);
    if (result.resultPages?.length !== 2) throw new Error(`${name}: expected 2 pages of results, got ${result.resultPages?.length}`);
    if (name === 'by-reference') resultPages = result.resultPages;
    const executions: Array<{ runId: string; start: number }> = [];
    for await (const info of client.workflow.list({ query: `WorkflowId = '${handle.workflowId}'` }))
      executions.push({ runId: info.runId, start: info.startTime.getTime() });
    if (executions.length !== 2) throw new Error(`${name}: expected 2 executions, found ${executions.length}`);
    executions.sort((a, b) => a.start - b.start);
    for (const [i, { runId }] of executions.entries()) {
      const history = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
      writeFileSync(path.join(dir, `${name}.run-${i}.json`), `${historyToJSON(history)}\n`);
    }
    console.log(`${name}: ${result.status}, ${executions.length} executions`);
  }
  const holder = await client.workflow.getHandle(definitionsPageId(byReference.runId, 0)).fetchHistory();
  writeFileSync(path.join(dir, 'by-reference.definitions-0.json'), `${historyToJSON(holder)}\n`);
  // One page of results per execution (one job each).
  for (const [i, page] of resultPages.entries()) {
    const history = await client.workflow.getHandle(page).fetchHistory();
    writeFileSync(path.join(dir, `by-reference.results-${i}.json`), `${historyToJSON(history)}\n`);
  }
  console.log(`wrote ${5 + resultPages.length} histories to ${path.relative(process.cwd(), dir)}`);
}

await main();

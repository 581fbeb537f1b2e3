// perf/job-hops: where a job's time goes, from the histories of a run of N no-op tasks at concurrency 8
// (the same run perf/overhead times). For every job: the run's start of the child, the child's
// workflow tasks, its host activity (the container's whole stay on the host) and the run seeing it
// complete, each hop's mean, median and 90th percentile in ms. The hops outside the activity are the
// orchestration's own latency; a lane of the run pays them once per job.
//
//   npm run perf:hops -- [N]

import proto from '@temporalio/proto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectClient } from '../client/runs.js';
import { settingsFrom } from '../config/settings.js';
import { brRunNoop, makeNoopBenchmark } from './noop-tasks.js';
import { startStack } from './perf-support.js';

const { EventType } = proto.temporal.api.enums.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

const N = Number(process.argv[2] ?? 100);
const CONCURRENCY = 8;

const ms = (e: HistoryEvent) => Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-perf-hops-'));
  const stack = await startStack('hops');
  try {
    // Warm-up at the measured concurrency: the image, the worker and its namespace pool.
    makeNoopBenchmark(path.join(scratch, 'warm'), CONCURRENCY);
    await brRunNoop(stack.env, path.join(scratch, 'warm'), CONCURRENCY, CONCURRENCY);
    makeNoopBenchmark(path.join(scratch, 'perf-noop'), N);
    const { seconds, runId } = await brRunNoop(stack.env, path.join(scratch, 'perf-noop'), N, CONCURRENCY);
    console.log(`tasks: ${N}, concurrency: ${CONCURRENCY}, br run: ${seconds.toFixed(2)} s`);

    const client = await connectClient(settingsFrom(stack.env, os.homedir()));
    try {
      const runEvents = (await client.workflow.getHandle(runId).fetchHistory()).events ?? [];
      const initiated = new Map<string, number>();
      const completed = new Map<string, number>();
      for (const e of runEvents) {
        const start = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
        if (start && !start.includes('.results-')) initiated.set(start, ms(e));
        const done = e.childWorkflowExecutionCompletedEventAttributes?.workflowExecution?.workflowId;
        if (done) completed.set(done, ms(e));
      }
      const hops = new Map<string, number[]>();
      for (const [jobId, initiatedAt] of initiated) {
        const events = (await client.workflow.getHandle(jobId).fetchHistory()).events ?? [];
        const at = (type: number, nth = 0) => {
          const found = events.filter((e) => e.eventType === type)[nth];
          if (!found) throw new Error(`job ${jobId}: no ${EventType[type]} #${nth + 1} in its history`);
          return ms(found);
        };
        const chain: Array<[string, number]> = [
          ['run starts the child', initiatedAt],
          ['child started', at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)],
          ['1st workflow task picked up', at(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED)],
          ['1st workflow task done (host claimed)', at(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)],
          ['host activity picked up', at(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)],
          ['host activity done (container gone)', at(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)],
          ['2nd workflow task picked up', at(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED, 1)],
          ['job complete', at(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)],
          ['run sees it', completed.get(jobId)!],
        ];
        for (let i = 1; i < chain.length; i++) {
          const name = `${chain[i - 1]![0]} -> ${chain[i]![0]}`;
          hops.set(name, [...(hops.get(name) ?? []), chain[i]![1] - chain[i - 1]![1]]);
        }
      }
      // A lane's gap: from a child's completion seen by the run to the next child's start (the latest completion before each later start).
      const completions = [...completed.values()].sort((a, b) => a - b);
      hops.set(
        'run sees it -> run starts the next child',
        [...initiated.values()]
          .sort((a, b) => a - b)
          .slice(CONCURRENCY)
          .flatMap((start) => {
            const before = completions.filter((c) => c <= start).pop();
            return before === undefined ? [] : [start - before];
          }),
      );
      let outside = 0;
      for (const [name, values] of hops) {
        values.sort((a, b) => a - b);
        const mean = values.reduce((a, b) => a + b, 0) / values.length;
        if (!name.startsWith('host activity picked up')) outside += mean;
        console.log(
          `${name.padEnd(78)} mean ${mean.toFixed(1).padStart(6)}  p50 ${values[values.length >> 1]!.toFixed(1).padStart(6)}  p90 ${values[Math.floor(values.length * 0.9)]!.toFixed(1).padStart(6)}`,
        );
      }
      console.log(`orchestration per job, outside the host activity: ${outside.toFixed(0)} ms (mean)`);
    } finally {
      await client.connection.close();
    }
  } finally {
    await stack.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();

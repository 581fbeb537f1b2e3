// The job workflow's rules (retries, host failover, outage restarts, a run's fan-out) on Temporal's
// time-skipping test server (scripts/temporal-test-server.sh fetches it): the real workflows, their
// activities replaced by a fake engine that a test scripts attempt by attempt. A workflow's minutes of
// backoff, heartbeat and schedule-to-start timeouts pass in milliseconds.
//
// The fleet: one worker on the shared queue, which runs every workflow task and takes every job's first
// attempt as host `firstHost`, and a worker on each LIVE_HOSTS host's own queue (hostQueueName). Any other
// host id is a host that is gone: nothing polls its queue. claimHost answers with `claims`, in order.
//
// The test server stops its clock from an activity's schedule to its end or timeout: a pending activity's
// heartbeat and schedule-to-start timeouts pass in real time (tests that need them set them at 1 s), while
// retry backoff and workflow timers pass at once.

import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import proto from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { namingHost, type JobOnHostInput, type JobOnHostOutput } from '../../activities/run-job-on-host.js';
import type { ContainerOutcome } from '../../activities/run-task-container.js';
import { hostHeartbeat, jobAttempt } from '../../activities/run-task-container.js';
import type { HarvestOutput } from '../../activities/harvest-result.js';
import { hostOfQueue, hostQueueName, type ClaimedHost } from '../../runs/host-queues.js';
import { runOptions, type RunOptions } from '../../runs/run-options.js';
import { SEARCH_ATTRIBUTES } from '../../runs/search-attributes.js';
import type { JobSpec, RunSpec } from '../../runs/run-spec.js';
import type { TaskDefinition } from '../../contract/benchmark.js';
import { workerIdentity } from '../../runs/worker-identity.js';
import { workflowsPath } from '../../workers/start-worker.js';
import { sampleTask } from './sample-job.js';

const scriptPath = fileURLToPath(new URL('../../scripts/temporal-test-server.sh', import.meta.url));

/** Hosts whose own queue a worker polls. */
export const LIVE_HOSTS = ['h1', 'h2', 'h3'] as const;

/** One attempt of a job's host activity, as the fake engine saw it. */
export interface AttemptCall {
  jobId: string;
  task: string;
  /** The host whose worker took the attempt. */
  host: string;
  /** `shared` for a first attempt, else the host whose pinned queue it came from. */
  queue: 'shared' | string;
  /** The activity's own attempt number (ctx.info.attempt). */
  activityAttempt: number;
  /** The job's attempt number across its host activities, as runTaskContainer counts it (jobAttempt). */
  jobAttempt: number;
  earlier: JobOnHostInput['earlier'];
  /** The heartbeat details the attempt found, from the last attempt of the same activity. */
  heartbeatDetails: unknown;
}

/** What the fake engine does with one attempt: return an output (see `ran`), or throw as the real activity would. */
export type Engine = (call: AttemptCall, ctx: Context) => Promise<JobOnHostOutput>;

export interface Scenario {
  /** The host of the worker that takes first attempts on the shared queue. */
  firstHost: string;
  /** What claimHost answers, in order; once used up, `firstHost`. */
  claims: string[];
  /** What hostOfFirstAttempt answers: the host the job's history names (client/job-host.ts). */
  historyHost?: string;
  /** Whether an attempt's first heartbeat (naming its host) reaches the server; false: a host starved from the start. */
  beatsFirst?: (call: AttemptCall) => boolean;
  engine: Engine;
}

const outcomeOf = (fields: Partial<ContainerOutcome> = {}): ContainerOutcome => ({
  kind: 'exited',
  exitCode: 0,
  oomKilled: false,
  oomKills: 0,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:02.000Z',
  lastLogLine: '',
  reattached: false,
  runtime: 'simple',
  ...fields,
});

/** The host activity's output for a container that ran on `call.host`: SUCCEEDED with `score`, or `harvest` as given. */
export function ran(call: AttemptCall, harvest: HarvestOutput | number = 1, outcome: Partial<ContainerOutcome> = {}): JobOnHostOutput {
  return {
    host: call.host,
    image: 'fake:latest',
    imageBuilt: false,
    outcome: outcomeOf(outcome),
    harvest: typeof harvest === 'number' ? { status: 'SUCCEEDED', result: { overall: harvest, raw_metrics: {} } } : harvest,
  };
}

/** A fault the activity retries (a Docker daemon that did not answer). */
export const retryable = (message = 'the Docker daemon did not answer', type = 'DockerError') => ApplicationFailure.create({ type, message });
/** A fault no retry fixes. */
export const final = (message: string, type: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

/**
 * The host dies under the attempt: it heartbeats once (naming its host, as every attempt does first) and
 * never again; the attempt's worker goes on waiting until the server times it out (its next heartbeat
 * would be told so) or the test ends.
 */
export async function hostDies(ctx: Context): Promise<never> {
  await new Promise((_, reject) => {
    const timer = setTimeout(() => reject(new Error('the fake host was never timed out')), 30_000);
    ctx.cancellationSignal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    });
  });
  throw new Error('unreachable');
}

let bundle: Promise<WorkflowBundle> | undefined;
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

/** The time-skipping server and a fleet of fake hosts for one test file. */
export class PolicyEnv {
  readonly attempts: AttemptCall[] = [];
  claimed = 0;
  scenario: Scenario = { firstHost: 'h1', claims: [], engine: async (call) => ran(call) };
  private readonly workers: Worker[] = [];
  private running?: Promise<unknown>;
  private ids = 0;

  private constructor(
    readonly env: TestWorkflowEnvironment,
    readonly sharedQueue: string,
  ) {}

  static async start(sharedQueue = 'policy'): Promise<PolicyEnv> {
    // This file's process has its own runtime: the fake faults' warnings ("Activity failed") are the point, not news.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } },
    });
    const executable = execFileSync('bash', [scriptPath], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
    bundle ??= bundleWorkflowCode({ workflowsPath, logger: quiet });
    const [env, code] = await Promise.all([
      TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: executable } } }),
      bundle,
    ]);
    // The run workflow sets BenchRouter's search attributes when it ends; the test server knows none of its own.
    const { IndexedValueType } = proto.temporal.api.enums.v1;
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(
        Object.values(SEARCH_ATTRIBUTES).map((key) => [
          key.name,
          key.type === 'DOUBLE' ? IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        ]),
      ),
    });
    const policy = new PolicyEnv(env, sharedQueue);
    await policy.startWorkers(code);
    return policy;
  }

  /** Sets what the fleet does for the next job(s), and forgets the attempts so far. */
  set(scenario: Partial<Scenario>): void {
    this.scenario = { firstHost: 'h1', claims: [], engine: async (call) => ran(call), ...scenario };
    this.attempts.length = 0;
    this.claimed = 0;
  }

  private async startWorkers(workflowBundle: WorkflowBundle): Promise<void> {
    const { nativeConnection: connection } = this.env;
    const shared = await Worker.create({
      connection,
      taskQueue: this.sharedQueue,
      identity: workerIdentity('shared', process.pid),
      workflowBundle,
      activities: {
        claimHost: async (): Promise<ClaimedHost> => {
          const hostId = this.scenario.claims[this.claimed++] ?? this.scenario.firstHost;
          return { hostId, taskQueue: hostQueueName(this.sharedQueue, hostId) };
        },
        hostOfFirstAttempt: async (): Promise<string | undefined> => this.scenario.historyHost,
        runJobOnHost: (input: JobOnHostInput) => this.attempt(input, this.scenario.firstHost),
      },
    });
    this.workers.push(shared);
    for (const hostId of LIVE_HOSTS) {
      this.workers.push(
        await Worker.create({
          connection,
          taskQueue: hostQueueName(this.sharedQueue, hostId),
          identity: workerIdentity(hostId, process.pid),
          activities: { runJobOnHost: (input: JobOnHostInput) => this.attempt(input, hostId) },
        }),
      );
    }
    this.running = Promise.all(this.workers.map((w) => w.run()));
  }

  /** The fake runJobOnHost: heartbeats its host first and names it on any failure, as the real one does. */
  private async attempt(input: JobOnHostInput, host: string): Promise<JobOnHostOutput> {
    const ctx = Context.current();
    const call: AttemptCall = {
      jobId: input.job.jobId,
      task: input.job.task.name,
      host,
      queue: hostOfQueue(this.sharedQueue, ctx.info.taskQueue) ?? 'shared',
      activityAttempt: ctx.info.attempt,
      jobAttempt: jobAttempt(ctx, input.earlier),
      earlier: input.earlier,
      heartbeatDetails: ctx.info.heartbeatDetails,
    };
    this.attempts.push(call);
    if (this.scenario.beatsFirst?.(call) ?? true) hostHeartbeat(ctx, host)();
    try {
      return await this.scenario.engine(call, ctx);
    } catch (error) {
      throw namingHost(error, host);
    }
  }

  /** Attempts as `host@queue#jobAttempt`, in order: where each ran and from which queue. */
  trail(jobId?: string): string[] {
    return this.attempts.filter((a) => jobId === undefined || a.jobId === jobId).map((a) => `${a.host}@${a.queue}#${a.jobAttempt}`);
  }

  nextId(prefix: string): string {
    return `${prefix}-${++this.ids}`;
  }

  async close(): Promise<void> {
    for (const worker of this.workers) worker.shutdown();
    await this.running;
    await this.env.teardown();
  }
}

export function taskDefinition(name: string, fields: Partial<TaskDefinition> = {}): TaskDefinition {
  return sampleTask({ name, environment: 'shell', timeoutSeconds: 600, resultMapping: {}, ...fields });
}

/** What a run pins and each of its jobs carries: a benchmark that is nowhere on disk (the engine is fake), and the options. */
function pinned(options: Partial<RunOptions>): Pick<RunSpec, 'benchmark' | 'options' | 'resolved' | 'cacheFrom'> {
  return {
    benchmark: { name: 'fake', dir: '/nonexistent/fake', digest: 'd' },
    options: runOptions({ model: 'm', endpoint: 'http://127.0.0.1:9/v1', preflight: false, gateway: false, ...options }),
    resolved: { prices: {} },
    cacheFrom: [],
  };
}

export function jobSpec(jobId: string, options: Partial<RunOptions> = {}, task = taskDefinition('t')): JobSpec {
  return { runId: jobId.split('.')[0]!, jobId, task, repeat: { index: 0 }, ...pinned(options) };
}

export function runSpec(runId: string, tasks: TaskDefinition[], options: Partial<RunOptions> = {}): RunSpec {
  return { runId, tasks, submittedAt: '2026-01-01T00:00:00.000Z', ...pinned(options) };
}

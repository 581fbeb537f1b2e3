// What a run is: the definition pinned in the workflow input, and the results and progress it
// reports. Types only, so deterministic workflow code can import it.

import type { TaskDefinition } from '../contract/benchmark.js';
import type { NormalizedResult } from '../contract/result-mapping.js';
import type { GenerationSettings } from './generation.js';
import type { UsageCounters, UsageSummary } from './usage.js';
import type { RecordsSummary } from '../contract/records.js';
import type { RunTally } from './run-tally.js';
import type { PinnedTaskDefinitions } from './task-definition-pages.js';

export interface ModelTarget {
  name: string;
  /** OpenAI-compatible base URL, `.../v1`. */
  endpoint: string;
  /**
   * Where the worker finds the API key: the name of an environment variable on the worker host.
   * The key itself never enters workflow input, history or logs.
   */
  apiKeyEnv?: string;
}

export interface RunOptions {
  /** Jobs running at once. */
  concurrency: number;
  /** How long a job's next step may wait for its host to pick it up before the host counts as gone. */
  hostTimeoutSeconds: number;
  /** How long a running container's activity may go without a heartbeat before its attempt is retried. */
  heartbeatTimeoutSeconds: number;
  /** Hosts a job may try before it fails with INFRASTRUCTURE. */
  maxHosts: number;
  /** Times each task runs; each repeat gets its own seed. */
  repeats: number;
  /**
   * Seed of the first repeat (repeat k gets seed + k), passed as BENCHROUTER_SEED. Absent with one
   * repeat and no --seed: then no seed is passed and the benchmark keeps its own default.
   */
  seed?: number;
  /** Run only the first N instances of each task (BENCHROUTER_LIMIT); for smoke tests and fast checks. */
  limit?: number;
  /** Run only these instance ids (BENCHROUTER_INSTANCES, comma-separated): one batch of an RL loop, say. */
  instances?: string[];
  /**
   * Model requests one job may have in flight (BENCHROUTER_CONCURRENCY), for benchmarks that run their
   * own pool of requests (EvalScope's eval_batch_size); absent: the benchmark's own default.
   */
  jobConcurrency?: number;
  /**
   * Jobs one execution of the run workflow starts before it continues as new (default
   * JOBS_PER_EXECUTION): bounds the history of a run of any size. Small values are for tests.
   */
  jobsPerExecution?: number;
}

/** Which instances a job runs, passed to its task as the optional contract variables. */
export type InstanceSelection = Pick<RunOptions, 'limit' | 'instances'>;

/** How jobs reach the model: through the host's gateway (default) or straight to the endpoint. */
export interface GatewayOptions {
  enabled: boolean;
  /** Store answers and replay them for identical requests (--cache). */
  cache: boolean;
  /** Runs whose caches a retry or rerun reads, oldest first. */
  cacheFrom: string[];
  /** Upstream requests of this run at once, per host. */
  concurrency: number;
  /** Upstream requests started per second, per host (unlimited when absent). */
  ratePerSecond?: number;
  /** Retries of a 429 or 5xx answer. */
  maxRetries: number;
}

export const DEFAULT_GATEWAY: GatewayOptions = { enabled: true, cache: false, cacheFrom: [], concurrency: 64, maxRetries: 5 };

export const DEFAULT_RUN_OPTIONS: RunOptions = { concurrency: 8, hostTimeoutSeconds: 120, heartbeatTimeoutSeconds: 30, maxHosts: 3, repeats: 1 };

export interface RunSpec {
  runId: string;
  benchmark: { name: string; dir: string; digest: string };
  /** The task definitions; empty in the input of a run that pins them by reference (`definitions`). */
  tasks: TaskDefinition[];
  /**
   * Set in the workflow input by submitRun: the definitions live in page holders, and each execution
   * loads the pages its batch needs, so the input does not grow with them. runSpecOf reads them back.
   */
  definitions?: PinnedTaskDefinitions;
  model: ModelTarget;
  options: RunOptions;
  gateway: GatewayOptions;
  /** Generation settings the gateway applies to every call (what was applied, pinned). */
  generation: GenerationSettings;
  /** An optional second model the benchmark may call as a judge. */
  judge?: ModelTarget;
  /** $ per 1M input/output tokens, for upstreams that report no cost. */
  prices: Record<string, { input: number; output: number }>;
  submittedAt: string;
  /** Set by `br retry`: the run this one retries, and the succeeded jobs carried over from it. */
  retryOf?: { runId: string; carried: JobResult[] };
  /** Set only by the run workflow when it continues as new: where the next execution starts. */
  continuation?: RunContinuation;
}

/** What one execution of a run hands the next: the next job's index and the tally so far. */
export interface RunContinuation {
  nextJob: number;
  startedAt: string;
  tally: RunTally;
  /** The workflow ids of the pages of job results the executions so far wrote (runs/result-pages.ts), in job order. */
  resultPages: string[];
}

export interface JobSpec {
  runId: string;
  jobId: string;
  benchmark: RunSpec['benchmark'];
  task: TaskDefinition;
  model: ModelTarget;
  options: Pick<RunOptions, 'hostTimeoutSeconds' | 'heartbeatTimeoutSeconds' | 'maxHosts' | 'jobConcurrency'>;
  gateway: GatewayOptions;
  generation: GenerationSettings;
  judge?: ModelTarget;
  prices: RunSpec['prices'];
  /** Which repeat of its task this job is, and its seed (when the run passes seeds). */
  repeat: { index: number; seed?: number };
  /** Absent: every instance. */
  selection?: InstanceSelection;
}

/** Model usage as the gateway metered it: figures for people, counters for adding up. */
export interface JobUsage {
  model: UsageSummary;
  judge?: UsageSummary;
  counters: { model: UsageCounters; judge?: UsageCounters };
}

export type JobStatus = 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'CANCELLED';
export type FailureReason = 'NON_ZERO_EXIT' | 'NO_RESULT' | 'BAD_RESULT' | 'DISK_LIMIT' | 'IMAGE_BUILD' | 'INFRASTRUCTURE';
export type RunStatus = 'COMPLETED' | 'PARTIAL' | 'FAILED' | 'CANCELLED';

export interface JobResult {
  jobId: string;
  task: string;
  status: JobStatus;
  reason?: FailureReason;
  /** For a failure: what happened, with the exit code and the last log line (redacted) where there is one. */
  message?: string;
  result?: NormalizedResult;
  exitCode?: number;
  /** The host that ran the job to its end. */
  host?: string;
  /** Every host the job claimed, in order; more than one when a host stopped answering. */
  hostsTried?: string[];
  /** Model calls through the gateway (absent with --no-gateway). */
  usage?: JobUsage;
  /** The task's records.jsonl, validated and summarized (absent when it wrote none). */
  records?: RecordsSummary;
  /** Which repeat of its task this job was (0 when the run has one repeat). */
  repeat?: number;
  seed?: number;
  /** For a job carried over by `br retry`: the run whose result this is. */
  carriedFrom?: string;
  image?: string;
  /** `simple`, or `dind:<mode>` for a task with its own Docker daemon (sysbox, privileged, capabilities). */
  runtime?: string;
  /** A DinD task's preloaded images: `store` (a clone of the host's prepared image set) or `load` (`docker load` of the archives). */
  preload?: 'store' | 'load';
  /** True when this job built its environment image (false: it found the image cached). */
  imageBuilt?: boolean;
  artifactsDir?: string;
  timings: {
    queuedAt: string;
    startedAt?: string;
    finishedAt: string;
    /** Seconds the container ran (0 when it never started). */
    containerSeconds: number;
  };
}

export type JobState = 'pending' | 'running' | 'succeeded' | 'failed' | 'timed_out' | 'cancelled';

export interface RunProgress {
  total: number;
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  timedOut: number;
  cancelled: number;
  jobs: Array<{ jobId: string; task: string; state: JobState }>;
}

/** One task's scores over its repeats. */
export interface TaskScore {
  task: string;
  /** Scores of the repeats that succeeded, in repeat order. */
  scores: number[];
  repeats: number;
  mean: number | null;
  /** Sample standard deviation over the succeeded repeats (0 with one). */
  std: number | null;
  /** pass@1..pass@n from the repeats' records.jsonl, where every repeat's records could be read. */
  passAtK?: Record<string, number>;
}

export interface RunResult {
  runId: string;
  /** For a run made by `br retry`: the run it retried. */
  retryOf?: string;
  benchmark: string;
  model: string;
  status: RunStatus;
  /** Mean `overall` over succeeded jobs; null when none succeeded. */
  overall: number | null;
  /** With repeats: the sample standard deviation, over repeats, of each repeat's mean score. */
  overallStd?: number | null;
  /** Per task: the mean and std over its repeats. */
  tasks?: TaskScore[];
  /**
   * Every job's result. Empty in the workflow's own result when `jobsIn` is set: the client fills it
   * from the result pages (client/run-jobs.ts) so the result payload stays small at any size.
   */
  jobs: JobResult[];
  /** `result-pages`: the jobs' results live in the pages `resultPages` names, `jobCount` jobs in all (carried ones included). */
  jobsIn?: 'result-pages';
  jobCount?: number;
  /**
   * With `jobsIn`: the workflow ids of the pages that hold the results of every job the run started
   * (its carried ones excepted), in job order.
   */
  resultPages?: string[];
  /** Model usage over all jobs (absent with --no-gateway). */
  usage?: { model: UsageSummary; judge?: UsageSummary };
  startedAt: string;
  finishedAt: string;
}

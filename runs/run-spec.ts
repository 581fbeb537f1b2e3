// What a run is: the definition pinned in the workflow input, and the results and progress it
// reports. Types only, so deterministic workflow code can import it.

import type { TaskDefinition } from '../contract/benchmark.js';
import type { NormalizedResult } from '../contract/result-mapping.js';
import type { UsageCounters, UsageSummary } from './usage.js';
import type { RecordsSummary } from '../contract/records.js';
import type { RunTally } from './run-tally.js';
import type { PinnedTaskDefinitions } from './task-definition-pages.js';
import type { RunOptions } from './run-options.js';
import type { SideModelRole } from './side-models.js';
import type { ScoreStats } from './score-interval.js';
import type { BenchRouterVersion, DatasetDigest, Provenance } from './provenance.js';
import type { RunBudgetFigures } from './budgets.js';
import type { JobShard, RunPlan } from './instance-shards.js';
import type { Reward } from './rewards.js';

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
  /** The run's options, every default filled in (runs/run-options.ts): what was asked, pinned. */
  options: RunOptions;
  /** What submitting resolved from the options, pinned beside them. */
  resolved: ResolvedOptions;
  /** Runs whose gateway caches this one reads, oldest first: a retry or rerun reads its original's. */
  cacheFrom: string[];
  submittedAt: string;
  /** BenchRouter's version that submitted the run (absent in runs submitted before it was pinned). */
  benchrouter?: BenchRouterVersion;
  /**
   * Per task, what submitting resolved of its instances: how many the run selected and how many a job holds
   * (runs/instance-shards.ts); null for a task that lists none. Absent in runs submitted before it was kept.
   */
  plan?: RunPlan;
  /**
   * Set by `br retry`: the run this one retries, the succeeded jobs carried over from it, and, by slot
   * (job-specs.ts slotKey), the instances its unfinished jobs had already scored, which their reruns skip.
   */
  retryOf?: { runId: string; carried: JobResult[]; instances?: Record<string, CarriedInstances> };
  /** Set only by the run workflow when it continues as new: where the next execution starts. */
  continuation?: RunContinuation;
}

/** What submitting a run resolved from its options: the same on every host that runs its jobs. */
export interface ResolvedOptions {
  /** $ per 1M input/output tokens in effect: the built-in table with the run's own prices over it. */
  prices: Record<string, { input: number; output: number }>;
  /** With `tokenizer`: its absolute path and the SHA-256 of the file the run was submitted with; a host whose file differs refuses the job. */
  tokenizer?: { path: string; sha256: string };
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
  options: RunOptions;
  resolved: ResolvedOptions;
  cacheFrom: string[];
  /** Which repeat of its task this job is, and its seed (when the run passes seeds). */
  repeat: { index: number; seed?: number };
  /** For a task that lists its instances: this job's slice of them (runs/instance-shards.ts). */
  shard?: JobShard;
  /** For a retried job: the instances its original already scored, not evaluated again. */
  carried?: CarriedInstances;
}

/** Instances a job does not evaluate again: their rewards as an earlier job scored them, and that job's id. */
export interface CarriedInstances {
  from: string;
  rewards: Reward[];
}

/** Model usage as the gateway metered it: figures for people, counters for adding up. */
export type JobUsage = {
  model: UsageSummary;
  /** A judge's and a user simulator's calls, when the run names them (without a user simulator its calls are the model's). */
  counters: { model: UsageCounters } & Partial<Record<SideModelRole, UsageCounters>>;
} & Partial<Record<SideModelRole, UsageSummary>>;

export type JobStatus = 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'CANCELLED';
/** `BUDGET`: the gateway refused the job's model calls for a spent budget, or the run did not start it because its budget was spent. */
export type FailureReason = 'NON_ZERO_EXIT' | 'NO_RESULT' | 'BAD_RESULT' | 'DISK_LIMIT' | 'IMAGE_BUILD' | 'INFRASTRUCTURE' | 'BUDGET';
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
  /**
   * For a task that lists its instances: which of its shards this job was, how many instances it held and how
   * many of them an earlier attempt or run had already scored (carried, not evaluated again).
   */
  shard?: {
    index: number;
    count: number;
    instances: number;
    /** How many instances the run selected of the task, over all its shards (absent in results from before it was kept). */
    of?: number;
    carried?: number;
    /**
     * For a shard resumed after instances were carried over whose own overall is not the mean of its records'
     * scores: the instances its score is over (the ones its container ran); the carried ones are not in it.
     */
    scored?: number;
    /** The task's `aggregate` (contract/benchmark.ts): present when its shards' results fold into one (runs/shard-fold.ts). */
    aggregate?: Record<string, 'mean' | 'sum'>;
  };
  /**
   * For a job of a task whose result combines over instances: each of its instances' score, in the shard's
   * order, from its records (null for an instance with none). The task's score is summed from these.
   */
  instanceScores?: Array<number | null>;
  /** For a job carried over by `br retry`: the run whose result this is. */
  carriedFrom?: string;
  image?: string;
  /** The Docker image id (`sha256:...`) of `image` on the job's host, as ensuring the image found it. */
  imageId?: string;
  /** The host's dataset directory (BENCHROUTER_DATASET_DIR) the job mounted, and its digest. */
  dataset?: DatasetDigest;
  /** `simple`, or `dind:<mode>` for a task with its own Docker daemon (sysbox, privileged, capabilities), on Docker; `kubernetes` for a pod. */
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
  /** For a job of a task that lists its instances: how many it holds. */
  jobs: Array<{ jobId: string; task: string; state: JobState; instances?: number }>;
  /** When every task lists its instances: how many the run holds, and how many are in jobs that have ended. */
  instances?: { total: number; done: number };
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
  /**
   * For a task run in shards (its result combining over instances): each repeat's result folded from its
   * shards (runs/shard-fold.ts), with how many of its instances were scored, how many were carried over
   * from an earlier attempt or run, and how many of its shards succeeded.
   */
  results?: Array<{
    repeat: number;
    result: NormalizedResult | null;
    instances: { total: number; scored: number; carried: number };
    shards: { total: number; succeeded: number };
  }>;
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
  usage?: { model: UsageSummary } & Partial<Record<SideModelRole, UsageSummary>>;
  /** What the score was measured with (runs/provenance.ts); absent in runs from before it was kept. */
  provenance?: Provenance;
  /** The score's n and 95% interval (runs/score-interval.ts). */
  scoreStats?: ScoreStats;
  /** With a budget option: the limits, what the run spent, and what the budget stopped (docs/gateway.md#budgets). */
  budget?: RunBudgetFigures;
  startedAt: string;
  finishedAt: string;
}

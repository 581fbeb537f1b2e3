// The in-memory form of a loaded benchmark: what the workflow input pins and activities run.
// Plain data only, so it can travel through Temporal payloads.

export interface TaskResources {
  memory: string;
  cpus: number;
  pids: number;
  /** Bytes the task may write (results, its filesystem, a DinD daemon's storage); absent in runs pinned before it existed. */
  disk?: string;
}

export interface TaskDefinition {
  name: string;
  /**
   * The task's directory under tasks/ (its working directory in the container), when it is not `name`: a task
   * made from the benchmark's task_template runs in the template's directory.
   */
  directory?: string;
  environment: string;
  command: string;
  timeoutSeconds: number;
  resultMapping: Record<string, string>;
  docker: boolean;
  dockerImages: string[];
  /**
   * Of `dockerImages`, those the benchmark builds itself (benchmark.yaml `preload_images`): image reference ->
   * build context, a path relative to the benchmark directory. Absent when the task preloads none of them.
   */
  preloadBuilds?: Record<string, string>;
  extraEnv: Record<string, string>;
  resources: TaskResources;
  /** `isolated` (default): a bridge that reaches the model gateway and the outside only. `host`: the worker host's network. */
  network: 'isolated' | 'host';
  /**
   * The task's instance ids in the benchmark's own order (task.yaml `instances`): read from its file when the
   * benchmark is loaded, or listed by `instancesCommand` in the task's image when a run is submitted. Absent: the
   * platform does not know them, and the task runs as one job.
   */
  instances?: string[];
  /** task.yaml `instances: {command}`: what prints the ids, run in the task's image at submit (then `instances` is set). */
  instancesCommand?: string;
  /**
   * task.yaml `aggregate`, as a mapping: how the task's result combines over its instances (`overall` is always
   * `mean`). Absent: the task is never split into shards.
   */
  aggregate?: Record<string, 'mean' | 'sum'>;
  /** task.yaml `shard_size`: instances per job when a run splits the task and names no size of its own. */
  shardSize?: number;
  /** task.yaml `min_shard_size`: the fewest instances the task's harness can score in one job. */
  minShardSize?: number;
}

export interface Benchmark {
  name: string;
  description: string;
  /** Absolute path of the benchmark directory on the machine that loaded it. */
  dir: string;
  tasks: TaskDefinition[];
  /**
   * benchmark.yaml `task_template`: what makes a task a run names that `tasks` does not list. `task` is the
   * template's task.yaml loaded as any task's (named after its directory); `pattern` the names it takes.
   */
  taskTemplate?: { pattern: string; example: string; task: TaskDefinition };
}

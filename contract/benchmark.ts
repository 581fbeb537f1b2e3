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
}

export interface Benchmark {
  name: string;
  description: string;
  /** Absolute path of the benchmark directory on the machine that loaded it. */
  dir: string;
  tasks: TaskDefinition[];
}

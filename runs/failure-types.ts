// The types of the ApplicationFailures activities throw, named once: activities throw them, and the
// job workflow's retry policies decide by them which faults no retry can fix.

export const FAILURE_TYPES = {
  /** The environment cannot be built for its own reasons (a step fails, a bad instruction, a non-DinD image): no retry. */
  imageProblem: 'ImageProblem',
  /** A build that failed for the daemon's or network's reasons: retried. */
  imageBuild: 'ImageBuildError',
  /**
   * The run needs something this worker host does not have (the API-key variable it names, the tokenizer file it
   * pinned): no retry on this host. The type keeps its first name, which retry policies in recorded histories carry.
   */
  missingOnHost: 'MissingSecret',
  infrastructure: 'InfrastructureError',
  /** An endpoint's `GET /v1/models` answered, but with no model id a schedule can name its run by: no retry. */
  badModelList: 'BadModelList',
  /** A task's `instances: {command}` failed or printed no valid list: no retry. */
  instancesProblem: 'InstancesProblem',
  /** The server stopped accepting this attempt (not a cancel): the container stays for the next attempt. */
  attemptAborted: 'AttemptAborted',
  /** Something outside BenchRouter (a stopping daemon) killed the container: the next attempt starts it again, once. */
  containerKilled: 'ContainerKilled',
} as const;

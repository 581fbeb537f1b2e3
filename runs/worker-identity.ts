// How a worker names itself to Temporal: the host id and the process, so that `br doctor`, the health
// findings of waiting commands and a workflow's history say which machine and which process took a task.

export function workerIdentity(hostId: string, pid: number): string {
  return `br-worker@${hostId}:${pid}`;
}

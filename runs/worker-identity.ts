// How a worker names itself to Temporal: the host id and the process, so that `br doctor`, the health
// findings of waiting commands and a workflow's history say which machine and which process took a task.

export function workerIdentity(hostId: string, pid: number): string {
  return `br-worker@${hostId}:${pid}`;
}

/** The host id in an identity `workerIdentity` made; undefined for any other identity. */
export function hostOfWorkerIdentity(identity: string): string | undefined {
  const match = /^br-worker@(.+):\d+$/.exec(identity);
  return match?.[1];
}

// The attempts of each job's container on this host, in this worker process: one at a time, and what a
// stepping-aside attempt leaves behind is watched until its job comes back for it or has gone elsewhere.
//
// Why one at a time: when the server gives up on an attempt (its heartbeat timed out while the host was
// starved, or the process was stopped), the worker learns so only at the attempt's next heartbeat, and the
// next attempt of the same job may already be running here. Two attempts of one job at once each look for
// the container, and one that finds none makes the results directory afresh under the other's container
// ("cannot create /app/results/records.jsonl: Directory nonexistent" in a hand trial at load 40).
//
// Why watched: an attempt that steps aside leaves its container running for the next attempt to reattach
// to. When the job moves to another host instead (this host did not answer in time), nobody would come for
// it and the container would run to its end: the job's container started on two hosts, and its results
// written twice. The watch asks the server where the job is, and removes the container once it is
// somewhere else or finished.

import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Where the job's workflow says the job is. `here`: it runs on this host, or will come back to it.
 * `gone`: it is closed, not found, or on another host now. `unknown`: the server did not answer.
 */
export type JobWhereabouts = { kind: 'here' } | { kind: 'gone'; why: string } | { kind: 'unknown'; why: string };

/** What the watch does with a container left unattended, from where its job is: only `gone` removes it. */
export function unattendedVerdict(where: JobWhereabouts): 'remove' | 'keep' {
  return where.kind === 'gone' ? 'remove' : 'keep';
}

export interface JobAttemptsOptions {
  /** The server's word on where the job is (workers/sweep-orphans.ts); none: nothing left is ever removed here. */
  whereIs?: (jobId: string) => Promise<JobWhereabouts>;
  /** How often a left container's job is looked up. */
  checkEveryMs?: number;
  say?: (line: string) => void;
}

interface Left {
  jobId: string;
  /** Removes the container and closes what the attempt kept open for it (its gateway routes). */
  release: () => Promise<void>;
  /** Ends the watch without releasing: the next attempt took the container over. */
  stop: AbortController;
}

export class JobAttempts {
  /** The attempt (or removal) of each container name in progress here. */
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly left = new Map<string, Left>();
  private readonly checkEveryMs: number;

  constructor(private readonly options: JobAttemptsOptions = {}) {
    this.checkEveryMs = options.checkEveryMs ?? 10_000;
  }

  /**
   * Runs `attempt` on the job's container `name` once every earlier attempt on it in this process has
   * ended (`waiting` is called meanwhile, to heartbeat).
   */
  async serially<T>(name: string, attempt: () => Promise<T>, waiting?: () => void): Promise<T> {
    const earlier = this.running.get(name);
    const run = (async () => {
      if (earlier) {
        const beat = waiting ? setInterval(waiting, 2000) : undefined;
        await earlier.catch(() => undefined).finally(() => clearInterval(beat));
      }
      return attempt();
    })();
    this.running.set(name, run);
    try {
      return await run;
    } finally {
      if (this.running.get(name) === run) this.running.delete(name);
    }
  }

  /** Containers left here that no attempt follows now, by name. */
  unattended(): string[] {
    return [...this.left.keys()];
  }

  /**
   * An attempt stepped aside from the job's container `name`, keeping it: watched until an attempt of the
   * job takes it over here, or `release`d once the server says the job is elsewhere or finished.
   */
  leave(name: string, jobId: string, release: () => Promise<void>): void {
    this.left.get(name)?.stop.abort();
    const entry: Left = { jobId, release, stop: new AbortController() };
    this.left.set(name, entry);
    void this.watch(name, entry);
  }

  /** An attempt looked for the container `name` and follows it now (or found none): the watch of it ends. */
  adopt(name: string): void {
    const entry = this.left.get(name);
    if (!entry) return;
    entry.stop.abort();
    this.left.delete(name);
  }

  private async watch(name: string, entry: Left): Promise<void> {
    const { whereIs, say } = this.options;
    if (!whereIs) return;
    const signal = entry.stop.signal;
    while (!signal.aborted) {
      try {
        await sleep(this.checkEveryMs, undefined, { signal, ref: false });
      } catch {
        return; // taken over
      }
      const where = await whereIs(entry.jobId).catch((error: unknown): JobWhereabouts => ({ kind: 'unknown', why: String(error) }));
      if (signal.aborted || unattendedVerdict(where) === 'keep') continue;
      this.left.delete(name);
      // Through serially: an attempt of the job that arrives meanwhile waits for the removal, then finds nothing.
      await this.serially(name, () => entry.release())
        .then(() =>
          say?.(`removed container ${name}, left by an attempt of job ${entry.jobId} (${where.kind === 'gone' ? where.why : ''}; not on this host any more)`),
        )
        .catch((error: unknown) =>
          say?.(`could not remove container ${name} of job ${entry.jobId}: ${error instanceof Error ? error.message : String(error)}`),
        );
      return;
    }
  }
}

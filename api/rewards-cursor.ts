// Where a reader of a run's reward stream stands, carried as each SSE event's id so that a client
// that reconnects with Last-Event-ID gets every reward after it exactly once. Jobs are named by their
// position in the run's job order (runs/job-specs.ts); jobs read to the end collapse into ranges, so
// the id stays short for a run of 10,000 jobs: `0-4411,4412=17,4413=3` (jobs 0..4411 read to the
// end, job 4412 up to its 17th reward, job 4413 up to its 3rd).

const ITEM = /^(\d{1,7})(?:-(\d{1,7})|=(\d{1,9}))$/;

export class RewardsCursor {
  private readonly done = new Set<number>();
  private readonly counts = new Map<number, number>();

  /** Parses a Last-Event-ID; throws an Error naming the bad part. The empty string is the start. */
  static parse(text: string): RewardsCursor {
    const cursor = new RewardsCursor();
    for (const item of text.split(',').filter(Boolean)) {
      const match = ITEM.exec(item);
      if (!match) throw new Error(`"${item}": expected <job>=<rewards read> or <first job>-<last job>`);
      const from = Number(match[1]);
      if (match[3] !== undefined) cursor.counts.set(from, Number(match[3]));
      else {
        const to = Number(match[2]);
        if (to < from || to - from > 1_000_000) throw new Error(`"${item}": expected a range of jobs, first to last`);
        for (let job = from; job <= to; job++) cursor.done.add(job);
      }
    }
    return cursor;
  }

  isDone(job: number): boolean {
    return this.done.has(job);
  }

  /** Rewards of `job` already delivered. */
  count(job: number): number {
    return this.counts.get(job) ?? 0;
  }

  advance(job: number, count: number): void {
    this.counts.set(job, count);
  }

  finish(job: number): void {
    this.done.add(job);
    this.counts.delete(job);
  }

  toString(): string {
    const items: string[] = [];
    const done = [...this.done].sort((a, b) => a - b);
    for (let i = 0; i < done.length;) {
      let j = i;
      while (j + 1 < done.length && done[j + 1] === done[j]! + 1) j++;
      items.push(`${done[i]}-${done[j]}`);
      i = j + 1;
    }
    for (const [job, count] of [...this.counts].sort((a, b) => a[0] - b[0])) if (count > 0) items.push(`${job}=${count}`);
    return items.join(',');
  }
}

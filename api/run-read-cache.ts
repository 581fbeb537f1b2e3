// Reads of runs for many concurrent API callers: a finished run's result never changes, so it is kept
// (bounded, oldest out first); a running run's state is read once per short interval however many
// callers ask (single flight), since progress only moves as jobs finish.

export class FinishedResults<T> {
  private readonly results = new Map<string, T>();
  constructor(private readonly capacity = 2000) {}

  get(runId: string): T | undefined {
    return this.results.get(runId);
  }

  set(runId: string, result: T): void {
    this.results.set(runId, result);
    if (this.results.size > this.capacity) this.results.delete(this.results.keys().next().value!);
  }
}

/** One read in flight per key, and its answer reused for `ttlMs` after it settles. */
export class SingleFlight<T> {
  private readonly entries = new Map<string, { promise: Promise<T>; settledAt?: number }>();
  constructor(private readonly ttlMs: number) {}

  read(key: string, load: () => Promise<T>, now = Date.now()): Promise<T> {
    const entry = this.entries.get(key);
    if (entry && (entry.settledAt === undefined || now - entry.settledAt < this.ttlMs)) return entry.promise;
    const fresh: { promise: Promise<T>; settledAt?: number } = { promise: load() };
    fresh.promise.then(
      () => (fresh.settledAt = Date.now()),
      // A failed read is not reused: the next caller tries again.
      () => this.entries.delete(key),
    );
    this.entries.set(key, fresh);
    this.sweep(now);
    return fresh.promise;
  }

  private sweep(now: number): void {
    if (this.entries.size < 1000) return;
    for (const [key, entry] of this.entries) if (entry.settledAt !== undefined && now - entry.settledAt >= this.ttlMs) this.entries.delete(key);
  }
}

// What one task attempt acquired, released once each, last acquired first, however the attempt ends
// (Node 20 has no AsyncDisposableStack). An attempt that steps aside keeps what the next one takes over.

interface Entry {
  what: string;
  release: () => unknown;
  keepable: boolean;
}

export class CleanupStack {
  private entries: Entry[] = [];

  /**
   * `release` runs at `release()`, before everything deferred earlier. A `keepable` one is dropped
   * unrun by `keep()`: what it holds outlives the attempt. `what` names it in a failure.
   */
  defer(what: string, release: () => unknown, { keepable = false } = {}): void {
    this.entries.push({ what, release, keepable });
  }

  /**
   * Leaves what the keepable entries hold in place, for the next attempt: `release()` will not run them.
   * Returns a stack of just those, for whoever must release them after all (a job that moved away).
   */
  keep(): CleanupStack {
    const kept = new CleanupStack();
    kept.entries = this.entries.filter((entry) => entry.keepable).map((entry) => ({ ...entry, keepable: false }));
    this.entries = this.entries.filter((entry) => !entry.keepable);
    return kept;
  }

  /**
   * Runs every entry not run yet, last deferred first, each once (a second call runs only what was
   * deferred since), all of them even when some fail; then throws the one failure, or all of them.
   */
  async release(): Promise<void> {
    const failures: Array<{ what: string; error: unknown }> = [];
    for (let entry = this.entries.pop(); entry; entry = this.entries.pop()) {
      try {
        await entry.release();
      } catch (error) {
        failures.push({ what: entry.what, error });
      }
    }
    if (failures.length === 1) throw failures[0]!.error;
    if (failures.length > 1) {
      const said = failures.map(({ what, error }) => `${what}: ${error instanceof Error ? error.message : String(error)}`);
      throw new AggregateError(
        failures.map((failure) => failure.error),
        `releasing ${failures.length} resources failed: ${said.join('; ')}`,
      );
    }
  }
}

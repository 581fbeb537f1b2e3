// Limits toward the model, per run: at most N upstream requests at once and, optionally, at most R
// requests started per second. Jobs of one run on one host share the limiter.

export class RunLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private nextStartMs = 0;

  constructor(
    private readonly concurrency: number,
    private readonly ratePerSecond?: number,
  ) {}

  /** Resolves with a release function, and whether the caller had to wait. */
  async acquire(): Promise<{ release: () => void; queued: boolean }> {
    let queued = false;
    if (this.active >= this.concurrency) {
      queued = true;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active += 1;
    }
    if (this.ratePerSecond) {
      const now = Date.now();
      const start = Math.max(now, this.nextStartMs);
      this.nextStartMs = start + 1000 / this.ratePerSecond;
      if (start > now) {
        queued = true;
        // The global timer, not node:timers/promises: tests drive the spacing with fake timers.
        await new Promise((resolve) => setTimeout(resolve, start - now));
      }
    }
    let released = false;
    return {
      queued,
      release: () => {
        if (released) return;
        released = true;
        const next = this.waiting.shift();
        if (next)
          next(); // the slot passes straight to the next waiter
        else this.active -= 1;
      },
    };
  }
}

// Limits toward the model, per run: at most N upstream requests at once and, optionally, at most R
// requests started per second. Jobs of one run on one host share the limiter.
//
// The concurrency limit adapts to the upstream (AIMD, additive increase and multiplicative decrease):
// an upstream 429 (or an answer with Retry-After) halves the current limit, at least 1, once per
// congestion event (a call that started before the last decrease does not halve it again); each
// `limit` successful calls since then raise it by 1, up to the configured N.

export interface LimiterSlot {
  release: () => void;
  /** Whether the caller had to wait. */
  queued: boolean;
  /** The limit when the slot was given. */
  limit: number;
  /** The upstream throttled this call (429 or Retry-After): halves the limit unless an earlier throttle already did for this round. */
  throttled: () => void;
  /** The upstream answered this call without throttling it. */
  succeeded: () => void;
}

export class RunLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private nextStartMs = 0;
  /** The current concurrency limit: `concurrency` until the upstream throttles. */
  private limit: number;
  /** Decreases so far: a slot remembers the count it started under. */
  private decreases = 0;
  /** Successful calls since the limit last changed. */
  private successes = 0;

  constructor(
    private readonly concurrency: number,
    private readonly ratePerSecond?: number,
  ) {
    this.limit = concurrency;
  }

  /** The concurrency limit now (the configured one unless throttling lowered it). */
  get currentLimit(): number {
    return this.limit;
  }

  /** Resolves with the slot: release it once the call is done, and say how the upstream answered. */
  async acquire(): Promise<LimiterSlot> {
    let queued = false;
    if (this.active >= this.limit) {
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
    let round = this.decreases;
    return {
      queued,
      limit: this.limit,
      release: () => {
        if (released) return;
        released = true;
        const next = this.waiting.shift();
        // The slot passes straight to the next waiter, unless a decrease left more calls running than the limit.
        if (next && this.active <= this.limit) next();
        else {
          if (next) this.waiting.unshift(next);
          this.active -= 1;
        }
      },
      throttled: () => {
        if (round === this.decreases) {
          this.limit = Math.max(1, Math.floor(this.limit / 2));
          this.decreases += 1;
          this.successes = 0;
        }
        // The call's retry starts after the latest decrease: its own 429 would be a new congestion event.
        round = this.decreases;
      },
      succeeded: () => {
        if (this.limit >= this.concurrency) return;
        this.successes += 1;
        if (this.successes < this.limit) return;
        this.limit += 1;
        this.successes = 0;
        this.admit();
      },
    };
  }

  /** Lets waiters in while the (raised) limit has room. */
  private admit(): void {
    while (this.active < this.limit && this.waiting.length) {
      this.active += 1;
      this.waiting.shift()!();
    }
  }
}

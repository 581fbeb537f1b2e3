// How many task containers a host runs at once. A job's first attempt runs on the shared queue's worker
// and its later ones on the host queue's: each Temporal worker bounds its own activities, and this one
// count, taken before a container is created and given back once it is removed, bounds them together.

export class ContainerSlots {
  private inUse = 0;
  /** Waiters for a slot, first come first served. */
  private readonly waiting: Array<() => void> = [];

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`container slots: capacity must be a positive integer, got ${capacity}`);
  }

  /** Slots taken now. */
  used(): number {
    return this.inUse;
  }

  /** Resolves with a release function once a slot is free; rejects with the signal's reason if it aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.inUse < this.capacity) {
      this.inUse += 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.releaser());
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  /** A release that gives the slot back once, however often it is called: to the longest waiter, if any. */
  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.inUse -= 1;
    };
  }
}

// A worker that starts before its Temporal server (both coming up after a reboot, or the server
// restarting) waits for it instead of exiting: it has containers on this host to reattach to.

import { setTimeout as sleep } from 'node:timers/promises';

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 5_000;
/** How often the wait is reported: often enough to be seen, rarely enough not to flood the log. */
const REPORT_EVERY_MS = 30_000;

/** Calls `connect` until it succeeds, backing off to MAX_DELAY_MS between tries. */
export async function connectPatiently<T>(connect: () => Promise<T>, address: string, say: (line: string) => void): Promise<T> {
  let delay = FIRST_DELAY_MS;
  let reportedAt = 0;
  for (;;) {
    try {
      return await connect();
    } catch (error) {
      if (Date.now() - reportedAt >= REPORT_EVERY_MS) {
        say(`waiting for the Temporal server at ${address}: ${error instanceof Error ? error.message : String(error)}`);
        reportedAt = Date.now();
      }
    }
    await sleep(delay);
    delay = Math.min(MAX_DELAY_MS, delay * 2);
  }
}

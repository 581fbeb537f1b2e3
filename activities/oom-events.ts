// Counts the kernel's out-of-memory kills inside one task container, from the daemon's `oom` events.
// State.OOMKilled only says whether the container's main process died of it; a benchmark's worker
// process can be killed while its shell goes on and exits 0, and that must not pass unnoticed.

import type { DockerEngine } from './docker-engine.js';

export interface OomWatch {
  /**
   * Stops watching and gives the number of OOM events seen. After the container stopped it first
   * waits (briefly) for the container's `die` event, which the daemon sends after any `oom` of it.
   */
  stop(afterExit?: boolean): Promise<number>;
}

const DIE_EVENT_GRACE_MS = 5000;

/**
 * Watches `name` from `sinceSeconds` (Unix time) on: the daemon replays events already past, so a
 * watch begun after the container started (or by a reattaching attempt) still sees early kills.
 */
export async function watchOomEvents(docker: DockerEngine, name: string, sinceSeconds: number): Promise<OomWatch> {
  const watching = new AbortController();
  const stream = await docker.containerEvents(name, ['oom', 'die'], sinceSeconds, watching.signal);
  let count = 0;
  let died: () => void = () => undefined;
  const dieSeen = new Promise<void>((resolve) => (died = resolve));
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (!line) continue;
      try {
        const event = JSON.parse(line) as { Action?: string; status?: string };
        const action = event.Action ?? event.status;
        if (action === 'oom') count += 1;
        if (action === 'die') died();
      } catch {
        // a line the daemon did not mean as JSON: not an event we count
      }
    }
  });
  stream.on('error', () => undefined); // aborting is how the watch ends
  let stopped: Promise<number> | undefined;
  const stop = async (afterExit: boolean) => {
    let timer: NodeJS.Timeout | undefined;
    if (afterExit) await Promise.race([dieSeen, new Promise<void>((resolve) => (timer = setTimeout(resolve, DIE_EVENT_GRACE_MS)))]);
    clearTimeout(timer);
    watching.abort();
    stream.destroy();
    return count;
  };
  return { stop: (afterExit = true) => (stopped ??= stop(afterExit)) };
}

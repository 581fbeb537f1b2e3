// The disk a task may fill: its results directory, its container's writable layer and a DinD task's
// daemon storage. The storage driver here cannot cap a container's layer, so a watchdog measures
// them while the task runs and ends the task when they pass its `resources.disk`.

import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** How often a running task's disk use is measured at most: each measure walks its files and asks the daemon. */
export const DISK_CHECK_INTERVAL_MS = 5_000;
/** The pause after a measure is at least this many times what the measure took. */
const MEASURE_COST_FACTOR = 20;

/**
 * Bytes under `dir`, links not followed; a file that vanishes mid-walk counts as nothing, and a file
 * with several links under `dir` counts once (a task cannot double its charge, nor hide bytes behind
 * a link of its own). With `changedAfterMs`, files whose inode has not changed since then (ctime, which
 * any write, truncation, chmod, chown, link or xattr change moves and no task can set back) are not
 * counted: in a DinD task's copy-on-write clone of the image store (dind-image-store.ts) those are the
 * store's blocks, on disk once for every task. A changed file counts whole.
 */
export async function directoryBytes(dir: string, { changedAfterMs }: { changedAfterMs?: number } = {}): Promise<number> {
  let total = 0;
  const seen = new Set<number>();
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else
        total += await lstat(full).then(
          (s) => {
            if (changedAfterMs !== undefined && s.ctimeMs <= changedAfterMs) return 0;
            if (s.nlink > 1) {
              if (seen.has(s.ino)) return 0;
              seen.add(s.ino);
            }
            return s.size;
          },
          () => 0,
        );
    }
  }
  return total;
}

export interface DiskExceeded {
  usedBytes: number;
  limitBytes: number;
}

/**
 * Resolves when `measure` first reports more than `limitBytes`; never otherwise. Stops measuring when
 * `signal` aborts. A failed measure is skipped: the next one decides.
 */
export function watchDiskUse(
  measure: () => Promise<number>,
  limitBytes: number,
  signal: AbortSignal,
  intervalMs = DISK_CHECK_INTERVAL_MS,
): Promise<DiskExceeded> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const tick = async () => {
      if (signal.aborted) return;
      const started = Date.now();
      const used = await measure().catch(() => 0);
      if (signal.aborted) return;
      if (used > limitBytes) return resolve({ usedBytes: used, limitBytes });
      // A DinD task's daemon storage can hold hundreds of thousands of files: measuring never takes more
      // than a twentieth of the worker's time, however big the task's tree grows.
      timer = setTimeout(() => void tick(), Math.max(intervalMs, MEASURE_COST_FACTOR * (Date.now() - started)));
    };
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    timer = setTimeout(() => void tick(), intervalMs);
  });
}

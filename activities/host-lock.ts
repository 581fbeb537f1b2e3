// A lock held on this host, across processes: several workers (or a worker and `br`) on one machine
// must not build the same image twice. mkdir is atomic; the owner's pid lets a crashed holder's
// lock be taken over instead of blocking forever.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const inProcess = new Map<string, Promise<unknown>>();

export async function withHostLock<T>(locksDir: string, name: string, fn: () => Promise<T>, onWait?: () => void): Promise<T> {
  // Same-process callers queue on a promise chain; only the head of the chain touches the filesystem.
  const previous = inProcess.get(name) ?? Promise.resolve();
  const run = previous
    .catch(() => undefined)
    .then(async () => {
      const release = await acquireDirLock(locksDir, name, onWait);
      try {
        return await fn();
      } finally {
        release();
      }
    });
  inProcess.set(name, run);
  try {
    return await run;
  } finally {
    if (inProcess.get(name) === run) inProcess.delete(name);
  }
}

async function acquireDirLock(locksDir: string, name: string, onWait?: () => void): Promise<() => void> {
  mkdirSync(locksDir, { recursive: true });
  const dir = path.join(locksDir, `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.lock`);
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'owner'), String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (holderIsGone(dir)) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      onWait?.();
      await sleep(200);
    }
  }
}

function holderIsGone(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(dir, 'owner'), 'utf8'));
  } catch {
    return false; // being created right now: the owner writes its pid just after mkdir
  }
  return !Number.isInteger(pid) || pid <= 0 || processGone(pid);
}

/** Whether no process of that pid runs on this machine (one of another user's still counts as running). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

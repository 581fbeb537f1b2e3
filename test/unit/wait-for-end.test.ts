// How an attempt follows its task to the end (activities/run-task-container.ts waitForEnd), against a
// fake task: the wait request's answer, the log stream that breaks when the daemon leaves (a daemon stopped
// with --live-restore leaves the wait unanswered), and a log stream that ends while the wait says nothing.

import { describe, expect, it } from 'vitest';
import { DockerError } from '../../activities/docker-engine.js';
import type { RunningTask, TaskState } from '../../activities/engines/engine.js';
import { waitForEnd } from '../../activities/run-task-container.js';
import type { DiskExceeded } from '../../activities/disk-watchdog.js';

const never = <T>() => new Promise<T>(() => undefined);
const ctx = { cancelled: never<never>() };
const noDiskLimit = () => never<DiskExceeded>();
const state = (running: boolean) => ({ id: 'c1', running }) as TaskState;

/** A task whose wait request answers when `answer` does, and whose inspects say it is `running` or not. */
function daemon(running: boolean, answer = never<number>()) {
  const inspected: number[] = [];
  const docker: Pick<RunningTask, 'wait' | 'state'> = {
    wait: () => answer,
    state: async () => {
      inspected.push(Date.now());
      return state(running);
    },
  };
  return { docker, inspected };
}

// Real timers: the waits are node:timers/promises', which fake timers do not reach.
describe('waitForEnd', () => {
  const deadline = () => Date.now() + 600_000;

  it('ends when the wait request answers, without inspecting the container', async () => {
    const { docker, inspected } = daemon(true, Promise.resolve(0));
    await expect(waitForEnd(ctx, docker, deadline(), never(), noDiskLimit)).resolves.toEqual({ kind: 'exited' });
    expect(inspected).toEqual([]);
  });

  it("fails at once with the log stream's error when the daemon leaves and the wait says nothing", async () => {
    const { docker } = daemon(true);
    const gone = new DockerError('container logs', null, 'aborted');
    await expect(waitForEnd(ctx, docker, deadline(), Promise.reject(gone), noDiskLimit)).rejects.toBe(gone);
  });

  it('reads the container state 2 s after its log stream ended, when the wait has said nothing, and ends on it', async () => {
    const { docker, inspected } = daemon(false);
    const started = Date.now();
    await expect(waitForEnd(ctx, docker, deadline(), Promise.resolve(), noDiskLimit)).resolves.toEqual({ kind: 'exited' });
    expect(inspected).toHaveLength(1);
    expect(inspected[0]! - started).toBeGreaterThanOrEqual(1_990);
  });

  it('times out at its deadline when nothing else ends it', async () => {
    const { docker, inspected } = daemon(true);
    await expect(waitForEnd(ctx, docker, Date.now() + 50, never(), noDiskLimit)).resolves.toEqual({ kind: 'timed_out' });
    expect(inspected).toEqual([]);
  });
});

// Which stopped containers count as killed by an outage (and are started again once) rather than
// as their benchmark's own exit. Pure: no Docker, no Temporal.

import { describe, expect, it } from 'vitest';
import type { ContainerState } from '../../activities/docker-engine.js';
import { killedByOutage, killedFromOutside, neverStarted, OUTAGE_RESTART_LABEL } from '../../activities/outage-restart.js';

const TIMEOUT_SECONDS = 120;

function stopped(fields: Partial<ContainerState> = {}): ContainerState {
  return {
    id: 'c1',
    running: false,
    exitCode: 137,
    startedAt: '2026-11-30T12:00:00.000Z',
    finishedAt: '2026-11-30T12:00:30.000Z',
    oomKilled: false,
    labels: {},
    ...fields,
  };
}

describe('a stopped container found by a later attempt', () => {
  it('counts as killed by an outage when SIGKILL or SIGTERM ended it before its deadline', () => {
    expect(killedByOutage(stopped({ exitCode: 137 }), TIMEOUT_SECONDS)).toBe(true);
    expect(killedByOutage(stopped({ exitCode: 143 }), TIMEOUT_SECONDS)).toBe(true);
  });

  it('is its benchmark’s own outcome when it exited with any other code', () => {
    for (const exitCode of [0, 1, 2, 139]) expect(killedByOutage(stopped({ exitCode }), TIMEOUT_SECONDS)).toBe(false);
  });

  it('is its benchmark’s own outcome when the OOM killer ended it', () => {
    expect(killedByOutage(stopped({ oomKilled: true }), TIMEOUT_SECONDS)).toBe(false);
  });

  it('is BenchRouter’s timeout kill when it ended at or after its deadline', () => {
    expect(killedByOutage(stopped({ finishedAt: '2026-11-30T12:02:00.000Z' }), TIMEOUT_SECONDS)).toBe(false);
  });

  it('is not restarted a second time', () => {
    expect(killedByOutage(stopped({ labels: { [OUTAGE_RESTART_LABEL]: 'true' } }), TIMEOUT_SECONDS)).toBe(false);
  });

  it('is left alone while it runs, and when Docker gave it no valid times', () => {
    expect(killedByOutage(stopped({ running: true }), TIMEOUT_SECONDS)).toBe(false);
    expect(killedByOutage(stopped({ finishedAt: '0001-01-01T00:00:00Z', startedAt: 'garbage' }), TIMEOUT_SECONDS)).toBe(false);
  });
});

describe('a container the attempt watched exit by a signal', () => {
  /** A daemon that recorded these `kill` signals for the container, and its `die` or not; counts the questions. */
  function daemonThatSaw(kills: string[], died: boolean) {
    const asked: string[] = [];
    return {
      asked,
      endEvents: async (id: string) => {
        asked.push(id);
        return { kills, died };
      },
    };
  }

  it('was killed from outside when the daemon recorded a kill of it', async () => {
    expect(await killedFromOutside(daemonThatSaw(['15', '9'], true), stopped(), TIMEOUT_SECONDS, false)).toBe(true);
  });

  it('ended by its benchmark’s own doing when the daemon recorded its death and no kill', async () => {
    expect(await killedFromOutside(daemonThatSaw([], true), stopped(), TIMEOUT_SECONDS, true)).toBe(false);
  });

  it('was killed by an outage when the daemon has no record of its end and went away meanwhile: it was restarted since', async () => {
    expect(await killedFromOutside(daemonThatSaw([], false), stopped(), TIMEOUT_SECONDS, true)).toBe(true);
  });

  it('ended by its benchmark’s own doing when the daemon, there all along, has no record of its end (its event buffer moved on)', async () => {
    expect(await killedFromOutside(daemonThatSaw([], false), stopped(), TIMEOUT_SECONDS, false)).toBe(false);
  });

  it('is not asked about when its exit was not a kill, or was the OOM killer’s', async () => {
    const daemon = daemonThatSaw([], false);
    expect(await killedFromOutside(daemon, stopped({ exitCode: 1 }), TIMEOUT_SECONDS, true)).toBe(false);
    expect(await killedFromOutside(daemon, stopped({ oomKilled: true }), TIMEOUT_SECONDS, true)).toBe(false);
    expect(daemon.asked).toEqual([]);
  });
});

describe('a container found by a later attempt that never started', () => {
  it('is told apart by Docker’s zero start time', () => {
    expect(neverStarted(stopped({ exitCode: 0, startedAt: '0001-01-01T00:00:00Z', finishedAt: '0001-01-01T00:00:00Z' }))).toBe(true);
  });

  it('is not one that ran, or runs', () => {
    expect(neverStarted(stopped({ exitCode: 0 }))).toBe(false);
    expect(neverStarted(stopped({ running: true, finishedAt: '0001-01-01T00:00:00Z' }))).toBe(false);
  });
});

// Which stopped containers count as killed by an outage (and are started again once) rather than
// as their benchmark's own exit. Pure: no Docker, no Temporal.

import { describe, expect, it } from 'vitest';
import type { ContainerState } from '../activities/docker-engine.js';
import { killedByOutage, OUTAGE_RESTART_LABEL } from '../activities/outage-restart.js';

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

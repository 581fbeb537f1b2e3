// The Docker engine's modes (activities/engines/docker/): which one runs a task, and Simple mode's network
// policy (a lent namespace, one of its own, or the host's) against a fake daemon and pool.

import type { Context } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import type { ContainerCreateBody, DockerEngine } from '../../activities/docker-engine.js';
import type { NetnsLease, NetnsPool } from '../../activities/netns-pool.js';
import { simpleMode } from '../../activities/engines/docker/simple-mode.js';
import { modeFor, type ModeScope } from '../../activities/engines/docker/modes.js';
import type { JobSpec } from '../../runs/run-spec.js';
import { sampleTask as task } from '../support/sample-job.js';

describe("the Docker engine's modes", () => {
  it('runs a docker: true task in DinD mode and any other in Simple mode', () => {
    expect(modeFor(task({ docker: true })).name).toBe('dind');
    expect(modeFor(task()).name).toBe('simple');
    expect(modeFor(task({ network: 'host' })).name).toBe('simple');
  });
});

/** A daemon whose creates fail as many times as asked, recording the calls the mode makes. */
function fakeDaemon(failures = 0) {
  const calls: string[] = [];
  const docker = {
    ensureNetwork: async () => {
      calls.push('ensureNetwork');
      return { id: 'n1', options: { 'com.docker.network.bridge.name': 'br-benchrouter' }, gateway: '172.30.0.1' };
    },
    createAndStart: async (name: string) => {
      calls.push(`create ${name}`);
      if (failures-- > 0) throw new Error('cannot join the namespace');
      return { id: 'c1' };
    },
    remove: async (nameOrId: string) => void calls.push(`remove ${nameOrId}`),
  } as unknown as DockerEngine;
  return { docker, calls };
}

/** A pool that lends holder-1, holder-2... and records leases, releases and discards. */
function fakePool() {
  const calls: string[] = [];
  let next = 1;
  const pool = {
    lease: async (name: string): Promise<NetnsLease> => {
      calls.push(`lease ${name}`);
      return { networkMode: `container:holder-${next++}`, mounts: [] };
    },
    release: (name: string) => void calls.push(`release ${name}`),
    discard: async (name: string) => void calls.push(`discard ${name}`),
  } as unknown as NetnsPool;
  return { pool, calls };
}

function scope(docker: DockerEngine, netns: NetnsPool | undefined, network: 'isolated' | 'host' = 'isolated'): ModeScope {
  const ctx = { log: { warn: () => undefined, info: () => undefined } } as unknown as Context;
  return {
    deps: { docker, netns, dindStorageRoot: '/nonexistent', dindStoreDir: '/nonexistent', dindStoreMaxBytes: 0, locksDir: '/nonexistent' },
    job: { jobId: 'run.001-addition', task: task({ network }) } as JobSpec,
    image: 'benchrouter/arith-python:0123abcd',
    archives: [],
    name: 'br-host-run.001-addition',
    ctx,
    beatingWhile: (_details, work) => work,
  };
}

const body = { Image: 'image', Entrypoint: [], Cmd: [], Env: [], Labels: {}, WorkingDir: '/', HostConfig: {} } as ContainerCreateBody;

describe('Simple mode', () => {
  it('joins a namespace lent by the pool, and gives it back with the container', async () => {
    const { docker, calls } = fakeDaemon();
    const { pool, calls: lent } = fakePool();
    const mode = simpleMode.open(scope(docker, pool));
    const placements: unknown[] = [];
    expect(await mode.start((placement) => (placements.push(placement), body))).toEqual({ id: 'c1' });
    expect(placements).toEqual([{ hostAddress: undefined, netns: { networkMode: 'container:holder-1', mounts: [] } }]);
    await mode.remove('c1');
    expect(calls).toEqual(['create br-host-run.001-addition', 'remove c1']);
    expect(lent).toEqual(['lease br-host-run.001-addition', 'release br-host-run.001-addition']);
  });

  it('starts once more in a fresh namespace when its lent one fails, dropping that one', async () => {
    const { docker, calls } = fakeDaemon(1);
    const { pool, calls: lent } = fakePool();
    const placements: unknown[] = [];
    expect(await simpleMode.open(scope(docker, pool)).start((placement) => (placements.push(placement), body))).toEqual({ id: 'c1' });
    expect(placements.map((placement) => (placement as { netns: NetnsLease }).netns.networkMode)).toEqual(['container:holder-1', 'container:holder-2']);
    expect(calls).toEqual(['create br-host-run.001-addition', 'remove br-host-run.001-addition', 'create br-host-run.001-addition']);
    expect(lent).toEqual(['lease br-host-run.001-addition', 'discard br-host-run.001-addition', 'lease br-host-run.001-addition']);
  });

  it('without a pool, gets a namespace of its own on the task network, named by the host address there', async () => {
    const { docker, calls } = fakeDaemon();
    const placements: unknown[] = [];
    await simpleMode.open(scope(docker, undefined)).start((placement) => (placements.push(placement), body));
    expect(placements).toEqual([{ hostAddress: '172.30.0.1', netns: undefined }]);
    expect(calls).toEqual(['ensureNetwork', 'create br-host-run.001-addition']);
  });

  it('on the host network, borrows no namespace and needs no task network', async () => {
    const { docker, calls } = fakeDaemon();
    const { pool, calls: lent } = fakePool();
    const placements: unknown[] = [];
    await simpleMode.open(scope(docker, pool, 'host')).start((placement) => (placements.push(placement), body));
    expect(placements).toEqual([{ hostAddress: undefined, netns: undefined }]);
    expect(calls).toEqual(['create br-host-run.001-addition']);
    expect(lent).toEqual([]);
  });

  it('fails without a retry when there is no lent namespace to blame', async () => {
    const { docker, calls } = fakeDaemon(1);
    await expect(simpleMode.open(scope(docker, undefined)).start(() => body)).rejects.toThrow('cannot join the namespace');
    expect(calls).toEqual(['ensureNetwork', 'create br-host-run.001-addition']);
  });
});

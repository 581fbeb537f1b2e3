// ContainerSlots (activities/container-slots.ts): one bound on a host's containers shared by the
// worker's two activity queues; how readers without a worker tell which host a running job is on; and
// what a worker start removes (orphaned containers, unused namespace holders) does not stop it when
// Docker will not remove one now.

import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DockerEngine } from '../../activities/docker-engine.js';
import { ContainerSlots } from '../../activities/container-slots.js';
import { NETNS_HOLDER_LABEL, NetnsPool } from '../../activities/netns-pool.js';
import { currentHostOf, lastHostInHistory } from '../../client/job-host.js';
import { hostOfWorkerIdentity, workerIdentity } from '../../runs/worker-identity.js';
import { sweepOrphans } from '../../workers/sweep-orphans.js';

const settled = async <T>(promise: Promise<T>): Promise<'pending' | 'settled'> =>
  Promise.race([
    promise.then(
      () => 'settled' as const,
      () => 'settled' as const,
    ),
    new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 10)),
  ]);

describe('ContainerSlots', () => {
  it('grants up to its capacity at once, then the longest waiter first as slots come back', async () => {
    const slots = new ContainerSlots(2);
    const first = await slots.acquire();
    await slots.acquire();
    const order: string[] = [];
    const third = slots.acquire().then((release) => (order.push('third'), release));
    const fourth = slots.acquire().then((release) => (order.push('fourth'), release));
    expect(await settled(third)).toBe('pending');
    expect(slots.used()).toBe(2);
    first();
    first(); // a second call gives nothing back twice
    await third;
    expect(await settled(fourth)).toBe('pending');
    (await third)();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
    expect(slots.used()).toBe(2);
  });

  it("a waiter whose signal aborts leaves the queue with the signal's reason, and takes no slot", async () => {
    const slots = new ContainerSlots(1);
    const release = await slots.acquire();
    const cancel = new AbortController();
    const waiting = slots.acquire(cancel.signal);
    const after = slots.acquire();
    cancel.abort(new Error('job cancelled'));
    await expect(waiting).rejects.toThrow('job cancelled');
    release();
    (await after)();
    expect(slots.used()).toBe(0);
    await expect(slots.acquire(cancel.signal)).rejects.toThrow('job cancelled');
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new ContainerSlots(0)).toThrow(/positive integer, got 0/);
    expect(() => new ContainerSlots(1.5)).toThrow(/positive integer/);
  });
});

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

describe('the host a running job is on', () => {
  const activity = (identity: string, name = 'runJobOnHost') => ({ activityType: { name }, lastWorkerIdentity: identity });

  it("reads a worker identity's host, whatever the host id holds", () => {
    expect(hostOfWorkerIdentity(workerIdentity('gpu-1.lab:a', 4242))).toBe('gpu-1.lab:a');
    expect(hostOfWorkerIdentity('someone-else@host')).toBeUndefined();
  });

  it('is the host queue the host activity is pinned to, else the worker that took its first attempt', () => {
    const pinned = { activityType: { name: 'runJobOnHost' }, lastWorkerIdentity: '', activityOptions: { taskQueue: { name: 'bq@gpu-2' } } };
    const onShared = { ...activity(workerIdentity('w', 1)), activityOptions: { taskQueue: { name: 'bq' } } };
    expect(currentHostOf({ raw: { pendingActivities: [pinned] } }, 'bq')).toBe('gpu-2');
    expect(currentHostOf({ raw: { pendingActivities: [activity(workerIdentity('x', 1), 'repeatCounts'), onShared] } }, 'bq')).toBe('w');
  });

  it('is unknown while no worker has taken a first attempt', () => {
    expect(currentHostOf({ raw: { pendingActivities: [{ ...activity(''), activityOptions: { taskQueue: { name: 'bq' } } }] } }, 'bq')).toBeUndefined();
    expect(currentHostOf({ raw: {} }, 'bq')).toBeUndefined();
  });

  it("is, between attempts, the host of the history's latest host activity: its pinned queue, or the worker of a first attempt", () => {
    // Event ids are Longs in the SDK's history; the reader compares them as strings.
    const scheduled = (eventId: number, queue: string, name = 'runJobOnHost') =>
      ({ eventId, activityTaskScheduledEventAttributes: { activityType: { name }, taskQueue: { name: queue } } }) as unknown as HistoryEvent;
    const started = (scheduledEventId: number, identity: string) =>
      ({ activityTaskStartedEventAttributes: { scheduledEventId, identity } }) as unknown as HistoryEvent;
    const firstAttempt = [scheduled(5, 'bq'), started(5, workerIdentity('a', 7))];
    expect(lastHostInHistory(firstAttempt, 'bq')).toBe('a');
    expect(lastHostInHistory([...firstAttempt, scheduled(9, 'bq@b')], 'bq')).toBe('b');
    expect(lastHostInHistory([...firstAttempt, scheduled(9, 'bq@b'), started(9, workerIdentity('b', 1)), scheduled(12, 'bq', 'repeatCounts')], 'bq')).toBe('b');
    expect(lastHostInHistory([scheduled(5, 'bq')], 'bq')).toBeUndefined();
  });
});

type Listed = { id: string; name: string; labels: Record<string, string>; state: string };

/** An engine that lists `listed(filters)` and removes every container but `stuckId`, whose removal throws `error`. */
function engineWithStuckContainer(listed: (filters: string[]) => Listed[], stuckId: string, error: string) {
  const removedIds: string[] = [];
  const docker = {
    listContainers: async (filters: string[]) => listed(filters),
    remove: async (id: string) => {
      if (id === stuckId) throw new Error(error);
      removedIds.push(id);
    },
  } as unknown as DockerEngine;
  return { docker, removedIds };
}

describe('the orphan sweep at a worker start', () => {
  it('keeps going past a container Docker will not remove now, says so, and removes the rest', async () => {
    const { docker, removedIds } = engineWithStuckContainer(
      () => [
        { id: 'c1', name: 'stuck', labels: {}, state: 'exited' },
        { id: 'c2', name: 'plain', labels: {}, state: 'exited' },
      ],
      'c1',
      'container remove: 409 removal of container c1 is already in progress',
    );
    const said: string[] = [];
    const removed = await sweepOrphans({
      docker,
      client: {} as Client, // containers without a job label never ask the server
      hostId: 'h',
      sharedQueue: 'bq',
      dindStorageRoot: path.join(os.tmpdir(), `br-sweep-none-${process.pid}`),
      say: (line) => said.push(line),
    });
    expect(removed).toEqual(['plain']);
    expect(removedIds).toEqual(['c2']);
    expect(said).toEqual([
      'could not remove orphaned container stuck (it has no job label): container remove: 409 removal of container c1 is already in progress',
      'removed orphaned container plain (it has no job label; not on h any more)',
    ]);
  });

  it("sweeps the tasks its engine holds for the host (a Kubernetes host's pods) on the same rule, and starts when the engine cannot list them", async () => {
    const { docker } = engineWithStuckContainer(() => [], '', '');
    const removedPods: string[] = [];
    const pod = (name: string, labels: Record<string, string>) => ({ name, labels, remove: async () => void removedPods.push(name) });
    // The server knows no job of these: each workflow reads as ended.
    const client = {
      workflow: {
        getHandle: () => ({ describe: async () => ({ status: { name: 'COMPLETED' } }) }),
      },
    } as unknown as Client;
    const said: string[] = [];
    const base = { docker, client, hostId: 'h', sharedQueue: 'bq', dindStorageRoot: path.join(os.tmpdir(), `br-sweep-none-${process.pid}`) };
    const removed = await sweepOrphans({
      ...base,
      engineTasks: async () => [pod('pod/ns/ended', { 'benchrouter.job': 'br-x.000-a' }), pod('pod/ns/unlabelled', {})],
      say: (line) => said.push(line),
    });
    expect(removed).toEqual(['pod/ns/ended', 'pod/ns/unlabelled']);
    expect(removedPods).toEqual(['pod/ns/ended', 'pod/ns/unlabelled']);
    expect(said).toEqual([
      'removed orphaned task pod/ns/ended (job br-x.000-a is COMPLETED; not on h any more)',
      'removed orphaned task pod/ns/unlabelled (it has no job label; not on h any more)',
    ]);

    said.length = 0;
    const listingFails = async () => {
      throw new Error('HTTP 403: pods is forbidden');
    };
    expect(await sweepOrphans({ ...base, engineTasks: listingFails, say: (line) => said.push(line) })).toEqual([]);
    expect(said).toEqual(["could not list this host's tasks on its engine: HTTP 403: pods is forbidden"]);
  });

  it('starts past a namespace holder Docker will not remove now, naming it, and removes the others', async () => {
    const { docker, removedIds } = engineWithStuckContainer(
      (filters) =>
        filters.some((f) => f.startsWith(NETNS_HOLDER_LABEL))
          ? [
              { id: 'h1', name: 'br-netns-h-0', labels: {}, state: 'running' },
              { id: 'h2', name: 'br-netns-h-1', labels: {}, state: 'exited' },
            ]
          : [],
      'h1',
      'container remove: timed out after 30 s',
    );
    const pool = new NetnsPool(docker, 'h', path.join(os.tmpdir(), `br-netns-none-${process.pid}`), 'img');
    expect(await pool.adoptExisting()).toEqual([
      'could not remove the unused namespace holder br-netns-h-0 (the next start tries again): container remove: timed out after 30 s',
    ]);
    expect(removedIds).toEqual(['h2']);
  });
});

// The worker's one stream of containers' OOM events (activities/oom-events.ts OomEventHub), against a
// fake daemon whose event streams the test writes: counts per container, the wait for `die`, and a
// stream the daemon closed reopened from the last event, with nothing counted twice.

import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import type { DockerEngine } from '../../activities/docker-engine.js';
import { OomEventHub, watchOomEvents } from '../../activities/oom-events.js';

/** A daemon whose `events` calls are recorded and answered with streams the test writes to (or refused while `down`). */
function fakeDaemon() {
  const opened: { filters: Record<string, string[]>; since: number | undefined; stream: PassThrough }[] = [];
  const state = { down: false, refused: 0 };
  const docker = {
    events: async (filters: Record<string, string[]>, since: number | undefined) => {
      if (state.down) {
        state.refused += 1;
        throw new Error('docker events failed (no answer): connect ENOENT /var/run/docker.sock');
      }
      const stream = new PassThrough();
      opened.push({ filters, since, stream });
      return stream;
    },
  } as unknown as DockerEngine;
  const emit = (name: string, action: string, timeNano: number, stream = opened.at(-1)!.stream) =>
    stream.write(`${JSON.stringify({ Type: 'container', Action: action, timeNano, Actor: { Attributes: { name } } })}\n`);
  return { docker, opened, emit, state };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const SECOND = 1_000_000_000;

describe('OomEventHub', () => {
  it('follows every watched container on one stream, counting each one its own kills', async () => {
    const daemon = fakeDaemon();
    const hub = new OomEventHub(daemon.docker);
    const a = await hub.watch('task-a');
    const b = await hub.watch('task-b');
    expect(daemon.opened).toHaveLength(1);
    expect(daemon.opened[0]!.filters).toEqual({ type: ['container'], event: ['oom', 'die'], label: ['benchrouter.managed=true'] });
    expect(daemon.opened[0]!.since).toBeUndefined();

    const now = Date.now() * 1e6;
    daemon.emit('task-a', 'oom', now + 1);
    daemon.emit('task-b', 'oom', now + 2);
    daemon.emit('task-a', 'oom', now + 3);
    daemon.emit('someone-else', 'oom', now + 4);
    daemon.emit('task-a', 'die', now + 5);
    daemon.emit('task-b', 'die', now + 6);
    await tick();
    expect(await a.stop()).toBe(2);
    expect(await b.stop()).toBe(1);
    hub.close();
  });

  it('waits for the container to die before it counts, so a kill reported just before it is not lost', async () => {
    const daemon = fakeDaemon();
    const hub = new OomEventHub(daemon.docker);
    const watch = await hub.watch('task-a');
    const counted = watch.stop(true);
    const now = Date.now() * 1e6;
    daemon.emit('task-a', 'oom', now + 1);
    daemon.emit('task-a', 'die', now + 2);
    expect(await counted).toBe(1);
    hub.close();
  });

  it('reopens a stream the daemon closed from its last event, counting nothing twice', async () => {
    const daemon = fakeDaemon();
    const hub = new OomEventHub(daemon.docker);
    const watch = await hub.watch('task-a');
    const last = (Math.floor(Date.now() / 1000) + 1) * SECOND + 500;
    daemon.emit('task-a', 'oom', last);
    await tick();
    expect(watch.streamLost()).toBe(false);
    daemon.opened[0]!.stream.end();
    await tick();
    await tick();

    expect(daemon.opened).toHaveLength(2);
    // The watch saw its daemon go away; one begun on the reopened stream did not.
    expect(watch.streamLost()).toBe(true);
    const later = await hub.watch('task-b');
    expect(later.streamLost()).toBe(false);
    await later.stop(false);
    expect(daemon.opened[1]!.since).toBe(Math.floor(last / SECOND));
    // The daemon replays the whole second: the kill already counted comes again, then a new one.
    daemon.emit('task-a', 'oom', last);
    daemon.emit('task-a', 'oom', last + SECOND);
    daemon.emit('task-a', 'die', last + SECOND + 1);
    await tick();
    expect(await watch.stop()).toBe(2);
    hub.close();
  });

  it('says once that the daemon is away while it retries, and once that its events are followed again', async () => {
    vi.useFakeTimers();
    try {
      const daemon = fakeDaemon();
      const said: string[] = [];
      const hub = new OomEventHub(daemon.docker, (line) => said.push(line));
      await hub.watch('task-a');
      daemon.state.down = true;
      daemon.opened[0]!.stream.destroy(new Error('aborted'));
      await vi.advanceTimersByTimeAsync(20_000);
      expect(daemon.state.refused).toBeGreaterThanOrEqual(20);
      expect(said).toEqual([expect.stringMatching(/^warning: the daemon's container events could not be followed again \(.*ENOENT.*\); retrying every 1 s$/)]);
      daemon.state.down = false;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(daemon.opened).toHaveLength(2);
      expect(said).toHaveLength(2);
      expect(said[1]).toMatch(/^the daemon's container events are followed again, after 2[01] s$/);
      hub.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves a closed stream closed while nothing is watched, and opens it again for the next watch', async () => {
    const daemon = fakeDaemon();
    const hub = new OomEventHub(daemon.docker);
    const watch = await hub.watch('task-a');
    daemon.emit('task-a', 'die', Date.now() * 1e6 + 1);
    expect(await watch.stop()).toBe(0);
    daemon.opened[0]!.stream.end();
    await tick();
    expect(daemon.opened).toHaveLength(1);
    await hub.watch('task-b');
    expect(daemon.opened).toHaveLength(2);
    hub.close();
  });
});

describe("watchOomEvents (a stream of the container's own)", () => {
  /** A daemon answering containerEvents with one stream the test ends. */
  async function watched() {
    const stream = new PassThrough();
    const docker = { containerEvents: async () => stream } as unknown as DockerEngine;
    return { stream, watch: await watchOomEvents(docker, 'task-a', 0) };
  }

  it('says its stream was lost when the daemon ended it', async () => {
    const { stream, watch } = await watched();
    expect(watch.streamLost()).toBe(false);
    stream.end();
    stream.resume();
    await tick();
    expect(watch.streamLost()).toBe(true);
    await watch.stop(false);
  });

  it('does not count its own stop as a loss', async () => {
    const { watch } = await watched();
    await watch.stop(false);
    await tick();
    expect(watch.streamLost()).toBe(false);
  });
});

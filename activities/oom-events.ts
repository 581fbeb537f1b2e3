// Counts the kernel's out-of-memory kills inside one task container, from the daemon's `oom` events.
// State.OOMKilled only says whether the container's main process died of it; a benchmark's worker
// process can be killed while its shell goes on and exits 0, and that must not pass unnoticed.

import type { Readable } from 'node:stream';
import { LABELS } from './container-spec.js';
import { eventAction, type DockerEngine, type DockerEvent } from './docker-engine.js';
import type { OomWatch } from './engines/engine.js';

const DIE_EVENT_GRACE_MS = 5000;
/** How soon the hub opens its stream again after the daemon closed it (a daemon restart), while it has watches. */
const RECONNECT_MS = 1000;

/** Calls `onEvent` with each event of the daemon's newline-delimited JSON event stream. */
function onEvents(stream: Readable, onEvent: (event: DockerEvent) => void): void {
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (!line) continue;
      let event: DockerEvent;
      try {
        event = JSON.parse(line) as DockerEvent;
      } catch {
        continue; // a line the daemon did not mean as JSON: not an event we count
      }
      onEvent(event);
    }
  });
}

/**
 * One container's `oom` events so far, and whether its `die` came: after the container stopped, its
 * watch's `stop` waits (briefly) for the `die`, which the daemon sends after any `oom` of it.
 */
class Tally {
  ooms = 0;
  private died: () => void = () => undefined;
  readonly dieSeen = new Promise<void>((resolve) => (this.died = resolve));

  see(event: DockerEvent): void {
    const action = eventAction(event);
    if (action === 'oom') this.ooms += 1;
    if (action === 'die') this.died();
  }

  /** A watch over this tally; `close` ends what feeds it, `streamLost` says whether it broke meanwhile. */
  watch(close: () => void, streamLost: () => boolean): OomWatch {
    let stopped: Promise<number> | undefined;
    const stop = async (afterExit: boolean) => {
      let timer: NodeJS.Timeout | undefined;
      if (afterExit) await Promise.race([this.dieSeen, new Promise<void>((resolve) => (timer = setTimeout(resolve, DIE_EVENT_GRACE_MS)))]);
      clearTimeout(timer);
      close();
      return this.ooms;
    };
    return { stop: (afterExit = true) => (stopped ??= stop(afterExit)), streamLost };
  }
}

/**
 * Watches `name` from `sinceSeconds` (Unix time) on, with a stream of its own: the daemon replays events
 * already past, so a watch begun after the container started (a reattaching attempt) still sees early kills.
 */
export async function watchOomEvents(docker: DockerEngine, name: string, sinceSeconds: number): Promise<OomWatch> {
  const watching = new AbortController();
  const stream = await docker.containerEvents(name, ['oom', 'die'], sinceSeconds, watching.signal);
  const tally = new Tally();
  onEvents(stream, (event) => tally.see(event));
  // Aborting is how the watch ends; a stream that ends before that lost its daemon.
  let lost = false;
  const onLost = () => (lost ||= !watching.signal.aborted);
  stream.on('error', onLost);
  stream.on('close', onLost);
  stream.on('end', onLost);
  return tally.watch(
    () => {
      watching.abort();
      stream.destroy();
    },
    () => lost,
  );
}

/**
 * One `oom`/`die` event stream for every task container a worker starts, instead of one per container:
 * opening and closing a stream per job cost the worker ~2 ms of CPU and the daemon a subscription of its
 * own (measured, 100 no-op jobs three times each way: 24.0 -> 22.0 ms of worker CPU a job, 9.42 -> 8.91 s).
 * A container is watched before it is created, once the stream is open, so none of its events is missed.
 * When the daemon closes the stream (a restart), the hub opens it again from the last event it saw (the
 * daemon replays from a second's precision; events seen already are skipped by their time).
 */
export class OomEventHub {
  private readonly tallies = new Map<string, Tally>();
  private readonly closing = new AbortController();
  private open?: Promise<void>;
  private stream?: Readable;
  /** The last event's time (ns), or when the first stream opened: where a reopened stream resumes. */
  private seenUntilNano = 0;
  private retry?: NodeJS.Timeout;
  /** When reopening the stream began to fail: the warning is said once an outage, not once a retry. */
  private failingSince?: number;
  /** How many times the daemon closed the stream: a watch whose count moved saw the daemon go away. */
  private losses = 0;

  constructor(
    private readonly docker: DockerEngine,
    private readonly say: (line: string) => void = () => undefined,
  ) {}

  /** Watches the container about to be created as `name`. */
  async watch(name: string): Promise<OomWatch> {
    await this.connect();
    const tally = new Tally();
    this.tallies.set(name, tally);
    const lossesBefore = this.losses;
    return tally.watch(
      () => {
        if (this.tallies.get(name) === tally) this.tallies.delete(name);
      },
      () => this.losses > lossesBefore,
    );
  }

  close(): void {
    clearTimeout(this.retry);
    this.closing.abort();
    this.stream?.destroy();
  }

  private connect(): Promise<void> {
    return (this.open ??= this.openStream().catch((error: unknown) => {
      this.open = undefined;
      throw error;
    }));
  }

  private async openStream(): Promise<void> {
    // A reopened stream replays from the second of the last event seen; up to that event, all was counted.
    const resumeAfterNano = this.seenUntilNano;
    const sinceSeconds = resumeAfterNano > 0 ? Math.floor(resumeAfterNano / 1e9) : undefined;
    if (resumeAfterNano === 0) this.seenUntilNano = Date.now() * 1e6;
    const stream = await this.docker.events(
      { type: ['container'], event: ['oom', 'die'], label: [`${LABELS.managed}=true`] },
      sinceSeconds,
      this.closing.signal,
    );
    this.stream = stream;
    onEvents(stream, (event) => {
      const nano = event.timeNano ?? 0;
      if (nano > 0 && nano <= resumeAfterNano) return; // replayed: seen already
      this.seenUntilNano = Math.max(this.seenUntilNano, nano);
      const name = event.Actor?.Attributes?.name;
      if (name) this.tallies.get(name)?.see(event);
    });
    let lost = false;
    const onLost = () => {
      if (lost || this.closing.signal.aborted) return;
      lost = true;
      this.losses += 1;
      this.open = undefined;
      this.stream = undefined;
      this.reopenWhileWatched();
    };
    stream.on('error', onLost);
    stream.on('close', onLost);
    stream.on('end', onLost);
  }

  /** Reopens the stream for the watches still open; the next watch opens it otherwise. */
  private reopenWhileWatched(): void {
    if (this.tallies.size === 0 || this.closing.signal.aborted) return;
    this.connect().then(
      () => {
        if (this.failingSince === undefined) return;
        this.say(`the daemon's container events are followed again, after ${((Date.now() - this.failingSince) / 1000).toFixed(0)} s`);
        this.failingSince = undefined;
      },
      (error: unknown) => {
        if (this.failingSince === undefined) {
          this.failingSince = Date.now();
          this.say(`warning: the daemon's container events could not be followed again (${(error as Error).message}); retrying every ${RECONNECT_MS / 1000} s`);
        }
        this.retry = setTimeout(() => this.reopenWhileWatched(), RECONNECT_MS);
      },
    );
  }
}

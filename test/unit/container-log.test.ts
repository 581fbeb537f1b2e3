// Following a container's log into its file (activities/container-log.ts) when something fails: a
// stream that breaks while nobody awaits it yet, or a log file that cannot be opened, fails the
// capture (never the worker process) and leaves no file descriptor open. A stand-in daemon stream.

import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureContainerLog } from '../../activities/container-log.js';
import type { DockerEngine } from '../../activities/docker-engine.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-container-log-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The daemon's side: the log stream it hands out, copied to the writer unframed. */
function fakeDocker(source: Readable): DockerEngine {
  const docker: Pick<DockerEngine, 'followLogs' | 'demux' | 'logTail'> = {
    followLogs: async () => source,
    demux: (stream: Readable, out: Writable) => void stream.on('data', (chunk: Buffer) => out.write(chunk)),
    logTail: async () => Buffer.alloc(0),
  };
  return docker as DockerEngine;
}

/** Descriptors this process holds on `file`. */
function openDescriptorsOn(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(path.join('/proc/self/fd', fd)) === file;
    } catch {
      return false;
    }
  }).length;
}

let unhandled: unknown[];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('captureContainerLog', () => {
  it('writes what the stream carried and completes the file when the stream ends', async () => {
    const source = new PassThrough();
    const file = path.join(scratch, 'ends.log');
    const log = await captureContainerLog(fakeDocker(source), 'c1', file);
    source.end('line one\nline two\n');
    await expect(log.finished).resolves.toEqual({ bytes: 18, dropped: 0 });
    expect(readFileSync(file, 'utf8')).toBe('line one\nline two\n');
    await sleep(50); // the descriptor is closed just after the file finishes
    expect(openDescriptorsOn(file)).toBe(0);
  });

  it("cuts the job's secrets before they reach the file, a secret split over reads and one at the very end included", async () => {
    const key = 'sk-job-token-0123456789';
    const source = new PassThrough();
    const file = path.join(scratch, 'secrets.log');
    const log = await captureContainerLog(fakeDocker(source), 'c4', file, [key, 'short']);
    const pieces = ['using key sk-job-tok', 'en-0123456789 now\n', 'again ', 'sk-job-token-0123456789', ' and short, at the end: sk-job-token-01234567', '89'];
    for (const piece of pieces) {
      source.write(piece);
      await sleep(5); // one read each, as a task printing slowly gives them
    }
    source.end();
    await log.finished;
    // A string under six characters is no secret anyone issues: "short" stays.
    expect(readFileSync(file, 'utf8')).toBe('using key [redacted] now\nagain [redacted] and short, at the end: [redacted]');
  });

  it('a stream that breaks before anyone awaits it is no unhandled rejection, fails the capture and closes the file', async () => {
    const source = new PassThrough();
    const file = path.join(scratch, 'breaks.log');
    const log = await captureContainerLog(fakeDocker(source), 'c2', file);
    source.write('partial output\n');
    await sleep(50);
    source.destroy(new Error('socket hang up'));
    // The container is still running: the activity only awaits the capture once it exits.
    await sleep(200);
    expect(unhandled).toEqual([]);
    await expect(log.finished).rejects.toThrow('socket hang up');
    await expect(log.stop()).rejects.toThrow('socket hang up');
    await sleep(50);
    expect(openDescriptorsOn(file)).toBe(0);
  });

  it('a log file that cannot be opened fails the capture instead of throwing from the event loop', async () => {
    const source = new PassThrough();
    const file = path.join(scratch, 'no-such-dir', 'container.log');
    const log = await captureContainerLog(fakeDocker(source), 'c3', file);
    source.write('output\n');
    await expect(log.finished).rejects.toThrow(/ENOENT.*no-such-dir/);
    await log.stop().catch(() => undefined);
    expect(unhandled).toEqual([]);
  });
});

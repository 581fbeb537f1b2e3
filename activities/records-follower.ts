// Follows a running task's records.jsonl and delivers each new valid line as a reward, while the
// container runs: read every POLL_MS from the byte offset after the last whole line delivered, parse
// with the contract's parser (so rewards are exactly the job's final records), hand over in batches.
// Where it stands ({offset, line}) goes into the container activity's heartbeat, so an attempt that
// reattaches resumes after the last line delivered; the job workflow drops lines it already holds.

import type { Context } from '@temporalio/activity';
import { closeSync, read as readCallback } from 'node:fs';
import { promisify } from 'node:util';
import { parseRecordLine } from '../contract/records.js';
import { REWARDS_PAGE_MAX, REWARDS_PER_JOB_MAX, REWARDS_SIGNAL, type Reward, type RewardBatch } from '../runs/rewards.js';
import { JOB_FILES } from '../runs/job-artifacts.js';
import { RECORD_LINE_CAP_BYTES, RECORDS_SIZE_CAP_BYTES } from './records-file.js';
import { openTaskOutputFile } from './task-output-file.js';

const read = promisify(readCallback);
export const POLL_MS = 200;
/**
 * After a delivery, the next waits this long: the first reward of a job goes out within POLL_MS, later
 * ones gather into a signal a second. Each signal is a workflow task and four history events; sent every
 * 200 ms, 64 batches of 32 rewards cost the dev server more CPU than all their jobs' containers did.
 */
export const MIN_DELIVERY_INTERVAL_MS = 1000;
/**
 * Read at most this much per read(2), into one buffer per follower: a fresh 1 MB buffer per tick (every
 * 200 ms for each running job) made the worker's garbage collector its busiest code under 32 containers.
 */
const CHUNK_BYTES = 64 * 1024;
const SIGNAL_TIMEOUT_MS = 10_000;

/** Where delivery stands: the byte offset just past the last line delivered, and that line's number. */
export interface FollowerPosition {
  offset: number;
  line: number;
}

export interface RecordsFollower {
  /** What has been delivered so far, for the heartbeat. */
  position(): FollowerPosition;
  /**
   * Once the task has exited: reads to the end (a last line without `\n` counts) and delivers the
   * rest, but for its last page, which it returns: the activity's result carries it (one signal, one
   * workflow task and four history events fewer per job). `position()` stays where the signals took
   * it, so an attempt that dies before its result is recorded re-reads that page.
   */
  finish(): Promise<RewardBatch | undefined>;
  /** Stops following without reading further (the attempt is giving up or cancelled). */
  stop(): void;
}

export type DeliverRewards = (batch: RewardBatch) => Promise<void>;

/**
 * The container activity's follower: rewards go to its job workflow as signals, and a reattached
 * attempt starts where the last heartbeat (`lastHeartbeat`: its own activity's, or the job's earlier
 * activity's) said delivery stood (a fresh container starts at line 1).
 */
export function followTaskRecords(ctx: Context, resultsDir: string, reattached: boolean, lastHeartbeat: unknown, lineBase = 0): RecordsFollower {
  const execution = ctx.info.workflowExecution;
  // Not started by a workflow: nobody to deliver to.
  if (!execution) return { position: () => ({ offset: 0, line: 0 }), finish: async () => undefined, stop: () => undefined };
  const { workflowId, runId } = execution;
  const job = ctx.client.workflow.getHandle(workflowId, runId);
  // A signal that hangs (an overloaded server) must not hold the activity: it fails and is sent again.
  const deliver = (batch: RewardBatch) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`signal to ${workflowId} took over ${SIGNAL_TIMEOUT_MS} ms`)), SIGNAL_TIMEOUT_MS);
      job
        .signal(REWARDS_SIGNAL, afterLine(batch, lineBase))
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  const follower = followRecords(resultsDir, reattached ? resumePosition(lastHeartbeat) : undefined, deliver, {
    warn: (message) => ctx.log.warn(`job ${workflowId}: ${message}`),
  });
  return { ...follower, finish: async () => afterLine(await follower.finish(), lineBase) };
}

/**
 * A batch numbered after `base`: a container that resumes a job after instances it carried over writes a
 * records.jsonl of its own from line 1, and its lines must come after those the job already holds.
 */
export function afterLine<T extends RewardBatch | undefined>(batch: T, base: number): T {
  if (!batch || base === 0) return batch;
  return { rewards: batch.rewards.map((reward) => ({ ...reward, line: reward.line + base })), throughLine: batch.throughLine + base } as T;
}

/** A position from heartbeat details of an earlier attempt, if they hold a valid one. */
export function resumePosition(details: unknown): FollowerPosition | undefined {
  const records = (details as { records?: unknown } | undefined)?.records as Partial<FollowerPosition> | undefined;
  if (!records || !Number.isSafeInteger(records.offset) || !Number.isSafeInteger(records.line)) return undefined;
  if (records.offset! < 0 || records.line! < 0) return undefined;
  return { offset: records.offset!, line: records.line! };
}

export function followRecords(
  resultsDir: string,
  start: FollowerPosition | undefined,
  deliver: DeliverRewards,
  options: { pollMs?: number; minIntervalMs?: number; warn?: (message: string) => void } = {},
): RecordsFollower {
  const minIntervalMs = options.minIntervalMs ?? MIN_DELIVERY_INTERVAL_MS;
  let lastDeliveryMs = -Infinity;
  const reader = new RecordsReader(resultsDir, start ?? { offset: 0, line: 0 });
  const warn = options.warn ?? (() => undefined);
  let delivered: FollowerPosition = start ?? { offset: 0, line: 0 };
  let stopped = false;
  let failures = 0;
  let busy: Promise<void> = Promise.resolve();

  /**
   * Delivers the whole lines written since the last step. `atEnd` (the task has exited, finish()): a last
   * line without `\n` counts, and the last page is returned instead of sent.
   */
  const step = async (atEnd: boolean): Promise<RewardBatch | undefined> => {
    const { rewards, position } = await reader.next(atEnd);
    // Bad lines alone are not signalled: the next batch's throughLine covers them.
    for (let at = 0; at < rewards.length; at += REWARDS_PAGE_MAX) {
      const page = rewards.slice(at, at + REWARDS_PAGE_MAX);
      const last = at + REWARDS_PAGE_MAX >= rewards.length;
      const batch = { rewards: page, throughLine: last ? position.line : page[page.length - 1]!.line };
      // Kept: `delivered` stays put, so a later attempt reads this step's lines again (the job drops the ones it holds).
      if (last && atEnd) return batch;
      await deliver(batch);
      lastDeliveryMs = Date.now();
    }
    delivered = position;
    reader.commit(position);
    return undefined;
  };
  const tick = async () => {
    if (Date.now() - lastDeliveryMs < minIntervalMs) return; // lines wait for the next delivery; finish() sends at once
    try {
      await step(false);
      failures = 0;
    } catch (error) {
      // The next tick reads again from the last line delivered: nothing is skipped.
      if (failures++ === 0) warn(`records follower: ${error instanceof Error ? error.message : String(error)}; retrying`);
      reader.rewind(delivered);
    }
  };
  const timer = setInterval(() => {
    if (!stopped) busy = busy.then(tick);
  }, options.pollMs ?? POLL_MS);

  return {
    position: () => ({ ...delivered }),
    async finish() {
      clearInterval(timer);
      await busy;
      if (stopped) return undefined;
      stopped = true;
      let kept: RewardBatch | undefined;
      for (let attempt = 1; ; attempt++) {
        try {
          kept = await step(true);
          break;
        } catch (error) {
          reader.rewind(delivered);
          if (attempt === 3) {
            warn(
              `records follower: the last rewards were not delivered (${error instanceof Error ? error.message : String(error)}); the job's records keep them`,
            );
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
        }
      }
      reader.close();
      return kept;
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      void busy.then(() => reader.close());
    },
  };
}

/**
 * Reads records.jsonl from an offset, whole lines only, with the same rules as the job's final read
 * (readRecordsFile): lines numbered from 1 counting blank ones, a BOM on line 1 and a trailing `\r`
 * dropped, a line over RECORD_LINE_CAP_BYTES skipped, nothing read past RECORDS_SIZE_CAP_BYTES.
 */
export class RecordsReader {
  private fd: number | undefined;
  private readAt: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private tooLong = false;
  private line: number;
  private rewarded = 0;
  private rewardedAtCommit = 0;
  /** Reused by every read: what a line keeps of it is copied (keep()). */
  private buffer: Buffer | undefined;

  constructor(
    private readonly resultsDir: string,
    private committed: FollowerPosition,
  ) {
    this.readAt = committed.offset;
    this.line = committed.line;
  }

  /** The rewards of the whole lines written since the last call, and where they end. */
  async next(atEnd: boolean): Promise<{ rewards: Reward[]; position: FollowerPosition }> {
    const rewards: Reward[] = [];
    if (this.fd === undefined) {
      const opened = openTaskOutputFile(this.resultsDir, JOB_FILES.records);
      // Not written yet (or not a file the worker will read): nothing to deliver.
      if (opened.kind !== 'opened') return { rewards, position: this.committed };
      this.fd = opened.fd;
    }
    let position = this.committed;
    const buffer = (this.buffer ??= Buffer.allocUnsafe(CHUNK_BYTES));
    for (;;) {
      const room = Math.min(CHUNK_BYTES, RECORDS_SIZE_CAP_BYTES - this.readAt);
      if (room <= 0) break;
      const { bytesRead } = await read(this.fd, buffer, 0, room, this.readAt);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
        this.keep(chunk.subarray(start, at));
        position = { offset: this.readAt + at + 1, line: this.line + 1 };
        this.finishLine(rewards);
        start = at + 1;
      }
      this.keep(chunk.subarray(start));
      this.readAt += bytesRead;
    }
    if (atEnd && (this.pendingBytes > 0 || this.tooLong)) {
      position = { offset: this.readAt, line: this.line + 1 };
      this.finishLine(rewards);
    }
    return { rewards, position };
  }

  /** Delivered up to `position`: what was read past it stays pending for the next call. */
  commit(position: FollowerPosition): void {
    this.committed = position;
    this.rewardedAtCommit = this.rewarded;
  }

  /** Delivery failed: read again from the last position delivered. */
  rewind(position: FollowerPosition): void {
    this.committed = position;
    this.readAt = position.offset;
    this.line = position.line;
    this.rewarded = this.rewardedAtCommit;
    this.pending = [];
    this.pendingBytes = 0;
    this.tooLong = false;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private finishLine(rewards: Reward[]): void {
    this.line += 1;
    let text: string | undefined;
    if (!this.tooLong) {
      text = (this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes)).toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (this.line === 1) text = text.replace(/^\uFEFF/, '');
    }
    this.pending = [];
    this.pendingBytes = 0;
    this.tooLong = false;
    const outcome = text === undefined ? undefined : parseRecordLine(text, this.line);
    if (!outcome || !('record' in outcome) || this.rewarded >= REWARDS_PER_JOB_MAX) return;
    const { index, score, prompt_tokens, completion_tokens, cost } = outcome.record;
    rewards.push({ line: this.line, instance: index, score, prompt_tokens, completion_tokens, cost });
    this.rewarded += 1;
  }

  private keep(part: Buffer): void {
    if (this.tooLong || part.length === 0) return;
    if (this.pendingBytes + part.length > RECORD_LINE_CAP_BYTES) {
      this.tooLong = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    // Copied: the read buffer is reused by the next read.
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
  }
}

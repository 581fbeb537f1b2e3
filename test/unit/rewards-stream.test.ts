// The pure parts of rewards as they happen: the follower's reading of a growing records.jsonl (whole
// lines only, the contract's rules, resuming from a position) and the stream's cursor.

import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { followRecords, RecordsReader, resumePosition } from '../../activities/records-follower.js';
import { REWARDS_PAGE_MAX } from '../../runs/rewards.js';
import { RewardsCursor } from '../../api/rewards-cursor.js';
import type { RewardBatch } from '../../runs/rewards.js';

let dir: string;
const fresh = () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rewards-'));
  const results = path.join(dir, 'results');
  mkdirSync(results);
  return results;
};
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const line = (index: number | string, score: number) => `${JSON.stringify({ index, score, prompt_tokens: 10, completion_tokens: 2, cost: 0.5 })}\n`;

describe('RecordsReader', () => {
  it('reads whole lines only, numbers them as the final read does, and skips bad ones', async () => {
    const results = fresh();
    const file = path.join(results, 'records.jsonl');
    const reader = new RecordsReader(results, { offset: 0, line: 0 });
    expect(await reader.next(false)).toEqual({ rewards: [], position: { offset: 0, line: 0 } });
    writeFileSync(file, `\uFEFF${line('a', 1)}\n{"index": "b", "score": "high"}\r\n${line('c', 0).slice(0, 10)}`);
    const first = await reader.next(false);
    expect(first.rewards).toEqual([{ line: 1, instance: 'a', score: 1, prompt_tokens: 10, completion_tokens: 2, cost: 0.5 }]);
    const afterBad = Buffer.byteLength(`\uFEFF${line('a', 1)}\n{"index": "b", "score": "high"}\r\n`);
    expect(first.position).toEqual({ offset: afterBad, line: 3 });
    reader.commit(first.position);
    appendFileSync(file, line('c', 0).slice(10, -1));
    expect((await reader.next(false)).rewards).toEqual([]);
    // The task has exited: its last line counts without a newline.
    const last = await reader.next(true);
    expect(last.rewards).toEqual([{ line: 4, instance: 'c', score: 0, prompt_tokens: 10, completion_tokens: 2, cost: 0.5 }]);
    expect(last.position).toEqual({ offset: afterBad + line('c', 0).length - 1, line: 4 });
    reader.close();
  });

  it('resumes from a heartbeat position, and rewinds to the last position delivered', async () => {
    const results = fresh();
    writeFileSync(path.join(results, 'records.jsonl'), line(0, 1) + line(1, 0) + line(2, 1));
    const resumed = new RecordsReader(results, resumePosition({ containerId: 'x', records: { offset: line(0, 1).length, line: 1 } })!);
    const read = await resumed.next(false);
    expect(read.rewards.map((r) => [r.line, r.instance])).toEqual([
      [2, 1],
      [3, 2],
    ]);
    resumed.rewind({ offset: line(0, 1).length, line: 1 });
    expect((await resumed.next(false)).rewards.map((r) => r.line)).toEqual([2, 3]);
    resumed.close();
    expect(resumePosition({ containerId: 'x' })).toBeUndefined();
    expect(resumePosition({ records: { offset: -1, line: 0 } })).toBeUndefined();
  });
});

describe('followRecords', () => {
  it('delivers each line once while the file grows, retrying a delivery that failed, and returns the rest on finish', async () => {
    const results = fresh();
    const file = path.join(results, 'records.jsonl');
    const batches: RewardBatch[] = [];
    let failNext = true;
    const follower = followRecords(
      results,
      undefined,
      async (batch) => {
        if (failNext) {
          failNext = false;
          throw new Error('server unavailable');
        }
        batches.push(batch);
      },
      { pollMs: 20 },
    );
    writeFileSync(file, line(0, 1));
    await new Promise((resolve) => setTimeout(resolve, 150));
    appendFileSync(file, line(1, 0) + line(2, 1).trimEnd());
    const kept = await follower.finish();
    expect(batches.flatMap((b) => b.rewards.map((r) => r.instance))).toEqual([0]);
    // The rest is not signalled but returned, for the activity's result; the position stays where the
    // signals took it, so an attempt that dies before its result is recorded reads those lines again.
    expect(kept).toEqual({ rewards: [expect.objectContaining({ instance: 1, line: 2 }), expect.objectContaining({ instance: 2, line: 3 })], throughLine: 3 });
    expect(follower.position()).toEqual({ offset: Buffer.byteLength(line(0, 1)), line: 1 });
  });

  it('on finish, signals all but the last page of what is left and returns that page', async () => {
    const results = fresh();
    writeFileSync(path.join(results, 'records.jsonl'), Array.from({ length: REWARDS_PAGE_MAX + 5 }, (_, i) => line(i, 1)).join(''));
    const batches: RewardBatch[] = [];
    const follower = followRecords(results, undefined, async (batch) => void batches.push(batch), { pollMs: 60_000 });
    const kept = await follower.finish();
    expect(batches.map((b) => [b.rewards.length, b.throughLine])).toEqual([[REWARDS_PAGE_MAX, REWARDS_PAGE_MAX]]);
    expect(kept?.rewards.map((r) => r.line)).toEqual(Array.from({ length: 5 }, (_, i) => REWARDS_PAGE_MAX + 1 + i));
    expect(kept?.throughLine).toBe(REWARDS_PAGE_MAX + 5);
    expect(follower.position()).toEqual({ offset: 0, line: 0 });
  });
});

describe('followRecords pacing', () => {
  it('delivers the first line at once and gathers later ones into one delivery per interval', async () => {
    const results = fresh();
    const file = path.join(results, 'records.jsonl');
    const batches: Array<{ at: number; instances: Array<number | string> }> = [];
    const started = Date.now();
    const follower = followRecords(
      results,
      undefined,
      async (batch) => void batches.push({ at: Date.now() - started, instances: batch.rewards.map((r) => r.instance) }),
      {
        pollMs: 20,
        minIntervalMs: 400,
      },
    );
    writeFileSync(file, line(0, 1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(batches.map((b) => b.instances)).toEqual([[0]]);
    appendFileSync(file, line(1, 0));
    await new Promise((resolve) => setTimeout(resolve, 100));
    appendFileSync(file, line(2, 1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(batches.length).toBe(1); // both wait for the interval to pass
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(batches.map((b) => b.instances)).toEqual([[0], [1, 2]]);
    expect(batches[1]!.at - batches[0]!.at).toBeGreaterThanOrEqual(400);
    appendFileSync(file, line(3, 0));
    const kept = await follower.finish(); // the rest at once, returned for the activity's result
    expect(batches.map((b) => b.instances)).toEqual([[0], [1, 2]]);
    expect(kept?.rewards.map((r) => r.instance)).toEqual([3]);
  });
});

describe('RewardsCursor', () => {
  it('writes finished jobs as ranges and the others as counts, and reads back what it wrote', () => {
    const cursor = RewardsCursor.parse('');
    for (const job of [0, 1, 2, 4]) cursor.finish(job);
    cursor.advance(3, 17);
    cursor.advance(5, 2);
    expect(cursor.toString()).toBe('0-2,4-4,3=17,5=2');
    const back = RewardsCursor.parse(cursor.toString());
    expect([back.isDone(1), back.isDone(3), back.count(3), back.count(5), back.count(6)]).toEqual([true, false, 17, 2, 0]);
  });

  it('names the part of a Last-Event-ID it cannot read', () => {
    expect(() => RewardsCursor.parse('0-2,x=1')).toThrow('"x=1": expected <job>=<rewards read> or <first job>-<last job>');
    expect(() => RewardsCursor.parse('5-2')).toThrow('"5-2": expected a range of jobs, first to last');
  });
});

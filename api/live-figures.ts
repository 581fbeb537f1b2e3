// What the event stream's `live` event reports of a running run: its job workflows' durations from
// visibility (for the time left) and the last half minute of the model calls its jobs' gateways wrote
// to their transcripts on this host (calls and tokens per second). Transcripts on other hosts are not
// read live: those jobs count towards the time left only.

import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { runJobsQuery } from '../client/run-jobs.js';
import { isCall, parseTranscript } from '../gateway/transcript-chat.js';
import { JOB_FILES, RUN_DIRS } from '../runs/job-artifacts.js';
import { estimateSecondsLeft, recentRates, type LiveFigures } from '../runs/live-figures.js';
import type { TimedCall } from '../runs/run-timeline.js';
import type { ApiContext } from './api-context.js';

/** Enough of a transcript's end for half a minute of calls at any sane rate. */
const TAIL_BYTES = 256 * 1024;

function transcriptTail(file: string): string {
  const size = statSync(file).size;
  const length = Math.min(size, TAIL_BYTES);
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const text = buffer.toString('utf8');
    // A tail starts mid-line: that first part is not a line of its own.
    return length < size ? text.slice(text.indexOf('\n') + 1) : text;
  } finally {
    closeSync(fd);
  }
}

function recentCalls(artifactsRoot: string, runId: string): TimedCall[] {
  const runDir = path.join(artifactsRoot, runId);
  if (!existsSync(runDir)) return [];
  const skip = new Set<string>(Object.values(RUN_DIRS));
  const calls: TimedCall[] = [];
  for (const entry of readdirSync(runDir, { withFileTypes: true })) {
    const file = path.join(runDir, entry.name, JOB_FILES.transcript);
    if (!entry.isDirectory() || skip.has(entry.name) || !existsSync(file)) continue;
    calls.push(...timedCalls(transcriptTail(file)));
  }
  return calls;
}

/** A transcript's calls: when each ended and its tokens (the timeline's and the live rates' input). */
export function timedCalls(transcript: string): TimedCall[] {
  return parseTranscript(transcript)
    .lines.filter(isCall)
    .map((line) => ({ at: line.at, tokens: (line.usage?.prompt_tokens ?? 0) + (line.usage?.completion_tokens ?? 0) }));
}

export async function readLiveFigures(context: ApiContext, runId: string, pending: number, now = Date.now()): Promise<LiveFigures> {
  const finishedMs: number[] = [];
  const runningElapsedMs: number[] = [];
  for await (const info of context.client.workflow.list({ query: runJobsQuery(runId), pageSize: 1000 })) {
    if (info.status.name === 'RUNNING') runningElapsedMs.push(now - info.startTime.getTime());
    else if (info.status.name === 'COMPLETED' && info.closeTime) finishedMs.push(info.closeTime.getTime() - info.startTime.getTime());
  }
  return {
    secondsLeft: estimateSecondsLeft({ finishedMs, runningElapsedMs, pending }),
    ...recentRates(recentCalls(context.settings.artifactsRoot, runId), now),
    finishedJobs: finishedMs.length,
  };
}

// A job's records.jsonl as the host reads it: opened safely, streamed line by line with a cap on
// line length and total size, each line validated by the contract; used by harvest, pass@k and `br`.

import path from 'node:path';
import { parseRecordLine, RecordsSummarizer, type InstanceRecord, type RecordsSummary } from '../contract/records.js';
import { savedInstanceUsage, type InstanceUsage } from '../gateway/instance-usage.js';
import { JOB_FILES } from '../runs/job-artifacts.js';
import { linesOfTaskOutput, openTaskOutputFile } from './task-output-file.js';

/** Past this many bytes the rest of records.jsonl is not read (and the summary says so). */
export const RECORDS_SIZE_CAP_BYTES = 512 * 1024 * 1024;
/** A longer line is reported as bad, never buffered. */
export const RECORD_LINE_CAP_BYTES = 1024 * 1024;

export type RecordLineOutcome = { record: InstanceRecord } | { problem: string };
export type RecordsFileRead = { kind: 'missing' } | { kind: 'refused'; problem: string } | { kind: 'read'; lines: number; notRead?: string };

/**
 * Calls `visit` with each non-blank line of `resultsDir/records.jsonl`, in order, as a record or a problem
 * naming its line. A record whose index the harness tagged its model calls with carries the gateway's
 * figures for it (withGatewayUsage); the file itself is never changed.
 */
export async function readRecordsFile(resultsDir: string, visit: (outcome: RecordLineOutcome) => void | Promise<void>): Promise<RecordsFileRead> {
  const opened = openTaskOutputFile(resultsDir, JOB_FILES.records);
  if (opened.kind !== 'opened') return opened;
  const instances = savedInstanceUsage(path.dirname(resultsDir));
  let lines = 0;
  for await (const { line, text } of linesOfTaskOutput(opened.fd, RECORD_LINE_CAP_BYTES, RECORDS_SIZE_CAP_BYTES)) {
    lines = line;
    const outcome = text === undefined ? { problem: `line ${line}: longer than ${RECORD_LINE_CAP_BYTES} bytes; not read` } : parseRecordLine(text, line);
    if (outcome) await visit(instances.size && 'record' in outcome ? { record: withGatewayUsage(outcome.record, instances) } : outcome);
  }
  const notRead =
    opened.size > RECORDS_SIZE_CAP_BYTES ? `${JOB_FILES.records}: ${opened.size} bytes; only the first ${RECORDS_SIZE_CAP_BYTES} were read` : undefined;
  return { kind: 'read', lines, ...(notRead ? { notRead } : {}) };
}

/**
 * The job result's records summary, in constant memory; undefined when the task wrote no records.jsonl. With
 * `scoresOf` (a shard's instance ids), also each one's score from its first record, in that order (null for
 * an instance with none).
 */
export async function summarizeRecordsFile(
  resultsDir: string,
  scoresOf?: readonly string[],
): Promise<{ summary: RecordsSummary; refused?: string; scores?: Array<number | null> } | undefined> {
  const summary = new RecordsSummarizer();
  const wanted = scoresOf ? new Map<string, number | null>(scoresOf.map((id) => [id, null])) : undefined;
  const read = await readRecordsFile(resultsDir, (outcome) => {
    if (!('record' in outcome)) return summary.addBadLine(outcome.problem);
    summary.addRecord(outcome.record);
    const id = String(outcome.record.index);
    if (wanted?.get(id) === null) wanted.set(id, outcome.record.score);
  });
  if (read.kind === 'missing') return undefined;
  const scores = wanted ? { scores: scoresOf!.map((id) => wanted.get(id) ?? null) } : {};
  if (read.kind === 'refused') {
    summary.addBadLine(`${read.problem}; not read`);
    return { summary: summary.result(), refused: read.problem, ...scores };
  }
  if (read.notRead) summary.addBadLine(read.notRead);
  return { summary: summary.result(), ...scores };
}

/**
 * The record with the gateway's figures for its instance as `gateway` (calls, tokens, reasoning tokens,
 * cost, latency), and its own prompt_tokens, completion_tokens and cost filled from them where the
 * benchmark reported none. Untagged instances are left as they are.
 */
export function withGatewayUsage(record: InstanceRecord, instances: ReadonlyMap<string, InstanceUsage>): InstanceRecord {
  const usage = instances.get(String(record.index));
  if (!usage) return record;
  record.gateway = usage;
  record.prompt_tokens ??= usage.prompt_tokens;
  record.completion_tokens ??= usage.completion_tokens;
  record.cost ??= usage.cost;
  return record;
}

// A run's instances as the dashboard lists them: one row per records.jsonl line of each job (score,
// tokens, cost, the gateway's calls and latency for it), filtered to the failures or by a search, and
// one page of them kept while every line streams past, so 10,000 instances cost one page of memory. Pure.

import type { InstanceRecord } from '../contract/records.js';

export interface InstanceRow {
  jobId: string;
  task: string;
  repeat: number;
  /** The record's index, as text: what the harness tags its calls with (X-BenchRouter-Instance). */
  id: string;
  score: number;
  promptTokens: number | null;
  completionTokens: number | null;
  cost: number | null;
  /** The gateway's figures for the instance, when the harness tagged its calls. */
  calls: number | null;
  latencyMs: number | null;
  /** For a task run in shards: its job's shard, `2 of 8`. */
  shard: string | null;
  /** The host that ran its job (the last, when the job moved). */
  host: string | null;
  /**
   * When it was not evaluated by this job but carried over: the job that scored it (`carried_from`), or
   * `an earlier attempt` of this one (a host lost, a container killed by an outage).
   */
  carriedFrom: string | null;
}

export interface InstanceFilter {
  /** Only instances that did not score full marks (score < 1). */
  failed?: boolean;
  /** Case-insensitive text in the id, query, prompt, prediction or ground truth. */
  search?: string;
}

/** How much of each searched field is looked at: a search is for finding, not for reading whole documents. */
const SEARCH_FIELD_CHARS = 4096;

export function instanceRow(
  job: { jobId: string; task: string; repeat?: number; host?: string; shard?: { index: number; count: number } },
  record: InstanceRecord,
): InstanceRow {
  const gateway = record.gateway as { calls?: number; latency_ms?: number } | undefined;
  const carriedFrom = record.carried === true ? (typeof record.carried_from === 'string' ? record.carried_from : 'an earlier attempt') : null;
  return {
    jobId: job.jobId,
    task: job.task,
    repeat: job.repeat ?? 0,
    id: String(record.index),
    score: record.score,
    promptTokens: record.prompt_tokens,
    completionTokens: record.completion_tokens,
    cost: record.cost,
    calls: gateway?.calls ?? null,
    latencyMs: gateway?.latency_ms ?? null,
    shard: job.shard && job.shard.count > 1 ? `${job.shard.index + 1} of ${job.shard.count}` : null,
    host: job.host ?? null,
    carriedFrom,
  };
}

const searchable = (value: unknown) =>
  value === undefined || value === null ? '' : (typeof value === 'string' ? value : JSON.stringify(value)).slice(0, SEARCH_FIELD_CHARS);

export function matchesFilter(record: InstanceRecord, filter: InstanceFilter): boolean {
  if (filter.failed && record.score >= 1) return false;
  const needle = filter.search?.trim().toLowerCase();
  if (!needle) return true;
  return [record.index, record.origin_query, record.prompt, record.prediction, record.ground_truth].some((field) =>
    searchable(field).toLowerCase().includes(needle),
  );
}

/** Keeps rows `offset` to `offset + limit` of those offered, counting all of them. */
export class InstancePage {
  readonly rows: InstanceRow[] = [];
  total = 0;

  constructor(
    readonly offset: number,
    readonly limit: number,
  ) {}

  offer(row: () => InstanceRow): void {
    if (this.total >= this.offset && this.rows.length < this.limit) this.rows.push(row());
    this.total += 1;
  }

  get nextOffset(): number | undefined {
    return this.offset + this.rows.length < this.total ? this.offset + this.limit : undefined;
  }
}

// A run's instances as the dashboard lists them: one row per records.jsonl line of each job (score,
// tokens, cost, the gateway's calls and latency for it), filtered to the failures or by a search, and
// one page of them kept while every line streams past, so 10,000 instances cost one page of memory; and
// the files a record names (its `artifacts`), a path checked before anything reads it. Pure.

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
  /**
   * The instance's own files, when its record names them (`artifacts`, else harbor's `trial`): a file or
   * folder of the job's results/, `/`-separated, checked by resultsPath.
   */
  artifacts?: string;
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
  const artifacts = recordArtifacts(record);
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
    ...(artifacts !== undefined ? { artifacts } : {}),
  };
}

/** The record field that names an instance's files (docs/benchmark-contract.md), and harbor's older name for it. */
export const ARTIFACTS_FIELD = 'artifacts';
const ARTIFACTS_FALLBACK = 'trial';

/** Longer paths are refused: no benchmark needs one, and a path goes into URLs and a Temporal payload. */
export const RESULTS_PATH_MAX_CHARS = 1024;

/**
 * A path inside a job's results/ as a caller or a record gives it, made canonical (`./a//b/` is `a/b`; the
 * empty path is results/ itself), or why it is refused: an absolute path, a `..` part, a backslash or a
 * control character. This is the lexical check; the read itself (activities/read-job-artifact.ts) also
 * refuses links and anything but regular files.
 */
export function resultsPath(text: string): { path: string } | { problem: string } {
  if (text.length > RESULTS_PATH_MAX_CHARS) return { problem: `expected at most ${RESULTS_PATH_MAX_CHARS} characters, got ${text.length}` };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) return { problem: 'expected no control characters' };
  if (text.includes('\\')) return { problem: `expected \`/\` separators, got a backslash in ${JSON.stringify(text)}` };
  if (text.startsWith('/') || /^[A-Za-z]:/.test(text)) return { problem: `expected a path relative to the job's results, got ${JSON.stringify(text)}` };
  const parts = text.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) return { problem: `expected a path inside the job's results, got ${JSON.stringify(text)} (a \`..\` part)` };
  return { path: parts.join('/') };
}

/** The record's files, when it names some with a usable path; a path resultsPath refuses names none. */
export function recordArtifacts(record: InstanceRecord): string | undefined {
  const named = [record[ARTIFACTS_FIELD], record[ARTIFACTS_FALLBACK]].find((value): value is string => typeof value === 'string' && value.trim() !== '');
  if (named === undefined) return undefined;
  const checked = resultsPath(named);
  return 'path' in checked && checked.path ? checked.path : undefined;
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

// One repeat of a task run in shards, folded back into the task's result as its shards finish: its score is
// the mean over its instances, summed in instance order from the shards' per-instance scores, so that a run
// split into shards reports the benchmark's own score to the last digit (a mean computed as sum/count in
// that order is the same floating-point sum); where the shards' records cannot say it (a shard with none, or
// whose overall is not the mean of its records), the instance-weighted mean of the shards' overalls. Other
// metrics combine as the task's `aggregate` says (sum or instance-weighted mean). Shards may arrive out of
// order (a retry's carried shards come first); they are folded in order. Plain data, so it crosses
// continue-as-new in the run's tally. Pure.

import type { NormalizedResult } from '../contract/result-mapping.js';
import type { JobResult } from './run-spec.js';

/** A shard's overall "is" the mean of its records when they agree this closely (a harness's own rounding aside). */
const AGREEMENT = 1e-9;

export interface ShardFold {
  /** Shards of this repeat of the task, and the index of the next one to fold. */
  shards: number;
  next: number;
  /** Shards that came before their turn, by index. */
  held: Record<string, ShardPart>;
  /** Instances of the shards folded so far (of failed shards too), and of those the ones scored by a succeeded shard. */
  total: number;
  scored: number;
  carried: number;
  succeeded: number;
  /** Sum of the succeeded shards' instance scores in instance order; `exact` while every one could give them. */
  sum: number;
  exact: boolean;
  /** Sum of overall × instances over the succeeded shards. */
  weighted: number;
  /** The one succeeded shard's own overall, kept while it is the only one and carried nothing. */
  own?: number;
  /** Per aggregated metric: its sum, or for a mean its sum of value × instances; null once a shard lacked it. */
  metrics: Record<string, number | null>;
  aggregate: Record<string, 'mean' | 'sum'>;
  /** How many instances the run selected of the task (absent from jobs before it was kept): the repeat's total. */
  of?: number;
}

/** What folding needs of one shard's job result. */
export interface ShardPart {
  succeeded: boolean;
  instances: number;
  /** The instances its overall is over, when fewer than it holds (a resumed shard whose records could not stand for its score). */
  scored?: number;
  carried: number;
  overall?: number;
  scores?: Array<number | null>;
  metrics?: Record<string, unknown>;
}

export interface FoldedResult {
  /** Null when no shard succeeded. */
  result: NormalizedResult | null;
  total: number;
  scored: number;
  carried: number;
  shards: number;
  succeeded: number;
}

/** Whether a job is a shard of a task whose result combines over its instances (and so is folded, not scored alone). */
export function isFoldedShard(job: Pick<JobResult, 'shard'>): boolean {
  return job.shard?.aggregate !== undefined;
}

export function newFold(shards: number, aggregate: Record<string, 'mean' | 'sum'>, of?: number): ShardFold {
  const metrics = Object.fromEntries(
    Object.keys(aggregate)
      .filter((name) => name !== 'overall')
      .map((name) => [name, 0]),
  );
  const fold: ShardFold = { shards, next: 0, held: {}, total: 0, scored: 0, carried: 0, succeeded: 0, sum: 0, exact: true, weighted: 0, metrics, aggregate };
  if (of !== undefined) fold.of = of;
  return fold;
}

export function partOf(job: JobResult): ShardPart {
  const succeeded = job.status === 'SUCCEEDED' && job.result !== undefined;
  return {
    succeeded,
    instances: job.shard?.instances ?? 0,
    ...(job.shard?.scored !== undefined ? { scored: job.shard.scored } : {}),
    carried: job.shard?.carried ?? 0,
    ...(succeeded ? { overall: job.result!.overall, metrics: job.result!.raw_metrics } : {}),
    ...(succeeded && job.instanceScores ? { scores: job.instanceScores } : {}),
  };
}

/** Adds shard `index` (in place); true once every shard is folded. */
export function foldShard(fold: ShardFold, index: number, part: ShardPart): boolean {
  fold.held[String(index)] = part;
  for (let held = fold.held[String(fold.next)]; held !== undefined; held = fold.held[String(fold.next)]) {
    delete fold.held[String(fold.next)];
    fold.next += 1;
    addPart(fold, held);
  }
  return fold.next >= fold.shards;
}

function addPart(fold: ShardFold, part: ShardPart): void {
  fold.total += part.instances;
  fold.carried += part.carried;
  if (!part.succeeded || part.overall === undefined) return;
  const scored = part.scored ?? part.instances;
  fold.succeeded += 1;
  fold.scored += scored;
  fold.weighted += part.overall * scored;
  fold.own = fold.succeeded === 1 && part.carried === 0 ? part.overall : undefined;
  const scores = part.scores;
  const whole = scored === part.instances && part.instances > 0;
  if (fold.exact && whole && scores && scores.length === part.instances && scores.every((s) => s !== null)) {
    let sum = 0;
    for (const score of scores as number[]) sum += score;
    // The shard's own overall must be the mean of its records for them to stand for it.
    if (Math.abs(sum / part.instances - part.overall) <= AGREEMENT) for (const score of scores as number[]) fold.sum += score;
    else fold.exact = false;
  } else fold.exact = false;
  for (const [name, so] of Object.entries(fold.metrics)) {
    // A shard that carried instances over reports its other metrics for the rest only: they no longer add up.
    const value = part.carried > 0 ? undefined : part.metrics?.[name];
    fold.metrics[name] =
      so === null || typeof value !== 'number' || !Number.isFinite(value) ? null : so + (fold.aggregate[name] === 'sum' ? value : value * part.instances);
  }
}

/**
 * The task's result for this repeat from the shards folded so far; shards that never came (a cancelled run)
 * count as failed. With one shard that carried nothing, its own result's overall, as an unsplit run reports it.
 */
export function foldedResult(fold: ShardFold): FoldedResult {
  // The repeat's instances: all the run selected, where its jobs say it, not only those of the shards that came.
  const base = { total: Math.max(fold.of ?? 0, fold.total), scored: fold.scored, carried: fold.carried, shards: fold.shards, succeeded: fold.succeeded };
  if (fold.succeeded === 0 || fold.scored === 0) return { ...base, result: null };
  const wholeInOne = fold.shards === 1 && fold.own !== undefined;
  const overall = wholeInOne ? fold.own! : fold.exact ? fold.sum / fold.scored : fold.weighted / fold.scored;
  const raw_metrics: Record<string, unknown> = {};
  for (const [name, so] of Object.entries(fold.metrics)) if (so !== null) raw_metrics[name] = fold.aggregate[name] === 'sum' ? so : so / fold.scored;
  return { ...base, result: { overall, raw_metrics } };
}

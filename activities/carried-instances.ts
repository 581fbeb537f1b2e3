// Instance-by-instance resume of a shard: before a fresh container of a job whose task's result combines over
// its instances, the instances the job already holds rewards for (scored by an earlier attempt, on this host
// or a lost one, or by the run a retry retries) are carried over and left out of the container's
// BENCHROUTER_INSTANCES. The job workflow is where the rewards are: every host and attempt reaches it through
// Temporal, so a host lost with its records loses none of them.

import type { Context } from '@temporalio/activity';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { JOB_FILES } from '../runs/job-artifacts.js';
import { carriedBatch, REWARDS_QUERY, type Reward, type RewardsPage } from '../runs/rewards.js';
import { SHARD_LIST_MAX_BYTES } from '../runs/instance-shards.js';
import type { JobSpec } from '../runs/run-spec.js';

export interface CarriedOver {
  /** The rewards of the shard's instances that are not evaluated again, one per instance, in the order they came. */
  rewards: Reward[];
  /** The job whose container scored them, when it was another job's (a retry's original). */
  from?: string;
  /** The last records.jsonl line the job holds a reward for: the fresh container's lines are numbered after it. */
  throughLine: number;
}

/**
 * What a fresh container of `job` need not evaluate again; undefined for a job that cannot resume by instance
 * or has nothing to carry. A job's first attempt asks nothing (only a retried job's spec can carry instances);
 * a later one asks its job workflow for the rewards it holds.
 */
export async function carriedInstances(ctx: Context, job: JobSpec, firstAttempt: boolean): Promise<CarriedOver | undefined> {
  if (!job.shard?.aggregate) return undefined;
  let rewards: Reward[];
  let throughLine: number;
  if (firstAttempt) {
    if (!job.carried) return undefined;
    ({ rewards, throughLine } = carriedBatch(job.carried.rewards));
  } else {
    const held = await heldRewards(ctx);
    if (!held) return undefined;
    ({ rewards, throughLine } = held);
  }
  const ofShard = new Set(job.shard.instances);
  const seen = new Set<string>();
  const carried = rewards.filter((reward) => {
    const id = String(reward.instance);
    if (!ofShard.has(id) || seen.has(id)) return false;
    seen.add(id);
    return true;
  });
  const resume = { rewards: carried, throughLine, ...(job.carried ? { from: job.carried.from } : {}) };
  if (carried.length === 0) return { rewards: [], throughLine };
  // The rest must fit one variable: a task too big for that evaluates all its instances again instead.
  const rest = remainingInstances(job, resume);
  if (rest.reduce((bytes, id) => bytes + Buffer.byteLength(id) + 1, 0) > SHARD_LIST_MAX_BYTES) {
    ctx.log.warn(
      `job ${job.jobId}: its ${rest.length} instances still to run do not fit BENCHROUTER_INSTANCES (${SHARD_LIST_MAX_BYTES / 1024} KiB): the ${carried.length} scored before are evaluated again`,
    );
    return { rewards: [], throughLine };
  }
  return resume;
}

/** The shard's instances a fresh container still has to evaluate, in the shard's order. */
export function remainingInstances(job: JobSpec, carried: CarriedOver): string[] {
  const done = new Set(carried.rewards.map((reward) => String(reward.instance)));
  return (job.shard?.instances ?? []).filter((id) => !done.has(id));
}

/** Every reward the job's workflow holds, page by page; undefined when this activity was not started by a workflow. */
async function heldRewards(ctx: Context): Promise<{ rewards: Reward[]; throughLine: number } | undefined> {
  const execution = ctx.info.workflowExecution;
  if (!execution) return undefined;
  const handle = ctx.client.workflow.getHandle(execution.workflowId, execution.runId);
  const rewards: Reward[] = [];
  let throughLine = 0;
  for (;;) {
    const page = await handle.query<RewardsPage, [number]>(REWARDS_QUERY, rewards.length);
    rewards.push(...page.rewards);
    throughLine = Math.max(throughLine, page.throughLine ?? 0, ...page.rewards.map((r) => r.line));
    if (page.rewards.length === 0 || rewards.length >= page.total) break;
  }
  return { rewards, throughLine };
}

/** A carried instance as a records.jsonl line: what its reward kept (score, tokens, cost), marked as carried. */
export function carriedRecordLine(reward: Reward, from: string | undefined): string {
  return JSON.stringify({
    index: reward.instance,
    score: reward.score,
    prompt_tokens: reward.prompt_tokens,
    completion_tokens: reward.completion_tokens,
    cost: reward.cost,
    carried: true,
    ...(from ? { carried_from: from } : {}),
  });
}

/**
 * Kept in the job's folder while its container runs: an attempt that reattaches to the container (a worker
 * restarted) knows what it was started without. Removed for a container that carried nothing.
 */
export function saveCarriedOver(jobDir: string, resume: CarriedOver | undefined): void {
  const file = path.join(jobDir, JOB_FILES.carriedOver);
  if (!resume) return rmSync(file, { force: true });
  mkdirSync(jobDir, { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(resume));
  renameSync(`${file}.tmp`, file);
}

export function readCarriedOver(jobDir: string): CarriedOver | undefined {
  try {
    const saved = JSON.parse(readFileSync(path.join(jobDir, JOB_FILES.carriedOver), 'utf8')) as CarriedOver;
    return Array.isArray(saved.rewards) && Number.isSafeInteger(saved.throughLine) ? saved : undefined;
  } catch {
    return undefined;
  }
}

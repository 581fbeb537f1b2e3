// runJobOnHost: a job's whole stay on its host as one activity: ensure the image (a cache hit for all
// but an environment's first job on the host), run the container, harvest the result. One activity
// instead of three saves each job two workflow tasks and two activity round trips through the server
// (docs/architecture.md). The steps themselves are the modules they always were: ensureImage,
// runTaskContainer (the container's logic stays there alone) and harvestResult.
//
// A retry resumes where the last attempt got to: it reattaches to a container that still runs
// (runTaskContainer finds it by name), and harvests from the saved outcome of one that already
// finished and was removed, so no container starts twice.

import { ApplicationFailure } from '@temporalio/common';
import { CancelledFailure, Context } from '@temporalio/activity';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { JOB_FILES, jobArtifactsDir } from '../runs/job-artifacts.js';
import type { JobSpec } from '../runs/run-spec.js';
import type { DatasetDigest } from '../runs/provenance.js';
import { containerNameFor } from './container-spec.js';
import { datasetDigest } from './dataset-digest.js';
import { ensureImage, type ImageDeps } from './ensure-image.js';
import { harvestResult, type HarvestOutput } from './harvest-result.js';
import { jobSecrets } from './redact-secrets.js';
import { hostHeartbeat, jobAttempt, runTaskContainer, type ContainerDeps, type ContainerOutcome, type EarlierAttempts } from './run-task-container.js';

export type { EarlierAttempts } from './run-task-container.js';

export interface JobOnHostInput {
  job: JobSpec;
  /** Set when an earlier activity of this job ran on this host (its first attempt, on the shared queue). */
  earlier?: EarlierAttempts;
}

export interface JobOnHostOutput {
  /** The host it ran on: for a first attempt, the one the server handed it to. */
  host: string;
  image: string;
  /** The image's id on the host (`sha256:...`); absent from an outcome saved before it was kept. */
  imageId?: string;
  imageBuilt: boolean;
  /** The host's dataset directory the container mounted, and its digest (activities/dataset-digest.ts). */
  dataset?: DatasetDigest;
  outcome: ContainerOutcome;
  harvest: HarvestOutput;
}

export type JobOnHostDeps = ImageDeps & ContainerDeps;

/** Attempts a build that failed for the daemon's or network's reasons gets, as when ensureImage was an activity of its own. */
export const IMAGE_BUILD_ATTEMPTS = 3;
const HEARTBEAT_MS = 2000;

export async function runJobOnHost(deps: JobOnHostDeps, input: JobOnHostInput): Promise<JobOnHostOutput> {
  // The host first, before any container: a job's first attempt runs wherever the server handed it, and
  // if the attempt dies the workflow pins the next one to the host its last heartbeat or failure names.
  const beat = hostHeartbeat(Context.current(), deps.hostId);
  beat();
  try {
    // After an earlier attempt of this job in this process has stepped aside (the server gave up on it
    // while the host was starved): never two attempts looking for, or starting, one job's container.
    const name = containerNameFor(input.job.jobId, deps.hostId);
    const run = () => runOnThisHost(deps, input);
    return await (deps.jobAttempts ? deps.jobAttempts.serially(name, run, () => beat({ step: 'waiting for an earlier attempt to step aside' })) : run());
  } catch (error) {
    throw namingHost(error, deps.hostId);
  }
}

async function runOnThisHost(deps: JobOnHostDeps, { job, earlier }: JobOnHostInput): Promise<JobOnHostOutput> {
  const ctx = Context.current();
  const jobDir = jobArtifactsDir(deps.artifactsRoot, job);
  // Attempts of one job workflow share its run id; an activity started outside one has only its own id.
  const workflowRunId = ctx.info.workflowExecution?.runId ?? ctx.info.activityId;

  // A job's first attempt has no earlier one that could have saved an outcome: no read (and no
  // missing-file error, with its stack, for every job).
  let ran = jobAttempt(ctx, earlier) === 1 ? undefined : readSavedOutcome(jobDir, workflowRunId);
  if (!ran) {
    // Image builds heartbeat by themselves; waiting for another job's build of the same image does not.
    const beat = hostHeartbeat(ctx, deps.hostId);
    const heartbeat = setInterval(() => beat({ step: 'image' }), HEARTBEAT_MS);
    let ensured;
    try {
      ensured = await ensureImage(deps, {
        benchmarkName: job.benchmark.name,
        benchmarkDir: job.benchmark.dir,
        environment: job.task.environment,
        ...(job.task.docker ? { dind: { images: job.task.dockerImages, ...(job.task.preloadBuilds ? { builds: job.task.preloadBuilds } : {}) } } : {}),
      });
    } catch (error) {
      if (
        error instanceof ApplicationFailure &&
        error.type === FAILURE_TYPES.imageBuild &&
        !error.nonRetryable &&
        jobAttempt(ctx, earlier) >= IMAGE_BUILD_ATTEMPTS
      ) {
        throw ApplicationFailure.create({ type: FAILURE_TYPES.imageBuild, nonRetryable: true, message: error.message });
      }
      throw error;
    } finally {
      clearInterval(heartbeat);
    }
    if (ctx.cancellationDetails?.cancelRequested) throw new CancelledFailure(`job ${job.jobId} cancelled before its container started`);
    // As the container finds it when it starts.
    const dataset = deps.datasetDir ? { dir: deps.datasetDir, digest: digestOrWhy(deps.datasetDir) } : undefined;
    const outcome = await runTaskContainer(deps, { job, image: ensured.image, archives: ensured.archives, ...(earlier ? { earlier } : {}) });
    ran = { workflowRunId, image: ensured.image, imageId: ensured.imageId, imageBuilt: ensured.built, ...(dataset ? { dataset } : {}), outcome };
    // The container is gone now: a retry from here on (a harvest that failed, a worker killed) must
    // find what it did, not start it again.
    saveOutcome(jobDir, ran);
  }
  const harvest = await harvestResult(deps.artifactsRoot, { job, outcome: ran.outcome }, jobSecrets(job, deps.gateway?.instance));
  return {
    host: deps.hostId,
    image: ran.image,
    ...(ran.imageId ? { imageId: ran.imageId } : {}),
    imageBuilt: ran.imageBuilt,
    ...(ran.dataset ? { dataset: ran.dataset } : {}),
    outcome: ran.outcome,
    harvest,
  };
}

/** The dataset directory's digest; a directory that cannot be read is the container's problem, not provenance's: named, not thrown. */
function digestOrWhy(dir: string): string {
  try {
    return datasetDigest(dir);
  } catch (error) {
    return `unreadable: ${(error as Error).message}`;
  }
}

/**
 * The activity's error as a failure whose first detail names this host (workflows/host-failover.ts
 * reads it), its type, message, retryability and stack kept. Cancellations pass as they are.
 */
export function namingHost(error: unknown, host: string): unknown {
  if (!(error instanceof Error) || error instanceof CancelledFailure || error.name === 'AbortError') return error;
  const failure =
    error instanceof ApplicationFailure
      ? ApplicationFailure.create({
          message: error.message,
          type: error.type ?? undefined,
          nonRetryable: error.nonRetryable ?? undefined,
          details: [{ host }, ...(error.details ?? [])],
          ...(error.cause ? { cause: error.cause } : {}),
        })
      : ApplicationFailure.create({ message: error.message, type: error.name, details: [{ host }] });
  failure.stack = error.stack ?? failure.stack;
  return failure;
}

/** What the finished container did, as saved in the job's folder for a later attempt of the same job workflow. */
const savedOutcomeSchema = z.object({
  workflowRunId: z.string(),
  image: z.string(),
  imageId: z.string().optional(),
  imageBuilt: z.boolean(),
  dataset: z.object({ dir: z.string(), digest: z.string() }).optional(),
  outcome: z.custom<ContainerOutcome>((value) => typeof value === 'object' && value !== null && typeof (value as ContainerOutcome).kind === 'string'),
});
type SavedOutcome = z.infer<typeof savedOutcomeSchema>;

function saveOutcome(jobDir: string, saved: SavedOutcome): void {
  const file = path.join(jobDir, JOB_FILES.containerOutcome);
  writeFileSync(`${file}.tmp`, JSON.stringify(saved));
  renameSync(`${file}.tmp`, file);
}

/** The saved outcome when this job workflow's earlier attempt wrote it; one from another execution (or none) is not ours. */
export function readSavedOutcome(jobDir: string, workflowRunId: string): SavedOutcome | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(jobDir, JOB_FILES.containerOutcome), 'utf8');
  } catch {
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined; // cut short by a crash mid-write (the rename makes that unlikely): run again
  }
  const parsed = savedOutcomeSchema.safeParse(json);
  return parsed.success && parsed.data.workflowRunId === workflowRunId ? parsed.data : undefined;
}

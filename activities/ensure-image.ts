// ensureImage: builds a benchmark environment's image on demand. The tag is a content hash of the
// build context, so a change rebuilds and no change never does; a host lock per image means N
// concurrent jobs on a new environment cause exactly one build. For a `docker: true` task it also
// checks the image can host a daemon and readies the archives of the images to preload.

import { Context } from '@temporalio/activity';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { ApplicationFailure } from '@temporalio/common';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import tar from 'tar-fs';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { DIND_IMAGE_LABEL } from './container-spec.js';
import { DockerError, type BuildEvent, type DockerEngine } from './docker-engine.js';
import { withHostLock } from './host-lock.js';
import { ensureImageArchives, MissingPreloadImage } from './preload-images.js';

export interface EnsureImageInput {
  benchmarkName: string;
  benchmarkDir: string;
  environment: string;
  /**
   * For `docker: true` tasks: the images to preload into the task's own daemon, and of those the ones the
   * benchmark builds itself (image reference -> build context relative to the benchmark directory).
   */
  dind?: { images: string[]; builds?: Record<string, string> };
}

export interface EnsureImageOutput {
  image: string;
  /** The image's id on this host (`sha256:...`), for the run's provenance. */
  imageId: string;
  built: boolean;
  seconds: number;
  /** Host paths of the preload archives (DinD tasks only). */
  archives: string[];
}

export interface ImageDeps {
  docker: DockerEngine;
  hostId: string;
  locksDir: string;
  buildLogsDir: string;
  imageCacheDir: string;
}

export function imageTagFor(benchmarkName: string, environment: string, contextDigest: string): string {
  const repo = `${benchmarkName}-${environment}`.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
  return `benchrouter-env/${repo}:${contextDigest.slice(0, 16)}`;
}

/** The content-hash tag of a preload image a benchmark builds; the image also carries the name tasks preload it by. */
export function preloadImageTagFor(benchmarkName: string, image: string, contextDigest: string): string {
  const repo = `${benchmarkName}-${image}`.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
  return `benchrouter-preload/${repo}:${contextDigest.slice(0, 16)}`;
}

/** The activity this runs in, which its long steps heartbeat; none when a command (`br export`) builds an image itself. */
function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** A failure no retry can fix: the job fails with reason IMAGE_BUILD at once. */
function imageProblem(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FAILURE_TYPES.imageProblem, nonRetryable: true, message });
}

export async function ensureImage(deps: ImageDeps, input: EnsureImageInput): Promise<EnsureImageOutput> {
  const started = Date.now();
  const contextDir = path.join(input.benchmarkDir, 'environments', input.environment);
  const image = imageTagFor(input.benchmarkName, input.environment, directoryDigest(contextDir));
  // The one inspect a cached image costs says its id as well; a build is inspected once more, after.
  let inspected = await deps.docker.inspectImage(image);
  const built = inspected ? false : await buildOnce(deps, { contextDir, tag: image, what: `environments/${input.environment}`, labels: envLabels(input) });
  inspected ??= await deps.docker.inspectImage(image);
  if (!inspected) throw new Error(`environments/${input.environment}: image ${image} is not on this host right after its build`);

  let archives: string[] = [];
  if (input.dind) {
    const labels = inspected.labels;
    if (!labels?.[DIND_IMAGE_LABEL]) {
      throw imageProblem(
        `environments/${input.environment}: a task with docker: true needs an image built FROM the DinD runtime image (benchrouter/dind:bookworm), which brings the task's own Docker daemon; this one is not`,
      );
    }
    // Saving a gigabyte image takes minutes on a busy host, longer than the heartbeat timeout: it heartbeats like a build.
    const ctx = activityContext();
    const images = input.dind.images;
    const heartbeat = setInterval(() => ctx?.heartbeat({ archiving: images }), 2000);
    try {
      for (const [name, build] of Object.entries(input.dind.builds ?? {})) await ensurePreloadImage(deps, input, name, build);
      archives = await ensureImageArchives(deps, deps.hostId, images);
    } catch (error) {
      if (error instanceof MissingPreloadImage) throw imageProblem(error.message);
      throw error;
    } finally {
      clearInterval(heartbeat);
    }
  }
  return { image, imageId: inspected.id, built, seconds: (Date.now() - started) / 1000, archives };
}

/**
 * Whether a failed build failed for the Dockerfile's own reasons (a step exited non-zero, a bad
 * instruction, a missing COPY source): the same context fails the same way on every retry. Anything
 * else (the daemon, the network, a pull, the disk) may pass on a retry.
 */
export function isDockerfileFault(failure: BuildEvent | DockerError): boolean {
  if (failure instanceof DockerError) return failure.statusCode === 400;
  if (typeof failure.errorDetail?.code === 'number' && failure.errorDetail.code > 0) return true;
  const message = failure.errorDetail?.message ?? failure.error ?? '';
  return /returned a non-zero code|dockerfile parse error|unknown instruction|(COPY|ADD) failed|failed to process|no build stage|no source files were specified/i.test(
    message,
  );
}

function envLabels(input: EnsureImageInput): Record<string, string> {
  return { 'benchrouter.benchmark': input.benchmarkName, 'benchrouter.environment': input.environment };
}

/**
 * A preload image the benchmark builds itself (benchmark.yaml `preload_images`): built from its context
 * under the same lock and content-hash cache as environment images, then given the name tasks preload it
 * by. A changed context builds anew and moves the name to the new image (its archive follows the image id).
 */
async function ensurePreloadImage(deps: ImageDeps, input: EnsureImageInput, name: string, build: string): Promise<void> {
  const contextDir = path.join(input.benchmarkDir, build);
  const tag = preloadImageTagFor(input.benchmarkName, name, directoryDigest(contextDir));
  if (!(await deps.docker.imageExists(tag))) {
    await buildOnce(deps, {
      contextDir,
      tag,
      what: `preload_images ${name} (${build})`,
      labels: { 'benchrouter.benchmark': input.benchmarkName, 'benchrouter.preload-image': name },
    });
  }
  const [built, named] = await Promise.all([deps.docker.inspectImage(tag), deps.docker.inspectImage(name)]);
  if (built && built.id !== named?.id) await deps.docker.tagImage(tag, name);
}

interface BuildRequest {
  contextDir: string;
  tag: string;
  /** What is built, as an author finds it: `environments/<env>` or `preload_images <name> (<dir>)`. */
  what: string;
  labels: Record<string, string>;
}

/** Builds under the host lock; returns false when another job built it while we waited. */
async function buildOnce(deps: ImageDeps, { contextDir, tag: image, what, labels }: BuildRequest): Promise<boolean> {
  return withHostLock(deps.locksDir, `image-${image}`, async () => {
    if (await deps.docker.imageExists(image)) return false;
    mkdirSync(deps.buildLogsDir, { recursive: true });
    const logFile = path.join(deps.buildLogsDir, `${image.replace(/[/:]/g, '_')}.log`);
    const log = createWriteStream(logFile);
    // A build log that cannot be written (a full disk) must not throw from the event loop and end the
    // worker: the build goes on, and its outcome is still reported.
    log.on('error', () => undefined);
    // The context is read as the daemon takes it; a build refused early leaves it unread, and open.
    const context = tar.pack(contextDir);
    const ctx = activityContext();
    let step = '';
    const heartbeat = setInterval(() => ctx?.heartbeat({ building: image, step }), 2000);
    let failure: BuildEvent | DockerError | undefined;
    try {
      failure = await deps.docker.buildImage(context, { tag: image, labels, signal: ctx?.cancellationSignal }, (event) => {
        const text = event.stream ?? event.status ?? (event.error ? `${event.error}\n` : '');
        if (text) log.write(text.endsWith('\n') ? text : `${text}\n`);
        if (event.stream?.startsWith('Step ')) step = event.stream.trim();
      });
    } catch (error) {
      if (!(error instanceof DockerError)) throw error;
      log.write(`${error.message}\n`);
      failure = error;
    } finally {
      clearInterval(heartbeat);
      context.destroy();
      await new Promise<void>((resolve) => log.end(resolve));
    }
    if (failure) {
      const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n');
      const message = `building image for ${what} failed; build log ${logFile}:\n${tail}`;
      // The Dockerfile's own fault fails the job at once; a daemon or network fault is retried.
      if (isDockerfileFault(failure)) throw imageProblem(message);
      throw ApplicationFailure.create({ type: FAILURE_TYPES.imageBuild, message });
    }
    return true;
  });
}

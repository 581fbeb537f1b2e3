// ensureImage: builds a benchmark environment's image on demand. The tag is a content hash of the
// build context, so a change rebuilds and no change never does; a host lock per image means N
// concurrent jobs on a new environment cause exactly one build. For a `docker: true` task it also
// checks the image can host a daemon and readies the archives of the images to preload.

import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { directoryDigest } from '../contract/benchmark-digest.js';
import { DIND_IMAGE_LABEL } from './container-spec.js';
import type { DockerEngine } from './docker-engine.js';
import { withHostLock } from './host-lock.js';
import { ensureImageArchives, MissingPreloadImage } from './preload-images.js';

export interface EnsureImageInput {
  benchmarkName: string;
  benchmarkDir: string;
  environment: string;
  /** For `docker: true` tasks: the images to preload into the task's own daemon. */
  dind?: { images: string[] };
}

export interface EnsureImageOutput {
  image: string;
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

/** A failure no retry can fix: the job fails with reason IMAGE_BUILD at once. */
function imageProblem(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'ImageProblem', nonRetryable: true, message });
}

export async function ensureImage(deps: ImageDeps, input: EnsureImageInput): Promise<EnsureImageOutput> {
  const started = Date.now();
  const contextDir = path.join(input.benchmarkDir, 'environments', input.environment);
  const image = imageTagFor(input.benchmarkName, input.environment, directoryDigest(contextDir));
  const built = (await deps.docker.imageExists(image)) ? false : await buildOnce(deps, input, image, contextDir);

  let archives: string[] = [];
  if (input.dind) {
    const labels = (await deps.docker.inspectImage(image))?.labels;
    if (!labels?.[DIND_IMAGE_LABEL]) {
      throw imageProblem(
        `environments/${input.environment}: a task with docker: true needs an image built FROM the DinD runtime image (benchrouter/dind:bookworm), which brings the task's own Docker daemon; this one is not`,
      );
    }
    try {
      archives = await ensureImageArchives(deps, deps.hostId, input.dind.images);
    } catch (error) {
      if (error instanceof MissingPreloadImage) throw imageProblem(error.message);
      throw error;
    }
  }
  return { image, built, seconds: (Date.now() - started) / 1000, archives };
}

/** Builds under the host lock; returns false when another job built it while we waited. */
async function buildOnce(deps: ImageDeps, input: EnsureImageInput, image: string, contextDir: string): Promise<boolean> {
  return withHostLock(deps.locksDir, `image-${image}`, async () => {
    if (await deps.docker.imageExists(image)) return false;
    mkdirSync(deps.buildLogsDir, { recursive: true });
    const logFile = path.join(deps.buildLogsDir, `${image.replace(/[/:]/g, '_')}.log`);
    const heartbeat = setInterval(() => Context.current().heartbeat({ building: image }), 2000);
    try {
      const result = await deps.docker.exec(
        ['build', '--force-rm', '--tag', image, '--label', `benchrouter.benchmark=${input.benchmarkName}`, '--label', `benchrouter.environment=${input.environment}`, contextDir],
        { stdoutFile: logFile, signal: Context.current().cancellationSignal, env: { ...process.env, DOCKER_BUILDKIT: '0' } },
      );
      if (result.exitCode !== 0) {
        const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n');
        throw ApplicationFailure.create({
          type: 'ImageBuildError',
          message: `building image for environments/${input.environment} failed (exit ${result.exitCode}); build log ${logFile}:\n${tail}`,
        });
      }
    } finally {
      clearInterval(heartbeat);
    }
    return true;
  });
}

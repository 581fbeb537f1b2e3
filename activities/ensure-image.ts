// ensureImage: builds a benchmark environment's image on demand. The tag is a content hash of the
// build context, so a change rebuilds and no change never does; a host lock per image means N
// concurrent jobs on a new environment cause exactly one build.

import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { directoryDigest } from '../contract/benchmark-digest.js';
import type { DockerCli } from './docker-cli.js';
import { withHostLock } from './host-lock.js';

export interface EnsureImageInput {
  benchmarkName: string;
  benchmarkDir: string;
  environment: string;
}

export interface EnsureImageOutput {
  image: string;
  built: boolean;
  seconds: number;
}

export interface ImageDeps {
  docker: DockerCli;
  locksDir: string;
  buildLogsDir: string;
}

export function imageTagFor(benchmarkName: string, environment: string, contextDigest: string): string {
  const repo = `${benchmarkName}-${environment}`.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
  return `benchrouter-env/${repo}:${contextDigest.slice(0, 16)}`;
}

export async function ensureImage(deps: ImageDeps, input: EnsureImageInput): Promise<EnsureImageOutput> {
  const started = Date.now();
  const contextDir = path.join(input.benchmarkDir, 'environments', input.environment);
  const image = imageTagFor(input.benchmarkName, input.environment, directoryDigest(contextDir));
  const seconds = () => (Date.now() - started) / 1000;
  if (await deps.docker.imageExists(image)) return { image, built: false, seconds: seconds() };

  return withHostLock(deps.locksDir, `image-${image}`, async () => {
    if (await deps.docker.imageExists(image)) return { image, built: false, seconds: seconds() };
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
    return { image, built: true, seconds: seconds() };
  });
}

// listTaskInstances: a task's instances as its `instances: {command}` prints them, run in the task's own
// image (built on demand, as for a job) with its directory as working directory, no network, no model and
// no Docker daemon of its own. What it printed is kept per image, command and benchmark content, so a second
// submit of the same benchmark asks the daemon for nothing but an image inspect.

import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TaskDefinition } from '../contract/benchmark.js';
import { taskDirectory } from '../contract/task-template.js';
import { INSTANCE_LIST_CAP_BYTES, parseInstanceList } from '../contract/task-instances.js';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import { CONTAINER_BENCHMARK_DIR, LABELS } from './container-spec.js';
import { ensureImage, type ImageDeps } from './ensure-image.js';
import { oneOffContainerBody } from './one-off-container.js';
import { readTaskOutputText } from './task-output-file.js';

export interface ListInstancesInput {
  benchmark: { name: string; dir: string; digest: string };
  task: TaskDefinition;
}

export interface ListInstancesDeps extends ImageDeps {
  /** Where listings are kept, and the scratch directories their containers write to. */
  instancesCacheDir: string;
}

/** How long a listing may run: it reads a dataset's ids, it evaluates nothing. */
const LIST_TIMEOUT_MS = 10 * 60_000;
const HEARTBEAT_MS = 2000;

export async function listTaskInstances(deps: ListInstancesDeps, { benchmark, task }: ListInstancesInput): Promise<string[]> {
  const command = task.instancesCommand;
  if (!command) throw ApplicationFailure.nonRetryable(`task ${task.name} has no instances command`, FAILURE_TYPES.instancesProblem);
  const ctx = Context.current();
  const heartbeat = setInterval(() => ctx.heartbeat({ host: deps.hostId, step: 'instances' }), HEARTBEAT_MS);
  try {
    const image = await ensureImage(deps, { benchmarkName: benchmark.name, benchmarkDir: benchmark.dir, environment: task.environment });
    const key = createHash('sha256')
      .update(JSON.stringify([image.imageId, benchmark.digest, task.name, command, task.extraEnv]))
      .digest('hex');
    const cached = path.join(deps.instancesCacheDir, `${key}.json`);
    try {
      return JSON.parse(readFileSync(cached, 'utf8')) as string[];
    } catch {
      // not listed on this host yet
    }
    const ids = await runListing(deps, benchmark, task, image.image, command);
    mkdirSync(deps.instancesCacheDir, { recursive: true });
    writeFileSync(`${cached}.tmp`, JSON.stringify(ids));
    renameSync(`${cached}.tmp`, cached);
    return ids;
  } finally {
    clearInterval(heartbeat);
  }
}

/** Runs the command once in a container of its own, its output into a scratch directory; the ids it printed. */
async function runListing(
  deps: ListInstancesDeps,
  benchmark: ListInstancesInput['benchmark'],
  task: TaskDefinition,
  image: string,
  command: string,
): Promise<string[]> {
  mkdirSync(deps.instancesCacheDir, { recursive: true });
  removeStaleListings(deps.instancesCacheDir);
  const scratch = mkdtempSync(path.join(deps.instancesCacheDir, 'listing-'));
  // Whatever user the image runs as writes its output here.
  chmodSync(scratch, 0o777);
  const name = `benchrouter-instances-${randomBytes(6).toString('hex')}`;
  const problem = (message: string) => ApplicationFailure.nonRetryable(`task ${task.name}: instances.command: ${message}`, FAILURE_TYPES.instancesProblem);
  try {
    // The command's own output, not the log: a long list is never cut by a log driver's rotation.
    const started = await deps.docker.createAndStart(
      name,
      oneOffContainerBody({
        image,
        // Files of at most 32 MiB (ulimit -f counts 512-byte blocks): a command that prints more is killed, not let fill the disk.
        entrypoint: ['/bin/sh', '-c', 'ulimit -f 65536; exec >/app/results/instances.out 2>/app/results/instances.err; exec /bin/sh -c "$0"', command],
        env: { TZ: 'UTC', PYTHONHASHSEED: '0', ...task.extraEnv },
        hostId: deps.hostId,
        labels: { [LABELS.benchmark]: benchmark.name, [LABELS.task]: task.name },
        workingDir: `${CONTAINER_BENCHMARK_DIR}/tasks/${taskDirectory(task)}`,
        binds: [`${benchmark.dir}:${CONTAINER_BENCHMARK_DIR}:ro`, `${scratch}:/app/results`],
        memoryBytes: 2 * 1024 ** 3,
        cpus: 1,
        pids: 512,
      }),
    );
    if (started === 'conflict') throw new Error(`container ${name} exists already`);
    const exit = await Promise.race([deps.docker.wait(started.id), sleep(LIST_TIMEOUT_MS, 'timeout' as const)]);
    if (exit === 'timeout') throw problem(`still running after ${LIST_TIMEOUT_MS / 60_000} minutes; killed`);
    const errorTail = () => {
      const read = readTaskOutputText(scratch, 'instances.err', 64 * 1024);
      const last = read.kind === 'text' ? read.text.trim().split('\n').slice(-3).join(' | ') : '';
      return last ? `; it printed: ${last}` : '';
    };
    if (exit !== 0) throw problem(`exited with code ${exit}${errorTail()}`);
    const out = readTaskOutputText(scratch, 'instances.out', INSTANCE_LIST_CAP_BYTES);
    if (out.kind !== 'text') throw problem(out.kind === 'missing' ? `printed nothing${errorTail()}` : out.problem);
    const parsed = parseInstanceList(out.text);
    if (!parsed.ok) throw problem(parsed.problems.join('; '));
    return parsed.ids;
  } finally {
    await deps.docker.remove(name).catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Scratch directories of listings a worker died in (older than any listing may run) are removed. */
function removeStaleListings(dir: string): void {
  const before = Date.now() - 2 * LIST_TIMEOUT_MS;
  for (const entry of readdirSync(dir)) {
    if (!entry.startsWith('listing-')) continue;
    const at = path.join(dir, entry);
    try {
      if (statSync(at).mtimeMs < before) rmSync(at, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
  }
}

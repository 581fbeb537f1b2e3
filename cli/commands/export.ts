// `br export <run> --format inspect`: a finished run as Inspect eval logs, one per task and one sample per instance
// (its input, the model's messages from the job's transcript, its score and usage), so that `inspect view` and
// inspect_ai.log.read_eval_log read BenchRouter runs. The logs are written by inspect_ai's own API
// (benchmarks/inspect/export_log.py), run in the inspect benchmark's image (built here on first use), so the format
// stays Inspect's, whatever version that image pins.

import type { Command } from 'commander';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { withJobs } from '../../client/run-jobs.js';
import { BUILTIN_BENCHMARKS_DIR } from '../../contract/builtin-benchmarks.js';
import type { InstanceRecord } from '../../contract/records.js';
import { InputError } from '../../contract/problems.js';
import { answerMessages, isCall, parseTranscript, type Message } from '../../gateway/transcript-chat.js';
import type { JobResult, RunResult } from '../../runs/run-spec.js';
import { resolveHostId } from '../../workers/host-id.js';
import { oneOffContainerBody } from '../../activities/one-off-container.js';
import { readRecordsFile } from '../../activities/records-file.js';
import type { CliDeps } from '../cli-deps.js';
import { EXIT_CODES } from '../exit-codes.js';
import { ExitError } from '../exit-error.js';
import { example } from '../help-example.js';
import { locateJobs, readJobFile, type ArtifactCommandDeps, type LocatedJob } from '../run-artifacts.js';
import { recordsSources } from './records.js';
import { existingRun } from '../temporal-access.js';

export const EXPORT_FORMATS = ['inspect'] as const;

/** One instance as export_log.py takes it. */
export interface ExportSample {
  id: string;
  input: unknown;
  target: unknown;
  output: unknown;
  score: number;
  score_value: unknown;
  explanation: unknown;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** OpenAI chat messages: the instance's last model call as sent, and its answer. */
  messages: Message[];
  metadata: Record<string, unknown>;
}

export interface ExportTask {
  task: string;
  status: 'SUCCEEDED' | 'FAILED';
  overall: number | null;
  metrics: Record<string, unknown>;
  samples: ExportSample[];
}

export interface ExportBundle {
  run: { run_id: string; benchmark: string; model: string; status: string; created?: string; completed?: string; benchrouter?: string };
  tasks: ExportTask[];
}

/**
 * The conversation of each instance in a job's transcript: its last call's messages as sent, then its answer. A
 * harness sends the whole conversation so far with each call, so the last one holds every turn before it.
 */
export function conversationsOf(transcript: string): Map<string, Message[]> {
  const last = new Map<string, { request?: unknown; response?: unknown }>();
  for (const line of parseTranscript(transcript).lines) if (isCall(line) && line.instance !== undefined && line.status === 200) last.set(line.instance, line);
  const conversations = new Map<string, Message[]>();
  for (const [instance, call] of last) {
    const asked = (call.request as { messages?: unknown } | undefined)?.messages;
    conversations.set(instance, [
      ...(Array.isArray(asked) ? (asked as Message[]) : []),
      ...answerMessages(call.response).filter((m) => m.role === 'assistant'),
    ]);
  }
  return conversations;
}

/** A record and its conversation as one sample. */
export function exportSample(job: JobResult, record: InstanceRecord, conversation: Message[] | undefined): ExportSample {
  const { index, score, prompt_tokens, completion_tokens, origin_query, prompt, prediction, ground_truth, raw_output, score_value } = record;
  return {
    id: String(index),
    input: origin_query ?? prompt ?? '',
    target: ground_truth ?? '',
    output: prediction ?? '',
    score,
    score_value: score_value ?? score,
    explanation: raw_output ?? null,
    prompt_tokens,
    completion_tokens,
    messages: conversation ?? [],
    metadata: { job: job.jobId, ...(job.host ? { host: job.host } : {}), ...(job.shard ? { shard: job.shard.index } : {}) },
  };
}

/** The run's tasks in order, each with its succeeded jobs' records (a task's repeats and shards together). */
async function gatherTasks(deps: ArtifactCommandDeps, result: RunResult, jobs: LocatedJob[]): Promise<ExportTask[]> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-export-'));
  try {
    const sources = new Map((await recordsSources(deps, jobs, scratch)).map((source) => [source.jobId, source]));
    const located = new Map(jobs.map((job) => [job.jobId, job]));
    const tasks = new Map<string, ExportTask>();
    for (const job of result.jobs) {
      const score = result.tasks?.find((t) => t.task === job.task);
      const task = tasks.get(job.task) ?? {
        task: job.task,
        status: 'SUCCEEDED' as const,
        overall: score?.mean ?? job.result?.overall ?? null,
        metrics: job.result?.raw_metrics ?? {},
        samples: [],
      };
      tasks.set(job.task, task);
      if (job.status !== 'SUCCEEDED') task.status = 'FAILED';
      const source = sources.get(job.jobId);
      const where = located.get(job.jobId);
      if (!source?.resultsDir || !where) continue;
      const transcript = await readJobFile(deps, where, 'transcript');
      const conversations = transcript ? conversationsOf(transcript.toString('utf8')) : new Map<string, Message[]>();
      await readRecordsFile(source.resultsDir, (outcome) => {
        if ('record' in outcome) task.samples.push(exportSample(job, outcome.record, conversations.get(String(outcome.record.index))));
      });
    }
    return [...tasks.values()];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export function registerExportCommand(program: Command, deps: CliDeps, artifacts: ArtifactCommandDeps): Command {
  return program
    .command('export')
    .description("write a finished run in another framework's format: Inspect eval logs (one per task, one sample per instance)")
    .argument('<run>', 'run id')
    .requiredOption('--format <format>', `the format: ${EXPORT_FORMATS.join(', ')}`)
    .option('--out <dir>', 'the directory the logs go into (default: ./<run>-inspect)')
    .addHelpText('after', example('$ br export br-20261129-120000-a1b2c3 --format inspect --out logs', '$ inspect view --log-dir logs'))
    .action(async (runId: string, flags: { format: string; out?: string }) => {
      if (!(EXPORT_FORMATS as readonly string[]).includes(flags.format))
        throw new InputError([{ file: '--format', field: '', message: `expected one of ${EXPORT_FORMATS.join(', ')}, got "${flags.format}"` }]);
      const handle = await existingRun(deps, runId);
      const described = await handle.describe();
      if (described.status.name !== 'COMPLETED')
        throw new ExitError(`run ${runId} is ${described.status.name}: only a finished run is exported`, EXIT_CODES.ERROR);
      const result = await withJobs(handle.client, await handle.result());
      const tasks = await gatherTasks(artifacts, result, await locateJobs(artifacts, runId, undefined));
      const bundle: ExportBundle = {
        run: {
          run_id: runId,
          benchmark: result.benchmark,
          model: result.model,
          status: result.status,
          created: described.startTime.toISOString(),
          ...(described.closeTime ? { completed: described.closeTime.toISOString() } : {}),
          ...(result.provenance?.benchrouter
            ? {
                benchrouter: `${result.provenance.benchrouter.version}${result.provenance.benchrouter.commit ? ` (${result.provenance.benchrouter.commit})` : ''}`,
              }
            : {}),
        },
        tasks,
      };
      const out = path.resolve(flags.out ?? `${runId}-inspect`);
      const written = await writeInspectLogs(deps, bundle, out);
      for (const file of written) await deps.stdout(`${file}\n`);
      deps.say(
        `run ${runId}: ${tasks.length} task${tasks.length === 1 ? '' : 's'}, ${tasks.reduce((n, t) => n + t.samples.length, 0)} samples, as Inspect logs in ${out}`,
      );
    });
}

/** Runs export_log.py on the bundle in the inspect benchmark's image; the logs it wrote, moved into `out`. */
async function writeInspectLogs(deps: CliDeps, bundle: ExportBundle, out: string): Promise<string[]> {
  const settings = deps.settings();
  // dockerode and the image builder load here: no other command pays for them.
  const [{ DockerEngine }, { ensureImage }] = await Promise.all([import('../../activities/docker-engine.js'), import('../../activities/ensure-image.js')]);
  const docker = new DockerEngine();
  const benchmarkDir = path.join(BUILTIN_BENCHMARKS_DIR, 'inspect');
  deps.say('readying the inspect image (built on first use)');
  const hostId = resolveHostId(settings.home);
  const { image } = await ensureImage(
    { docker, hostId, locksDir: settings.locksDir, buildLogsDir: settings.buildLogsDir, imageCacheDir: settings.imageCacheDir },
    { benchmarkName: 'inspect', benchmarkDir, environment: 'inspect' },
  );
  const work = mkdtempSync(path.join(os.tmpdir(), 'br-export-'));
  const name = `benchrouter-export-${randomBytes(6).toString('hex')}`;
  try {
    mkdirSync(path.join(work, 'logs'));
    writeFileSync(path.join(work, 'run.json'), JSON.stringify(bundle));
    // Whatever user the image runs as writes the logs.
    chmodSync(path.join(work, 'logs'), 0o777);
    const started = await docker.createAndStart(
      name,
      oneOffContainerBody({
        image,
        entrypoint: ['python3', '/app/benchmark/export_log.py', '/work/run.json', '/work/logs'],
        env: { TZ: 'UTC' },
        hostId,
        workingDir: '/work',
        binds: [`${benchmarkDir}:/app/benchmark:ro`, `${work}:/work`],
        memoryBytes: 4 * 1024 ** 3,
        cpus: 2,
        pids: 256,
      }),
    );
    if (started === 'conflict') throw new Error(`container ${name} exists already`);
    const code = await docker.wait(started.id);
    if (code !== 0) {
      const tail = (await docker.logTail(started.id, 20)).toString('utf8').trim();
      throw new ExitError(`export_log.py exited with code ${code}: ${tail}`, EXIT_CODES.ERROR);
    }
    mkdirSync(out, { recursive: true });
    return readdirSync(path.join(work, 'logs'))
      .filter((file) => file.endsWith('.eval'))
      .sort()
      .map((file) => {
        copyFileSync(path.join(work, 'logs', file), path.join(out, file));
        return path.join(out, file);
      });
  } finally {
    await docker.remove(name).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

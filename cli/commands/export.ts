// `br export <run> --format inspect`: a finished run as Inspect eval logs, one per task and one sample per instance
// (its input, the model's messages from the job's transcript, its score and usage), so that `inspect view` and
// inspect_ai.log.read_eval_log read BenchRouter runs. The logs are written by inspect_ai's own API
// (benchmarks/inspect/export_log.py), run in the inspect benchmark's image (built here on first use), so the format
// stays Inspect's, whatever version that image pins.
// `--format atif`: each instance's model calls as a Harbor ATIF trajectory (`<task>/<instance>/trajectory.json`),
// built with Harbor's own models (benchmarks/harbor/export_atif.py) in the harbor benchmark's image, the same way.

import type { Command } from 'commander';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { withJobs } from '../../client/run-jobs.js';
import { BUILTIN_BENCHMARKS_DIR } from '../../contract/builtin-benchmarks.js';
import type { InstanceRecord } from '../../contract/records.js';
import { InputError } from '../../contract/problems.js';
import type { TranscriptCall } from '../../gateway/transcript.js';
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
import { atifCalls, toolDefinitions, trajectoryPath, type AtifCall } from '../export-atif.js';

export const EXPORT_FORMATS = ['inspect', 'atif'] as const;
type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** An instance's record as both exports take it. */
export interface ExportRecord {
  id: string;
  input: unknown;
  target: unknown;
  output: unknown;
  score: number;
  score_value: unknown;
  explanation: unknown;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  metadata: Record<string, unknown>;
}

/** One instance as export_log.py takes it. */
export interface ExportSample extends ExportRecord {
  /** OpenAI chat messages: the instance's last model call as sent, and its answer. */
  messages: Message[];
}

/** One instance as export_atif.py takes it: `path` is where its trajectory goes under the export directory. */
export interface AtifTrajectory {
  path: string;
  session_id: string;
  task: string;
  record: ExportRecord;
  /** Its answered calls in the transcript, in order; none when the harness tagged none of them with it. */
  calls: AtifCall[];
  tools?: unknown[];
  /** The job's transcript stopped at its cap: later calls of the instance may be missing. */
  capped: boolean;
}

export interface ExportTask<S = ExportSample> {
  task: string;
  status: 'SUCCEEDED' | 'FAILED';
  overall: number | null;
  metrics: Record<string, unknown>;
  samples: S[];
}

export interface ExportRun {
  run_id: string;
  benchmark: string;
  /** The benchmark's content digest the run pinned. */
  benchmark_digest?: string;
  model: string;
  status: string;
  created?: string;
  completed?: string;
  benchrouter?: string;
}

export interface ExportBundle {
  run: ExportRun;
  tasks: ExportTask[];
}

export interface AtifBundle {
  run: ExportRun;
  trajectories: AtifTrajectory[];
}

/** A job's transcript: each instance's answered calls, in order, and whether it stopped at its cap. */
export interface JobCalls {
  calls: Map<string, TranscriptCall[]>;
  capped: boolean;
}

export function callsByInstance(transcript: string): JobCalls {
  const calls = new Map<string, TranscriptCall[]>();
  let capped = false;
  for (const line of parseTranscript(transcript).lines) {
    if (!isCall(line)) capped = true;
    else if (line.instance !== undefined && line.status === 200) calls.set(line.instance, [...(calls.get(line.instance) ?? []), line]);
  }
  return { calls, capped };
}

/**
 * An instance's conversation: its last call's messages as sent, then its answer. A harness sends the whole
 * conversation so far with each call, so the last one holds every turn before it.
 */
export function conversationOf(calls: TranscriptCall[] | undefined): Message[] | undefined {
  const call = calls?.at(-1);
  if (!call) return undefined;
  const asked = (call.request as { messages?: unknown } | undefined)?.messages;
  return [...(Array.isArray(asked) ? (asked as Message[]) : []), ...answerMessages(call.response).filter((m) => m.role === 'assistant')];
}

/** A record and its conversation as one sample. */
export function exportSample(job: JobResult, record: InstanceRecord, conversation: Message[] | undefined): ExportSample {
  return { ...exportRecord(job, record), messages: conversation ?? [] };
}

/**
 * An instance's calls as one trajectory; with repeats (`repeats`), each repeat's under a directory of its own. Its
 * session is the run, task (and repeat) and instance.
 */
export function atifTrajectory(runId: string, job: JobResult, record: InstanceRecord, transcript: JobCalls, repeats: boolean): AtifTrajectory {
  const exported = exportRecord(job, record);
  const repeat = repeats ? (job.repeat ?? 0) : undefined;
  const calls = transcript.calls.get(exported.id) ?? [];
  const tools = toolDefinitions(calls);
  return {
    path: trajectoryPath(job.task, exported.id, repeat),
    session_id: [runId, job.task, ...(repeat !== undefined ? [`repeat-${repeat}`] : []), exported.id].join('/'),
    task: job.task,
    record: exported,
    calls: atifCalls(calls),
    ...(tools ? { tools } : {}),
    capped: transcript.capped,
  };
}

function exportRecord(job: JobResult, record: InstanceRecord): ExportRecord {
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
    metadata: { job: job.jobId, ...(job.host ? { host: job.host } : {}), ...(job.shard ? { shard: job.shard.index } : {}) },
  };
}

/** The run's tasks in order, each with its succeeded jobs' records (a task's repeats and shards together), each as `sampleOf` makes it. */
async function gatherTasks<S>(
  deps: ArtifactCommandDeps,
  result: RunResult,
  jobs: LocatedJob[],
  sampleOf: (job: JobResult, record: InstanceRecord, transcript: JobCalls) => S,
): Promise<Array<ExportTask<S>>> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-export-'));
  try {
    const sources = new Map((await recordsSources(deps, jobs, scratch)).map((source) => [source.jobId, source]));
    const located = new Map(jobs.map((job) => [job.jobId, job]));
    const tasks = new Map<string, ExportTask<S>>();
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
      const calls = transcript ? callsByInstance(transcript.toString('utf8')) : { calls: new Map<string, TranscriptCall[]>(), capped: false };
      await readRecordsFile(source.resultsDir, (outcome) => {
        if ('record' in outcome) task.samples.push(sampleOf(job, outcome.record, calls));
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
    .description(
      "write a finished run in another framework's format: Inspect eval logs (one per task, one sample per instance), or Harbor ATIF trajectories (one per instance)",
    )
    .argument('<run>', 'run id')
    .requiredOption('--format <format>', `the format: ${EXPORT_FORMATS.join(', ')}`)
    .option(
      '--out <dir>',
      'the directory the files go into (default: ./<run>-<format>); inspect: <run>_<task>.eval; atif: <task>/<instance>/trajectory.json, <task>/repeat-<r>/<instance>/trajectory.json in a run with repeats',
    )
    .addHelpText(
      'after',
      example(
        '$ br export br-20261129-120000-a1b2c3 --format inspect --out logs',
        '$ inspect view --log-dir logs',
        '$ br export br-20261129-120000-a1b2c3 --format atif --out trajectories',
      ),
    )
    .action(async (runId: string, flags: { format: string; out?: string }) => {
      if (!(EXPORT_FORMATS as readonly string[]).includes(flags.format))
        throw new InputError([{ file: '--format', field: '', message: `expected one of ${EXPORT_FORMATS.join(', ')}, got "${flags.format}"` }]);
      const format = flags.format as ExportFormat;
      const handle = await existingRun(deps, runId);
      const described = await handle.describe();
      if (described.status.name !== 'COMPLETED')
        throw new ExitError(`run ${runId} is ${described.status.name}: only a finished run is exported`, EXIT_CODES.ERROR);
      const result = await withJobs(handle.client, await handle.result());
      const jobs = await locateJobs(artifacts, runId, undefined);
      const run: ExportRun = {
        run_id: runId,
        benchmark: result.benchmark,
        ...(result.provenance?.benchmark.digest ? { benchmark_digest: result.provenance.benchmark.digest } : {}),
        model: result.model,
        status: result.status,
        created: described.startTime.toISOString(),
        ...(described.closeTime ? { completed: described.closeTime.toISOString() } : {}),
        ...(result.provenance?.benchrouter
          ? {
              benchrouter: `${result.provenance.benchrouter.version}${result.provenance.benchrouter.commit ? ` (${result.provenance.benchrouter.commit})` : ''}`,
            }
          : {}),
      };
      const out = path.resolve(flags.out ?? `${runId}-${format}`);
      if (format === 'inspect') {
        const tasks = await gatherTasks(artifacts, result, jobs, (job, record, transcript) =>
          exportSample(job, record, conversationOf(transcript.calls.get(String(record.index)))),
        );
        const written = await writeInspectLogs(deps, { run, tasks }, out);
        for (const file of written) await deps.stdout(`${file}\n`);
        deps.say(
          `run ${runId}: ${tasks.length} task${tasks.length === 1 ? '' : 's'}, ${tasks.reduce((n, t) => n + t.samples.length, 0)} samples, as Inspect logs in ${out}`,
        );
        return;
      }
      const repeats = result.jobs.some((job) => (job.repeat ?? 0) > 0);
      const tasks = await gatherTasks(artifacts, result, jobs, (job, record, transcript) => atifTrajectory(runId, job, record, transcript, repeats));
      const written = await writeAtifTrajectories(deps, { run, trajectories: tasks.flatMap((task) => task.samples) }, out);
      for (const file of written) await deps.stdout(`${file}\n`);
      deps.say(`run ${runId}: ${tasks.length} task${tasks.length === 1 ? '' : 's'}, ${written.length} trajectories, as Harbor ATIF in ${out}`);
    });
}

/** Runs export_log.py on the bundle in the inspect benchmark's image; the logs it wrote, moved into `out`. */
async function writeInspectLogs(deps: CliDeps, bundle: ExportBundle, out: string): Promise<string[]> {
  return runExportScript(deps, { benchmark: 'inspect', environment: 'inspect', script: 'export_log.py' }, bundle, (written) => {
    mkdirSync(out, { recursive: true });
    return readdirSync(written)
      .filter((file) => file.endsWith('.eval'))
      .sort()
      .map((file) => {
        copyFileSync(path.join(written, file), path.join(out, file));
        return path.join(out, file);
      });
  });
}

/**
 * Runs export_atif.py on the bundle in the harbor benchmark's image. It writes the n-th trajectory as `<n>.json`
 * (flat: a directory the container's user made could not be removed here); each goes to its path under `out`.
 */
async function writeAtifTrajectories(deps: CliDeps, bundle: AtifBundle, out: string): Promise<string[]> {
  return runExportScript(deps, { benchmark: 'harbor', environment: 'harbor', script: 'export_atif.py' }, bundle, (written) =>
    bundle.trajectories.map((trajectory, n) => {
      const target = path.join(out, ...trajectory.path.split('/'));
      mkdirSync(path.dirname(target), { recursive: true });
      copyFileSync(path.join(written, `${n}.json`), target);
      return target;
    }),
  );
}

/**
 * Runs a benchmark's export script (`python3 <script> RUN.json OUT_DIR`) on the bundle in that benchmark's image
 * (built here on first use), in a one-off container; `place` moves what it wrote (OUT_DIR on this host) to where it
 * goes, and says where.
 */
async function runExportScript(
  deps: CliDeps,
  script: { benchmark: string; environment: string; script: string },
  bundle: unknown,
  place: (written: string) => string[],
): Promise<string[]> {
  const settings = deps.settings();
  // dockerode and the image builder load here: no other command pays for them.
  const [{ DockerEngine }, { ensureImage }] = await Promise.all([import('../../activities/docker-engine.js'), import('../../activities/ensure-image.js')]);
  const docker = new DockerEngine();
  const benchmarkDir = path.join(BUILTIN_BENCHMARKS_DIR, script.benchmark);
  deps.say(`readying the ${script.benchmark} image (built on first use)`);
  const hostId = resolveHostId(settings.home);
  const { image } = await ensureImage(
    { docker, hostId, locksDir: settings.locksDir, buildLogsDir: settings.buildLogsDir, imageCacheDir: settings.imageCacheDir },
    { benchmarkName: script.benchmark, benchmarkDir, environment: script.environment },
  );
  const work = mkdtempSync(path.join(os.tmpdir(), 'br-export-'));
  const name = `benchrouter-export-${randomBytes(6).toString('hex')}`;
  try {
    mkdirSync(path.join(work, 'out'));
    writeFileSync(path.join(work, 'run.json'), JSON.stringify(bundle));
    // Whatever user the image runs as writes the output.
    chmodSync(path.join(work, 'out'), 0o777);
    const started = await docker.createAndStart(
      name,
      oneOffContainerBody({
        image,
        entrypoint: ['python3', `/app/benchmark/${script.script}`, '/work/run.json', '/work/out'],
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
      throw new ExitError(`${script.script} exited with code ${code}: ${tail}`, EXIT_CODES.ERROR);
    }
    return place(path.join(work, 'out'));
  } finally {
    await docker.remove(name).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}

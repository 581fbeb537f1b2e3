// A benchmark's task_template: the tasks a run names that the benchmark does not list, made from one task
// directory; the -T arguments they are told; and the errors for a name or argument that has nowhere to go, on
// the command line and in benchmark.yaml. Pure: no Docker, no Temporal.

import { Command } from 'commander';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { specFromFlags } from '../../cli/run-definition.js';
import { addRunOptionFlags, type ParsedFlags } from '../../cli/run-option-flags.js';
import { runSpecFromRequest } from '../../client/run-request.js';
import { inspectBenchmark, loadBenchmark } from '../../contract/load-benchmark.js';
import { formatProblem } from '../../contract/problems.js';
import { runTasks } from '../../contract/task-template.js';
import { taskContainerBody } from '../../activities/engines/docker/container-body.js';
import { jobSpecsOf } from '../../runs/job-specs.js';
import { RunRequestSchema } from '../../runs/run-options.js';

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-task-template-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let made = 0;
function benchmark(files: Record<string, string>): string {
  const dir = path.join(scratch, `b${++made}`);
  for (const [relative, text] of Object.entries({ 'environments/py/Dockerfile': 'FROM scratch\n', ...files })) {
    mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
    writeFileSync(path.join(dir, relative), text);
  }
  return dir;
}

const TEMPLATED = {
  'benchmark.yaml': [
    'name: evals',
    'tasks: [{name: fixed, environment: py}]',
    "task_template: {template: eval, environment: py, pattern: 'suite/[a-z0-9_]+', example: suite/gsm8k}",
  ].join('\n'),
  'tasks/fixed/task.yaml': 'name: fixed\ncommand: run fixed\n',
  'tasks/eval/task.yaml':
    'name: eval\ncommand: run "$BENCHROUTER_TASK"\nextra_env: {KEEP: yes}\ninstances: {command: run --list}\naggregate: mean\nshard_size: 5\n',
};

function flagsSpec(dir: string, argv: string[]) {
  const command = addRunOptionFlags(
    new Command()
      .argument('<benchmark>')
      .exitOverride()
      .configureOutput({ writeErr: () => undefined }),
  );
  command.parse([dir, '--model', 'm', '--endpoint', 'http://127.0.0.1:1/v1', ...argv], { from: 'user' });
  return specFromFlags(dir, command.opts<ParsedFlags>());
}

describe('a task template', () => {
  it('makes a task for each name its pattern takes, in the template directory, told its name and the -T arguments', () => {
    const dir = benchmark(TEMPLATED);
    const spec = flagsSpec(dir, ['--tasks', 'fixed,suite/gsm8k', '-T', 'shuffle=false', '-T', 'with="no"', '--task-args', 'n=a=b']);
    expect(spec.tasks.map((t) => [t.name, t.directory, t.command])).toEqual([
      ['fixed', undefined, 'run fixed'],
      ['suite/gsm8k', 'eval', 'run "$BENCHROUTER_TASK"'],
    ]);
    const made = spec.tasks[1]!;
    // The values as written: the benchmark reads them its own way (Inspect as YAML, where a bare no is false).
    expect(made.extraEnv).toEqual({ KEEP: 'yes', BENCHROUTER_TASK: 'suite/gsm8k', BENCHROUTER_TASK_ARGS: '{"shuffle":"false","with":"\\"no\\"","n":"a=b"}' });
    expect(made).toMatchObject({ instancesCommand: 'run --list', aggregate: { overall: 'mean' }, shardSize: 5 });
    expect(spec.options.taskArgs).toEqual({ shuffle: 'false', with: '"no"', n: 'a=b' });
  });

  it('runs in the template directory with a job id and container name that hold no "/"', () => {
    const dir = benchmark(TEMPLATED);
    const spec = flagsSpec(dir, ['--tasks', 'suite/gsm8k']);
    const [job] = jobSpecsOf({ ...spec, plan: [null] });
    expect(job!.jobId).toBe(`${spec.runId}.000-suite.gsm8k`);
    const body = taskContainerBody({ job: job!, hostId: 'h', resultsDir: '/r', image: 'i' }, 'key');
    expect(body.WorkingDir).toBe('/app/benchmark/tasks/eval');
  });

  it('is the same from an API body', () => {
    const dir = benchmark(TEMPLATED);
    const body = RunRequestSchema.parse({
      benchmark: dir,
      model: 'm',
      endpoint: 'http://127.0.0.1:1/v1',
      tasks: ['suite/gsm8k'],
      taskArgs: { shuffle: 'false' },
    });
    expect(runSpecFromRequest(body).tasks[0]!.extraEnv).toMatchObject({ BENCHROUTER_TASK_ARGS: '{"shuffle":"false"}' });
  });

  it('refuses a name it does not take, arguments for the own tasks, and a template-only benchmark run without --tasks', () => {
    const dir = benchmark(TEMPLATED);
    expect(() => flagsSpec(dir, ['--tasks', 'other/gsm8k'])).toThrow(
      '--tasks: no task named "other/gsm8k" (have fixed; or a name matching suite/[a-z0-9_]+, like suite/gsm8k)',
    );
    expect(() => flagsSpec(dir, ['--tasks', 'suite/../x'])).toThrow('no task named "suite/../x"');
    expect(() => flagsSpec(dir, ['-T', 'a=1'])).toThrow(
      "task arguments (-T, --task-args) are for the tasks benchmark evals's template makes (like suite/gsm8k), not for its own tasks",
    );
    expect(() => flagsSpec(dir, ['-T', 'novalue'])).toThrow('--task-args: expected key=value, got "novalue"');
    const only = benchmark({ ...TEMPLATED, 'benchmark.yaml': TEMPLATED['benchmark.yaml'].replace('tasks: [{name: fixed, environment: py}]', '') });
    expect(() => flagsSpec(only, [])).toThrow('benchmark evals runs the tasks a run names: give --tasks, like --tasks suite/gsm8k');
    expect(
      runTasks(
        loadBenchmark(
          benchmark({ 'benchmark.yaml': 'name: plain\ntasks: [{name: fixed, environment: py}]', 'tasks/fixed/task.yaml': 'name: fixed\ncommand: x\n' }),
        ),
        ['fixed'],
        { a: '1' },
      ),
    ).toEqual({
      ok: false,
      problem: 'benchmark plain takes no task arguments (-T, --task-args): it has no task_template',
    });
  });

  it('is checked in benchmark.yaml: its directory, its pattern and its example', () => {
    const dir = benchmark({
      ...TEMPLATED,
      'benchmark.yaml': "name: evals\ntask_template: {template: nowhere, environment: py, pattern: 'suite/(', example: suite/x}\n",
    });
    const problems = inspectBenchmark(dir)
      .problems.map(formatProblem)
      .map((p) => p.replace(`${dir}/`, ''));
    expect(problems).toEqual([
      expect.stringMatching(/^benchmark\.yaml: task_template\.pattern: expected a regular expression, got "suite\/\(": /),
      'benchmark.yaml: task_template.example: expected a name the pattern "suite/(" matches, got "suite/x"',
    ]);
    const missing = benchmark({
      ...TEMPLATED,
      'benchmark.yaml': "name: evals\ntask_template: {template: nowhere, environment: py, pattern: 'x', example: x}\n",
    });
    expect(inspectBenchmark(missing).problems.map(formatProblem)).toEqual([
      `${missing}/benchmark.yaml: task_template.template: task directory tasks/nowhere/ not found inside the benchmark`,
    ]);
    const none = benchmark({ 'benchmark.yaml': 'name: evals\n' });
    expect(inspectBenchmark(none).problems.map(formatProblem)).toEqual([
      `${none}/benchmark.yaml: tasks: expected at least one task (or a task_template that makes the tasks a run names)`,
    ]);
  });
});

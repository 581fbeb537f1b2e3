// The tasks a run runs: the benchmark's own tasks it names (all of them when it names none), and for a benchmark
// with a task_template, a task made from the template for each other name the template takes. A made task is
// the template's definition under the name given, run in the template's directory, told its name and the run's
// task arguments in BENCHROUTER_TASK and BENCHROUTER_TASK_ARGS (a JSON object of strings). Pure: no I/O.

import { safeTest, TEMPLATED_TASK_NAME } from './benchmark-schema.js';
import type { Benchmark, TaskDefinition } from './benchmark.js';

export const TASK_NAME_ENV = 'BENCHROUTER_TASK';
export const TASK_ARGS_ENV = 'BENCHROUTER_TASK_ARGS';

export type RunTasks = { ok: true; tasks: TaskDefinition[] } | { ok: false; problem: string };

export function runTasks(benchmark: Benchmark, names: readonly string[] | undefined, taskArgs?: Readonly<Record<string, string>>): RunTasks {
  const template = benchmark.taskTemplate;
  const hasArgs = taskArgs !== undefined && Object.keys(taskArgs).length > 0;
  if (!names?.length) {
    if (benchmark.tasks.length === 0)
      return { ok: false, problem: `benchmark ${benchmark.name} runs the tasks a run names: give --tasks, like --tasks ${template?.example ?? '<name>'}` };
    if (hasArgs) return { ok: false, problem: argsProblem(benchmark) };
    return { ok: true, tasks: benchmark.tasks };
  }
  const own = new Set(benchmark.tasks.map((task) => task.name));
  const others = [...new Set(names.filter((name) => !own.has(name)))];
  const unknown = others.filter((name) => !template || !TEMPLATED_TASK_NAME.test(name) || !safeTest(template.pattern, name));
  if (unknown.length) {
    const have = benchmark.tasks.map((task) => task.name).join(', ');
    const made = template ? `${have ? '; ' : ''}or a name matching ${template.pattern}, like ${template.example}` : '';
    return { ok: false, problem: `no task named ${unknown.map((t) => `"${t}"`).join(', ')} (have ${have || 'none of its own'}${made})` };
  }
  if (hasArgs && others.length === 0) return { ok: false, problem: argsProblem(benchmark) };
  const made = others.map((name) => madeTask(template!.task, name, taskArgs ?? {}));
  return { ok: true, tasks: [...benchmark.tasks.filter((task) => names.includes(task.name)), ...made] };
}

function argsProblem(benchmark: Benchmark): string {
  return benchmark.taskTemplate
    ? `task arguments (-T, --task-args) are for the tasks benchmark ${benchmark.name}'s template makes (like ${benchmark.taskTemplate.example}), not for its own tasks`
    : `benchmark ${benchmark.name} takes no task arguments (-T, --task-args): it has no task_template`;
}

function madeTask(template: TaskDefinition, name: string, taskArgs: Readonly<Record<string, string>>): TaskDefinition {
  return {
    ...template,
    name,
    directory: template.directory ?? template.name,
    extraEnv: { ...template.extraEnv, [TASK_NAME_ENV]: name, [TASK_ARGS_ENV]: JSON.stringify(taskArgs) },
  };
}

/** The task's directory under tasks/ (and its working directory under the mounted benchmark). */
export function taskDirectory(task: Pick<TaskDefinition, 'name' | 'directory'>): string {
  return task.directory ?? task.name;
}

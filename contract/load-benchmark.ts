// Loads a benchmark directory (docs/benchmark-contract.md) into a Benchmark, collecting every problem at once
// rather than stopping at the first, so `br validate` can show an author the whole list.

import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import {
  aggregateMapping,
  BenchmarkYamlSchema,
  DEFAULT_DIND_PIDS,
  DEFAULT_RESOURCES,
  PreloadImageEntrySchema,
  TaskEntrySchema,
  TaskYamlSchema,
  type TaskEntry,
  type TaskYaml,
} from './benchmark-schema.js';
import type { Benchmark, TaskDefinition } from './benchmark.js';
import { fieldPath, InputError, type Problem } from './problems.js';
import { submittedSizeProblems } from './submitted-size.js';
import { INSTANCE_LIST_CAP_BYTES, parseInstanceList } from './task-instances.js';
import { readYamlFile } from './yaml-file.js';

export interface LoadOutcome {
  benchmark?: Benchmark;
  problems: Problem[];
}

/** Loads and validates; throws InputError listing every problem when there is any. */
export function loadBenchmark(dir: string): Benchmark {
  const outcome = inspectBenchmark(dir);
  if (outcome.problems.length > 0 || !outcome.benchmark) throw new InputError(outcome.problems);
  return outcome.benchmark;
}

export function inspectBenchmark(dir: string): LoadOutcome {
  const problems: Problem[] = [];
  const shown = (...parts: string[]) => path.join(dir, ...parts);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    return { problems: [{ file: dir, field: '', message: 'expected a benchmark directory, found none' }] };
  }
  const root = realpathSync(dir);

  const benchmarkFile = shown('benchmark.yaml');
  const benchmarkYaml = readYaml(benchmarkFile, BenchmarkYamlSchema, problems);
  if (!benchmarkYaml) return { problems };

  const preloadBuilds = preloadImageBuilds(root, benchmarkFile, benchmarkYaml.preload_images, problems);
  const tasks: TaskDefinition[] = [];
  const firstIndexOf = new Map<string, number>();
  benchmarkYaml.tasks.forEach((rawEntry, index) => {
    const entry = checkSchema(benchmarkFile, rawEntry, TaskEntrySchema, problems, [`tasks`, index]);
    if (!entry) return;
    const seen = firstIndexOf.get(entry.name);
    if (seen !== undefined) {
      problems.push({ file: benchmarkFile, field: `tasks[${index}].name`, message: `duplicate task name "${entry.name}" (also at tasks[${seen}])` });
      return;
    }
    firstIndexOf.set(entry.name, index);
    const task = loadTask({ root, dir, benchmarkFile, preloadBuilds, problems }, entry, `tasks[${index}]`);
    if (task) tasks.push(task);
  });

  let taskTemplate: Benchmark['taskTemplate'];
  const template = benchmarkYaml.task_template;
  if (template) {
    if (firstIndexOf.has(template.template))
      problems.push({
        file: benchmarkFile,
        field: 'task_template.template',
        message: `"${template.template}" is also a task of tasks[${firstIndexOf.get(template.template)}]: a template's directory makes tasks, it is not one`,
      });
    const task = loadTask(
      { root, dir, benchmarkFile, preloadBuilds, problems },
      { name: template.template, environment: template.environment },
      'task_template',
      'template',
    );
    if (task) taskTemplate = { pattern: template.pattern, example: template.example, task };
  }

  problems.push(...submittedSizeProblems(tasks, (task) => shown('tasks', task.name, 'task.yaml'), benchmarkFile));
  if (problems.length > 0) return { problems };
  return {
    benchmark: { name: benchmarkYaml.name, description: benchmarkYaml.description ?? '', dir: root, tasks, ...(taskTemplate ? { taskTemplate } : {}) },
    problems,
  };
}

interface LoadContext {
  root: string;
  /** The directory as the caller named it, for the files errors show. */
  dir: string;
  benchmarkFile: string;
  preloadBuilds: Map<string, string>;
  problems: Problem[];
}

/**
 * One task of benchmark.yaml (`at`: where it is named there, `nameField` the field holding its directory name):
 * its environment and directory checked, its task.yaml read. Undefined, with the problems recorded, when it
 * cannot be loaded.
 */
function loadTask(
  { root, dir, benchmarkFile, preloadBuilds, problems }: LoadContext,
  entry: TaskEntry,
  at: string,
  nameField = 'name',
): TaskDefinition | undefined {
  const shown = (...parts: string[]) => path.join(dir, ...parts);
  const envDir = path.join(root, 'environments', entry.environment);
  const envPlace = placeOfDirectory(root, envDir);
  if (envPlace === 'outside') {
    problems.push({
      file: benchmarkFile,
      field: `${at}.environment`,
      message: `environment "${entry.environment}" leads outside the benchmark: expected a directory environments/${entry.environment}/ inside the benchmark, not a link out of it`,
    });
  } else if (envPlace === 'missing') {
    problems.push({
      file: benchmarkFile,
      field: `${at}.environment`,
      message: `environment "${entry.environment}" not found: expected a directory environments/${entry.environment}/ inside the benchmark`,
    });
  } else if (!existsSync(path.join(envDir, 'Dockerfile'))) {
    problems.push({ file: shown('environments', entry.environment), field: '', message: 'expected a Dockerfile in the environment directory, found none' });
  }

  const taskDir = path.join(root, 'tasks', entry.name);
  const taskPlace = placeOfDirectory(root, taskDir);
  if (taskPlace === 'outside') {
    problems.push({
      file: benchmarkFile,
      field: `${at}.${nameField}`,
      message: `task directory tasks/${entry.name}/ leads outside the benchmark: expected a directory inside the benchmark, not a link out of it`,
    });
    return undefined;
  }
  if (taskPlace === 'missing') {
    problems.push({ file: benchmarkFile, field: `${at}.${nameField}`, message: `task directory tasks/${entry.name}/ not found inside the benchmark` });
    return undefined;
  }
  const taskFile = shown('tasks', entry.name, 'task.yaml');
  const taskYaml = readYaml(taskFile, TaskYamlSchema, problems);
  if (!taskYaml) return undefined;
  if (taskYaml.name !== entry.name) {
    problems.push({ file: taskFile, field: 'name', message: `expected "${entry.name}" (the name benchmark.yaml gives this task), got "${taskYaml.name}"` });
    return undefined;
  }
  const builds = Object.fromEntries(taskYaml.docker_images.filter((image) => preloadBuilds.has(image)).map((image) => [image, preloadBuilds.get(image)!]));
  const instances = declaredInstances(realpathSync(taskDir), taskFile, taskYaml.instances, problems);
  return {
    name: taskYaml.name,
    environment: entry.environment,
    command: taskYaml.command,
    timeoutSeconds: taskYaml.timeout,
    resultMapping: taskYaml.result_mapping,
    docker: taskYaml.docker,
    dockerImages: taskYaml.docker_images,
    ...(Object.keys(builds).length ? { preloadBuilds: builds } : {}),
    extraEnv: Object.fromEntries(Object.entries(taskYaml.extra_env).map(([k, v]) => [k, String(v)])),
    resources: { ...taskYaml.resources, pids: taskYaml.resources.pids ?? (taskYaml.docker ? DEFAULT_DIND_PIDS : DEFAULT_RESOURCES.pids) },
    network: taskYaml.network,
    ...instances,
    ...(taskYaml.aggregate !== undefined ? { aggregate: aggregateMapping(taskYaml.aggregate) } : {}),
    ...(taskYaml.shard_size !== undefined ? { shardSize: taskYaml.shard_size } : {}),
    ...(taskYaml.min_shard_size !== undefined ? { minShardSize: taskYaml.min_shard_size } : {}),
  };
}

/**
 * task.yaml's `instances`: a file's ids read now (a file in the task's directory, not a link out of it), or the
 * command that lists them at submit. Nothing when the task declares none.
 */
function declaredInstances(
  taskDir: string,
  taskFile: string,
  declared: TaskYaml['instances'],
  problems: Problem[],
): Pick<TaskDefinition, 'instances' | 'instancesCommand'> {
  if (declared === undefined) return {};
  if (typeof declared === 'object' && 'command' in declared) return { instancesCommand: declared.command };
  const name = typeof declared === 'string' ? declared : declared.file;
  const field = typeof declared === 'string' ? 'instances' : 'instances.file';
  const file = path.resolve(taskDir, name);
  const lexical = path.relative(taskDir, file);
  if (path.isAbsolute(name) || lexical === '' || lexical === '..' || lexical.startsWith(`..${path.sep}`)) {
    problems.push({ file: taskFile, field, message: `"${name}" leads outside the task directory: expected a file inside it, relative to task.yaml` });
    return {};
  }
  if (!existsSync(file) || !statSync(file).isFile()) {
    problems.push({ file: taskFile, field, message: `"${name}" not found: expected a file in the task directory listing the task's instances` });
    return {};
  }
  const real = path.relative(taskDir, realpathSync(file));
  if (real === '..' || real.startsWith(`..${path.sep}`) || path.isAbsolute(real)) {
    problems.push({ file: taskFile, field, message: `"${name}" leads outside the task directory: expected a file inside it, not a link out of it` });
    return {};
  }
  if (statSync(file).size > INSTANCE_LIST_CAP_BYTES) {
    problems.push({ file: taskFile, field, message: `"${name}" is over ${INSTANCE_LIST_CAP_BYTES / 1024 / 1024} MiB: expected a list of instance ids` });
    return {};
  }
  const parsed = parseInstanceList(readFileSync(file, 'utf8'));
  if (!parsed.ok) {
    for (const problem of parsed.problems) problems.push({ file: path.join(path.dirname(taskFile), name), field: '', message: problem });
    return {};
  }
  return { instances: parsed.ids };
}

/**
 * benchmark.yaml's `preload_images`, checked entry by entry: each a distinct image whose build context is a
 * directory inside the benchmark holding a Dockerfile. Image reference -> context, relative to the benchmark.
 */
function preloadImageBuilds(root: string, benchmarkFile: string, entries: unknown[], problems: Problem[]): Map<string, string> {
  const builds = new Map<string, string>();
  const firstIndexOf = new Map<string, number>();
  entries.forEach((raw, index) => {
    const entry = checkSchema(benchmarkFile, raw, PreloadImageEntrySchema, problems, ['preload_images', index]);
    if (!entry) return;
    const field = `preload_images[${index}]`;
    const seen = firstIndexOf.get(entry.name);
    if (seen !== undefined) {
      problems.push({
        file: benchmarkFile,
        field: `${field}.name`,
        message: `duplicate image "${entry.name}" (also at preload_images[${seen}]): one build context per image`,
      });
      return;
    }
    firstIndexOf.set(entry.name, index);
    const context = path.resolve(root, entry.build);
    const lexical = path.relative(root, context);
    const escapes = path.isAbsolute(entry.build) || lexical === '' || lexical === '..' || lexical.startsWith(`..${path.sep}`);
    const place = escapes ? 'outside' : placeOfDirectory(root, context);
    if (place !== 'inside') {
      problems.push({
        file: benchmarkFile,
        field: `${field}.build`,
        message:
          place === 'outside'
            ? `"${entry.build}" leads outside the benchmark: expected a directory inside it, relative to benchmark.yaml`
            : `"${entry.build}" not found: expected a build context directory inside the benchmark, relative to benchmark.yaml`,
      });
      return;
    }
    if (!existsSync(path.join(context, 'Dockerfile'))) {
      problems.push({ file: benchmarkFile, field: `${field}.build`, message: `expected a Dockerfile in "${entry.build}", found none` });
      return;
    }
    builds.set(entry.name, path.relative(root, realpathSync(context)));
  });
  return builds;
}

/**
 * Whether `candidate` is a directory whose real path (symlinks resolved) stays under `root`. A link
 * out of the benchmark is told apart from a missing directory, so the author is not told "not found"
 * about a directory they can see.
 */
function placeOfDirectory(root: string, candidate: string): 'inside' | 'outside' | 'missing' {
  if (!existsSync(candidate)) return 'missing';
  const real = realpathSync(candidate);
  const relative = path.relative(root, real);
  if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return 'outside';
  return statSync(real).isDirectory() ? 'inside' : 'missing';
}

export function readYaml<T extends z.ZodType>(file: string, schema: T, problems: Problem[]): z.infer<T> | undefined {
  const read = readYamlFile(file);
  if (!read.ok) {
    problems.push(read.problem);
    return undefined;
  }
  return checkSchema(file, read.data, schema, problems, []);
}

export function checkSchema<T extends z.ZodType>(file: string, data: unknown, schema: T, problems: Problem[], at: PropertyKey[]): z.infer<T> | undefined {
  const parsed = schema.safeParse(data, { reportInput: true });
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    const message =
      issue.code === 'unrecognized_keys' ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}` : issue.message;
    problems.push({ file, field: fieldPath([...at, ...issue.path]), message });
  }
  return undefined;
}

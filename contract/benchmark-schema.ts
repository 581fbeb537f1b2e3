// zod schemas for the benchmark contract (docs/benchmark-contract.md): benchmark.yaml and task.yaml.
// Error texts are written for benchmark authors: each says what was expected and what was found.

import { z } from 'zod';
import { parseResultPath } from './result-mapping.js';
import { showValue } from './problems.js';

/** zod error option that reads "expected <what>, got <value>". */
export function expecting(what: string) {
  return { error: (issue: { input?: unknown }) => `expected ${what}, got ${showValue(issue.input)}` };
}

/** A name that is also one directory level: it can never escape the benchmark directory. */
const pathSegmentName = (what: string) =>
  z.string(expecting(`${what} as a string`)).superRefine((value, ctx) => {
    if (value.includes('/') || value.includes('\\') || value === '..' || value === '.') {
      ctx.addIssue({ code: 'custom', message: `${showValue(value)} must stay inside the benchmark directory (a plain name, no "/" or "..")` });
    } else if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value)) {
      ctx.addIssue({ code: 'custom', message: `expected ${what} of letters, digits, ".", "_" or "-", got ${showValue(value)}` });
    }
  });

export const TaskEntrySchema = z.strictObject(
  { name: pathSegmentName('a task name'), environment: pathSegmentName('an environment name') },
  expecting('{name, environment}'),
);

/** An image reference as `docker build -t` takes it: lower-case repository path, an optional tag. */
const IMAGE_REFERENCE = /^[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?::\d+)?(?:\/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$/;

/**
 * An image the benchmark's DinD tasks preload (`docker_images`) and that BenchRouter builds on demand from a
 * build context inside the benchmark directory: no `docker build` by hand before a first run.
 */
export const PreloadImageEntrySchema = z.strictObject(
  {
    name: z.string(expecting('an image reference like "bench-postgres:15"')).regex(IMAGE_REFERENCE, expecting('an image reference like "bench-postgres:15"')),
    build: z
      .string(expecting('a build context directory inside the benchmark, like "images/postgres"'))
      .min(1, expecting('a build context directory inside the benchmark, like "images/postgres"')),
  },
  expecting('{name, build}'),
);

/**
 * The name of a task a run names and a task template makes (`inspect_evals/gsm8k`): path-like words of letters,
 * digits, ".", "_" or "-", joined by "/", never "." or "..": it names a dataset or eval, never a file.
 */
export const TEMPLATED_TASK_NAME = /^(?!\.{1,2}(?:\/|$))[A-Za-z0-9][A-Za-z0-9._-]*(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/**
 * benchmark.yaml `task_template`: the tasks a run names that the benchmark does not list (`br run inspect --tasks
 * inspect_evals/gsm8k`), each made from one task directory (`template`) and run in `environment`, for names that
 * match `pattern`. The task learns its name and the run's task arguments from BENCHROUTER_TASK and
 * BENCHROUTER_TASK_ARGS.
 */
export const TaskTemplateSchema = z.strictObject(
  {
    template: pathSegmentName('a task directory name'),
    environment: pathSegmentName('an environment name'),
    pattern: z.string(expecting('a regular expression the names of its tasks match')).superRefine((value, ctx) => {
      try {
        new RegExp(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `expected a regular expression, got ${showValue(value)}: ${(error as Error).message}` });
      }
    }),
    example: z.string(expecting('an example task name')).regex(TEMPLATED_TASK_NAME, expecting('a task name like "inspect_evals/gsm8k"')),
  },
  expecting('{template, environment, pattern, example}'),
);

/** Task and preload-image entries are checked one by one (TaskEntrySchema, PreloadImageEntrySchema), so one bad entry hides no other problem. */
export const BenchmarkYamlSchema = z
  .strictObject(
    {
      name: z.string(expecting('a benchmark name')).regex(/^[a-z0-9][a-z0-9._-]*$/, expecting('a lower-case name of letters, digits, ".", "_" or "-"')),
      description: z.string(expecting('a string')).optional(),
      tasks: z.array(z.unknown(), expecting('a list of {name, environment}')).default([]),
      task_template: TaskTemplateSchema.optional(),
      preload_images: z.array(z.unknown(), expecting('a list of {name, build}')).default([]),
    },
    expecting('a mapping with name and tasks'),
  )
  .superRefine((benchmark, ctx) => {
    if (benchmark.tasks.length === 0 && !benchmark.task_template)
      ctx.addIssue({ code: 'custom', path: ['tasks'], message: 'expected at least one task (or a task_template that makes the tasks a run names)' });
    const example = benchmark.task_template?.example;
    if (example !== undefined && benchmark.task_template && !safeTest(benchmark.task_template.pattern, example))
      ctx.addIssue({
        code: 'custom',
        path: ['task_template', 'example'],
        message: `expected a name the pattern ${showValue(benchmark.task_template.pattern)} matches, got ${showValue(example)}`,
      });
  });

/** Whether `pattern` (a regular expression, maybe invalid) matches the whole of `name`. */
export function safeTest(pattern: string, name: string): boolean {
  try {
    return new RegExp(`^(?:${pattern})$`).test(name);
  } catch {
    return false;
  }
}

const MEMORY = /^\d+(\.\d+)?[kmgKMG]?[bB]?$/;
const RESERVED_ENV = ['BENCHROUTER_MODEL_ENDPOINT', 'BENCHROUTER_MODEL_NAME', 'BENCHROUTER_API_KEY', 'BENCHROUTER_OUTPUT_DIR'];

export const DEFAULT_RESOURCES = { memory: '2g', cpus: 1, pids: 512, disk: '10g' } as const;
/** dockerd and containerd alone run a few hundred threads, and the pids limit counts threads. */
export const DEFAULT_DIND_PIDS = 4096;
export const DEFAULT_TIMEOUT_SECONDS = 3600;
export const TASK_NETWORK_MODES = ['isolated', 'host'] as const;

export const ResourcesSchema = z.strictObject(
  {
    memory: z.string(expecting('a memory size like "2g"')).regex(MEMORY, expecting('a memory size like "512m" or "2g"')).default(DEFAULT_RESOURCES.memory),
    cpus: z.number(expecting('a positive number of CPUs')).positive(expecting('a positive number of CPUs')).default(DEFAULT_RESOURCES.cpus),
    // No default here: a DinD task's own daemon needs more processes (see DEFAULT_DIND_PIDS).
    pids: z.number(expecting('a positive whole number')).int(expecting('a positive whole number')).positive(expecting('a positive whole number')).optional(),
    // What the task may write: /app/results, the container's own filesystem and a DinD task's daemon storage.
    disk: z.string(expecting('a disk size like "10g"')).regex(MEMORY, expecting('a disk size like "500m" or "10g"')).default(DEFAULT_RESOURCES.disk),
  },
  expecting('a mapping of memory, cpus, pids, disk'),
);

const ResultMappingSchema = z
  .record(z.string(), z.string(expecting('a dot/bracket path into result.json')), expecting('a mapping like {overall: "accuracy"}'))
  .superRefine((mapping, ctx) => {
    if (!('overall' in mapping)) ctx.addIssue({ code: 'custom', message: 'expected an "overall" entry: the path of the main score in result.json' });
    for (const [name, path] of Object.entries(mapping)) {
      try {
        parseResultPath(path);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: [name], message: (error as Error).message });
      }
    }
  });

const positiveWhole = z.number(expecting('a positive whole number')).int(expecting('a positive whole number')).positive(expecting('a positive whole number'));

const EnvValue = z.union([z.string(), z.number(), z.boolean()], expecting('a string, number or boolean'));

const taskFileName = z
  .string(expecting('a file in the task directory, like "episodes.jsonl"'))
  .min(1, expecting('a file in the task directory, like "episodes.jsonl"'));

/**
 * Where a task's instances are listed (contract/task-instances.ts): a file in its directory, read when the
 * benchmark is loaded, or a command run in the task's image (its directory the working directory) whose
 * output lists them, run when a run is submitted.
 */
export const InstancesSchema = z.union(
  [taskFileName, z.strictObject({ file: taskFileName }), z.strictObject({ command: z.string().min(1) })],
  expecting('a file in the task directory, {file: <name>} or {command: <shell command>}'),
);

export const AGGREGATIONS = ['mean', 'sum'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

/**
 * How a task's result combines over its instances, which is what lets a run split it into shards: `mean`
 * (its overall is the mean over instances), or a mapping of result_mapping names to `mean` or `sum`.
 */
export const AggregateSchema = z.union(
  [z.literal('mean'), z.record(z.string(), z.enum(AGGREGATIONS, expecting('"mean" or "sum"')))],
  expecting('"mean", or a mapping of result_mapping names to "mean" or "sum" like {overall: mean, correct: sum}'),
);

export const TaskYamlSchema = z
  .strictObject(
    {
      name: pathSegmentName('a task name'),
      command: z.string(expecting('a shell command string')).min(1, expecting('a non-empty shell command')),
      timeout: z.number(expecting('a positive number of seconds')).positive(expecting('a positive number of seconds')).default(DEFAULT_TIMEOUT_SECONDS),
      result_mapping: ResultMappingSchema.default({ overall: 'overall' }),
      docker: z.boolean(expecting('true or false')).default(false),
      docker_images: z.array(z.string(expecting('an image reference')).min(1), expecting('a list of image references')).default([]),
      extra_env: z
        .record(
          z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, expecting('an environment variable name')),
          EnvValue,
          expecting('a mapping of variable names to values'),
        )
        .superRefine((env, ctx) => {
          for (const key of Object.keys(env)) {
            if (RESERVED_ENV.includes(key)) ctx.addIssue({ code: 'custom', path: [key], message: `${key} is set by BenchRouter and cannot be overridden` });
          }
        })
        .default({}),
      resources: ResourcesSchema.default({ memory: DEFAULT_RESOURCES.memory, cpus: DEFAULT_RESOURCES.cpus, disk: DEFAULT_RESOURCES.disk }),
      // isolated: a bridge that reaches the model gateway and the outside, not the worker host's other
      // ports. host: the worker host's own network, every service it listens on (loopback included:
      // Temporal, databases, the gateway's admin paths) open to the task. Only for a task that needs it.
      network: z.enum(TASK_NETWORK_MODES, expecting('"isolated" or "host"')).default('isolated'),
      instances: InstancesSchema.optional(),
      aggregate: AggregateSchema.optional(),
      // Instances per job when a run splits the task; a run's shardSize option overrides it.
      shard_size: positiveWhole.optional(),
      // The fewest instances the task's harness can score in one job (BFCL's summary needs two).
      min_shard_size: positiveWhole.optional(),
    },
    expecting('a mapping with name and command'),
  )
  .superRefine((task, ctx) => {
    // A task's own Docker daemon makes bridges and iptables rules: on the host's network they would be the host's.
    if (task.docker && task.network === 'host')
      ctx.addIssue({
        code: 'custom',
        path: ['network'],
        message: 'expected "isolated" for a task with docker: true, got "host": its own Docker daemon needs a network of its own',
      });
    if (task.aggregate !== undefined && task.instances === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['aggregate'],
        message: 'a result combines over instances only when the task lists them: add `instances` (a file of ids, or a command that prints them)',
      });
    for (const field of ['shard_size', 'min_shard_size'] as const)
      if (task[field] !== undefined && task.aggregate === undefined)
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `a task is split into shards only when its score is a mean over its instances: add \`aggregate: mean\` (or leave ${field} out)`,
        });
    if (typeof task.aggregate === 'object') {
      if (task.aggregate.overall !== 'mean')
        ctx.addIssue({
          code: 'custom',
          path: ['aggregate', 'overall'],
          message: `expected "mean": a task is split only when its overall is a mean over instances, got ${task.aggregate.overall === undefined ? 'nothing' : `"${task.aggregate.overall}"`}`,
        });
      for (const name of Object.keys(task.aggregate))
        if (!(name in task.result_mapping))
          ctx.addIssue({
            code: 'custom',
            path: ['aggregate', name],
            message: `expected a name of result_mapping (${Object.keys(task.result_mapping).join(', ')}), got "${name}"`,
          });
    }
  });

/** A task's `aggregate` as a mapping: the short form `mean` is `{overall: mean}`. */
export function aggregateMapping(aggregate: z.infer<typeof AggregateSchema>): Record<string, Aggregation> {
  return aggregate === 'mean' ? { overall: 'mean' } : aggregate;
}

export type BenchmarkYaml = z.infer<typeof BenchmarkYamlSchema>;
export type TaskEntry = z.infer<typeof TaskEntrySchema>;
export type TaskTemplate = z.infer<typeof TaskTemplateSchema>;
export type PreloadImageEntry = z.infer<typeof PreloadImageEntrySchema>;
export type TaskYaml = z.infer<typeof TaskYamlSchema>;

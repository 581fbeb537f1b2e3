// The benchmark loader on good and bad benchmark directories: every problem names the file, the
// field and the expectation, and all of them are reported at once. Pure file reading: no Docker.

import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectBenchmark, loadBenchmark } from '../../contract/load-benchmark.js';
import { formatProblem, InputError } from '../../contract/problems.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** A committed fixture, addressed relative to the working directory the way a user would type it. */
const invalidFixture = (name: string) => path.relative(process.cwd(), path.join(repoRoot, 'test', 'fixtures', 'invalid', name));

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-contract-loader-'));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const TINY: Record<string, string | null> = {
  'benchmark.yaml': 'name: tiny\ntasks:\n  - {name: a, environment: shell}\n',
  'environments/shell/Dockerfile': 'FROM scratch\n',
  'tasks/a/task.yaml': 'name: a\ncommand: "true"\n',
};

let made = 0;
/**
 * Writes a one-task benchmark into its own temp directory. `changes` replace or add files; null removes
 * one; a key ending in "/" makes an empty directory.
 */
function tinyBenchmark(changes: Record<string, string | null> = {}): string {
  const dir = path.join(scratch, `bench-${++made}`);
  mkdirSync(dir);
  for (const [relative, content] of Object.entries({ ...TINY, ...changes })) {
    if (content === null) continue;
    const full = path.join(dir, relative);
    if (relative.endsWith('/')) {
      mkdirSync(full, { recursive: true });
      continue;
    }
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
  return dir;
}

function problemsOf(dir: string): string[] {
  const outcome = inspectBenchmark(dir);
  expect(outcome.benchmark).toBeUndefined();
  return outcome.problems.map(formatProblem);
}

function taskYamlProblems(taskYaml: string): string[] {
  const dir = tinyBenchmark({ 'tasks/a/task.yaml': taskYaml });
  return problemsOf(dir).map((line) => line.replace(`${dir}/tasks/a/task.yaml: `, 'task.yaml: '));
}

describe('benchmark.yaml and the directories it names', () => {
  it('reports an environment that has no directory under environments/', () => {
    const dir = invalidFixture('missing-environment');
    expect(problemsOf(dir)).toEqual([
      `${dir}/benchmark.yaml: tasks[0].environment: environment "gpu" not found: expected a directory environments/gpu/ inside the benchmark`,
    ]);
  });

  it('reports an environment directory that holds no Dockerfile', () => {
    const dir = tinyBenchmark({ 'environments/shell/Dockerfile': null, 'environments/shell/': '' });
    expect(problemsOf(dir)).toEqual([`${dir}/environments/shell: expected a Dockerfile in the environment directory, found none`]);
  });

  it('reports a task listed in benchmark.yaml that has no directory under tasks/', () => {
    const dir = tinyBenchmark({ 'tasks/a/task.yaml': null });
    expect(problemsOf(dir)).toEqual([`${dir}/benchmark.yaml: tasks[0].name: task directory tasks/a/ not found inside the benchmark`]);
  });

  it('reports a duplicate task name with the index of its first use', () => {
    const dir = invalidFixture('duplicate-task');
    expect(problemsOf(dir)).toEqual([`${dir}/benchmark.yaml: tasks[2].name: duplicate task name "a" (also at tasks[0])`]);
  });

  it('rejects a task name with "../" that would escape the benchmark directory', () => {
    const dir = tinyBenchmark({ 'benchmark.yaml': 'name: tiny\ntasks:\n  - {name: ../a, environment: shell}\n' });
    expect(problemsOf(dir)).toEqual([`${dir}/benchmark.yaml: tasks[0].name: "../a" must stay inside the benchmark directory (a plain name, no "/" or "..")`]);
  });

  it('rejects an environment that is a symlink to a directory outside the benchmark', () => {
    const outside = path.join(scratch, `outside-${++made}`);
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'Dockerfile'), 'FROM scratch\n');
    const dir = tinyBenchmark({
      'benchmark.yaml': 'name: tiny\ntasks:\n  - {name: a, environment: escape}\n',
      'environments/shell/Dockerfile': null,
      'environments/': '',
    });
    symlinkSync(outside, path.join(dir, 'environments', 'escape'));
    expect(problemsOf(dir)).toEqual([
      `${dir}/benchmark.yaml: tasks[0].environment: environment "escape" leads outside the benchmark: expected a directory environments/escape/ inside the benchmark, not a link out of it`,
    ]);
  });

  it('reports a missing benchmark.yaml', () => {
    const dir = invalidFixture('missing-benchmark-yaml');
    expect(problemsOf(dir)).toEqual([`${dir}/benchmark.yaml: file not found`]);
  });

  it('reports a directory that does not exist at all', () => {
    const dir = path.join(scratch, 'no-such-benchmark');
    expect(problemsOf(dir)).toEqual([`${dir}: expected a benchmark directory, found none`]);
  });

  it('loadBenchmark throws an InputError whose message lists the problems', () => {
    const dir = invalidFixture('duplicate-task');
    const thrown = (() => {
      try {
        loadBenchmark(dir);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as InputError).message).toBe(`${dir}/benchmark.yaml: tasks[2].name: duplicate task name "a" (also at tasks[0])`);
  });
});

describe('preload_images: images a benchmark builds for its DinD tasks', () => {
  const DIND_TASK = 'name: a\ncommand: "true"\ndocker: true\ndocker_images: [bench-db:1, other:2]\n';
  const withImages = (images: string, files: Record<string, string | null> = {}) =>
    tinyBenchmark({
      'benchmark.yaml': `name: tiny\ntasks:\n  - {name: a, environment: shell}\npreload_images:\n${images}`,
      'tasks/a/task.yaml': DIND_TASK,
      ...files,
    });

  it('gives each task the build context of the preloaded images the benchmark declares, and none of the others', () => {
    const dir = withImages('  - {name: bench-db:1, build: images/db}\n', { 'images/db/Dockerfile': 'FROM scratch\n' });
    expect(loadBenchmark(dir).tasks[0]).toMatchObject({ dockerImages: ['bench-db:1', 'other:2'], preloadBuilds: { 'bench-db:1': 'images/db' } });
    expect(loadBenchmark(tinyBenchmark()).tasks[0]!.preloadBuilds).toBeUndefined();
  });

  it('reports a build context that is missing, holds no Dockerfile, or leads outside the benchmark, and a name declared twice', () => {
    const dir = withImages(
      [
        '  - {name: bench-db:1, build: images/none}',
        '  - {name: other:2, build: images/empty}',
        '  - {name: third, build: ../elsewhere}',
        '  - {name: bench-db:1, build: images/empty}',
        '  - {name: "Not An Image", build: images/empty}',
        '  - {name: fourth}',
        '',
      ].join('\n'),
      { 'images/empty/': '' },
    );
    expect(problemsOf(dir).map((line) => line.replace(`${dir}/benchmark.yaml: `, ''))).toEqual([
      'preload_images[0].build: "images/none" not found: expected a build context directory inside the benchmark, relative to benchmark.yaml',
      'preload_images[1].build: expected a Dockerfile in "images/empty", found none',
      'preload_images[2].build: "../elsewhere" leads outside the benchmark: expected a directory inside it, relative to benchmark.yaml',
      'preload_images[3].name: duplicate image "bench-db:1" (also at preload_images[0]): one build context per image',
      'preload_images[4].name: expected an image reference like "bench-postgres:15", got "Not An Image"',
      'preload_images[5].build: expected a build context directory inside the benchmark, like "images/postgres", got nothing',
    ]);
  });
});

describe('task.yaml', () => {
  it('reports a timeout that is not a number, quoting what was written', () => {
    const dir = invalidFixture('timeout-not-a-number');
    expect(problemsOf(dir)).toEqual([`${dir}/tasks/a/task.yaml: timeout: expected a positive number of seconds, got "ten"`]);
  });

  it('reports a negative timeout', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\ntimeout: -5\n')).toEqual(['task.yaml: timeout: expected a positive number of seconds, got -5']);
  });

  it('reports a misspelt field (timout) as an unknown field', () => {
    const dir = invalidFixture('unknown-field');
    expect(problemsOf(dir)).toEqual([`${dir}/tasks/a/task.yaml: unknown field "timout"`]);
  });

  it('reports a result_mapping without an overall entry', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\nresult_mapping:\n  accuracy: metrics.accuracy\n')).toEqual([
      'task.yaml: result_mapping: expected an "overall" entry: the path of the main score in result.json',
    ]);
  });

  it('reports a result_mapping path with bad syntax under the name that holds it', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\nresult_mapping:\n  overall: metrics..accuracy\n')).toEqual([
      'task.yaml: result_mapping.overall: invalid path "metrics..accuracy": empty key at character 9',
    ]);
  });

  it('rejects extra_env that overrides a reserved BENCHROUTER_ variable', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\nextra_env:\n  SEED: 1\n  BENCHROUTER_MODEL_NAME: sneaky\n')).toEqual([
      'task.yaml: extra_env.BENCHROUTER_MODEL_NAME: BENCHROUTER_MODEL_NAME is set by BenchRouter and cannot be overridden',
    ]);
  });

  it('reports a resources.memory that is not a size', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\nresources:\n  memory: lots\n')).toEqual([
      'task.yaml: resources.memory: expected a memory size like "512m" or "2g", got "lots"',
    ]);
  });

  it('reports a task.yaml name that differs from the name benchmark.yaml gives the task', () => {
    expect(taskYamlProblems('name: b\ncommand: "true"\n')).toEqual(['task.yaml: name: expected "a" (the name benchmark.yaml gives this task), got "b"']);
  });

  it('reports a YAML syntax error with its line and column', () => {
    const dir = invalidFixture('yaml-syntax-error');
    expect(problemsOf(dir)).toEqual([
      `${dir}/tasks/a/task.yaml: not valid YAML at line 3, column 1: unexpected end of the stream within a double quoted scalar`,
    ]);
  });

  it('reports a duplicated key with its line and column, rather than keeping the last value', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\ntimeout: 5\ntimeout: 10\n')).toEqual([
      'task.yaml: not valid YAML at line 4, column 1: duplicated mapping key',
    ]);
  });

  it('reports a network other than isolated or host', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\nnetwork: bridge\n')).toEqual(['task.yaml: network: expected "isolated" or "host", got "bridge"']);
  });

  it('rejects network: host for a task with docker: true, whose daemon needs a network of its own', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\ndocker: true\nnetwork: host\n')).toEqual([
      'task.yaml: network: expected "isolated" for a task with docker: true, got "host": its own Docker daemon needs a network of its own',
    ]);
  });

  it('loads network: host as the task asks', () => {
    const dir = tinyBenchmark({ 'tasks/a/task.yaml': 'name: a\ncommand: "true"\nnetwork: host\n' });
    expect(loadBenchmark(dir).tasks[0]!.network).toBe('host');
  });

  it('reports a task.yaml with no command', () => {
    expect(taskYamlProblems('name: a\n')).toEqual(['task.yaml: command: expected a shell command string, got nothing']);
  });
});

describe('a benchmark with several problems', () => {
  it('reports every problem at once, in the order of the tasks', () => {
    const dir = invalidFixture('several-problems');
    const problems = problemsOf(dir);
    expect(problems).toEqual([
      `${dir}/benchmark.yaml: tasks[0].environment: environment "gpu" not found: expected a directory environments/gpu/ inside the benchmark`,
      `${dir}/tasks/b/task.yaml: timeout: expected a positive number of seconds, got "ten"`,
      `${dir}/tasks/b/task.yaml: resources.memory: expected a memory size like "512m" or "2g", got "lots"`,
      `${dir}/tasks/b/task.yaml: unknown field "timout"`,
      `${dir}/benchmark.yaml: tasks[2].name: duplicate task name "a" (also at tasks[0])`,
      `${dir}/benchmark.yaml: tasks[3].name: "../escape" must stay inside the benchmark directory (a plain name, no "/" or "..")`,
      `${dir}/tasks/c/task.yaml: name: expected "c" (the name benchmark.yaml gives this task), got "not-c"`,
      `${dir}/benchmark.yaml: tasks[5].name: task directory tasks/missing/ not found inside the benchmark`,
    ]);
    expect(problems).toHaveLength(8);
  });
});

describe('a valid benchmark', () => {
  it('loads benchmarks/arith with the contract defaults applied', () => {
    const arith = path.join(repoRoot, 'benchmarks', 'arith');
    const outcome = inspectBenchmark(arith);
    expect(outcome.problems).toEqual([]);
    const benchmark = outcome.benchmark!;
    expect(benchmark.name).toBe('arith');
    expect(benchmark.dir).toBe(realpathSync(arith));
    expect(benchmark.description).toMatch(/^Two-digit addition/);
    expect(benchmark.tasks.map((t) => t.name)).toEqual(['addition', 'multiplication']);
    for (const task of benchmark.tasks) {
      expect(task).toMatchObject({
        environment: 'python',
        timeoutSeconds: 300,
        resultMapping: { overall: 'accuracy', correct: 'correct', total: 'total' },
        docker: false,
        dockerImages: [],
        extraEnv: {},
        resources: { memory: '2g', cpus: 1, pids: 512 },
        network: 'isolated',
      });
    }
  });

  it('gives a task.yaml with only name and command a 3600 s timeout and overall: "overall"', () => {
    const dir = tinyBenchmark();
    const outcome = inspectBenchmark(dir);
    expect(outcome.problems).toEqual([]);
    expect(outcome.benchmark!.tasks).toEqual([
      {
        name: 'a',
        environment: 'shell',
        command: 'true',
        timeoutSeconds: 3600,
        resultMapping: { overall: 'overall' },
        docker: false,
        dockerImages: [],
        extraEnv: {},
        resources: { memory: '2g', cpus: 1, pids: 512, disk: '10g' },
        network: 'isolated',
      },
    ]);
  });

  it('passes extra_env values to the task as strings', () => {
    const dir = tinyBenchmark({ 'tasks/a/task.yaml': 'name: a\ncommand: "true"\nextra_env:\n  SEED: 7\n  VERBOSE: true\n  MODE: fast\n' });
    expect(loadBenchmark(dir).tasks[0]!.extraEnv).toEqual({ SEED: '7', VERBOSE: 'true', MODE: 'fast' });
  });
});

describe('definitions too big to submit', () => {
  it('names the task.yaml and the extra_env variable of a task over the submission limit', () => {
    const huge = 'x'.repeat(2_500_000);
    const problems = taskYamlProblems(`name: a\ncommand: "true"\nextra_env:\n  SMALL: 1\n  HUGE: ${huge}\n`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^task\.yaml: extra_env\.HUGE: expected the task's definition to be at most 1,048,576 bytes as submitted, got 2,500,\d{3} bytes, most of it this field \(a run goes to Temporal as one payload, limited to 2 MB\)$/,
    );
  });

  it('names benchmark.yaml and the biggest tasks when only their sum is over the limit', () => {
    const big = (name: string) => `name: ${name}\ncommand: "true"\nextra_env:\n  DATA: ${'y'.repeat(400_000)}\n`;
    const dir = tinyBenchmark({
      'benchmark.yaml': 'name: tiny\ntasks:\n  - {name: a, environment: shell}\n  - {name: b, environment: shell}\n  - {name: c, environment: shell}\n',
      'tasks/a/task.yaml': big('a'),
      'tasks/b/task.yaml': big('b'),
      'tasks/c/task.yaml': big('c'),
    });
    const problems = problemsOf(dir);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      new RegExp(
        `^${dir}/benchmark\\.yaml: tasks: expected the task definitions together to be at most 1,048,576 bytes as submitted, got 1,200,\\d{3} bytes .*the biggest: ${dir}/tasks/a/task\\.yaml extra_env\\.DATA`,
      ),
    );
  });

  it('accepts a benchmark just under the limit', () => {
    const dir = tinyBenchmark({ 'tasks/a/task.yaml': `name: a\ncommand: "true"\nextra_env:\n  DATA: ${'z'.repeat(1_000_000)}\n` });
    expect(inspectBenchmark(dir).problems).toEqual([]);
  });
});

describe("a task's instances (task.yaml instances, aggregate, shard_size)", () => {
  const withInstances = (yaml: string, files: Record<string, string> = {}) =>
    tinyBenchmark({
      'tasks/a/task.yaml': `name: a\ncommand: "true"\n${yaml}`,
      ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`tasks/a/${k}`, v])),
    });

  it('reads ids from a file of one id per line (comments and blank lines skipped) or from JSON Lines with an index', () => {
    const plain = inspectBenchmark(withInstances('instances: ids.txt\n', { 'ids.txt': '# the ids\nboil/1\n\nfreeze/2\n' }));
    expect(plain.problems).toEqual([]);
    expect(plain.benchmark!.tasks[0]).toMatchObject({ instances: ['boil/1', 'freeze/2'] });
    const jsonl = inspectBenchmark(
      withInstances('instances: {file: data.jsonl}\naggregate: mean\nshard_size: 4\n', { 'data.jsonl': '{"index": 0, "q": 1}\n{"index": "x-1"}\n' }),
    );
    expect(jsonl.problems).toEqual([]);
    expect(jsonl.benchmark!.tasks[0]).toMatchObject({ instances: ['0', 'x-1'], aggregate: { overall: 'mean' }, shardSize: 4 });
  });

  it('keeps a command that lists them, to run in the image when a run is submitted', () => {
    const outcome = inspectBenchmark(
      withInstances('instances: {command: "python3 list.py"}\naggregate: {overall: mean, total: sum}\nresult_mapping: {overall: acc, total: n}\n'),
    );
    expect(outcome.problems).toEqual([]);
    expect(outcome.benchmark!.tasks[0]).toMatchObject({ instancesCommand: 'python3 list.py', aggregate: { overall: 'mean', total: 'sum' } });
    expect(outcome.benchmark!.tasks[0]!.instances).toBeUndefined();
  });

  it('names the file and line of every bad id: a duplicate, a comma, spaces, an object without an index', () => {
    const dir = withInstances('instances: ids.txt\n', { 'ids.txt': 'a\nb,c\na\n x\n' });
    expect(problemsOf(dir)).toEqual([
      `${dir}/tasks/a/ids.txt: line 2: "b,c" holds a comma (BENCHROUTER_INSTANCES is comma-separated)`,
      `${dir}/tasks/a/ids.txt: line 3: duplicate id "a" (also on line 1)`,
      `${dir}/tasks/a/ids.txt: line 4: " x" has spaces around it`,
    ]);
    const jsonl = withInstances('instances: d.jsonl\n', { 'd.jsonl': '{"index": 1}\n{"id": 2}\nnot json\n' });
    expect(problemsOf(jsonl)).toEqual([
      `${jsonl}/tasks/a/d.jsonl: line 2: expected an object with an "index" (a number or a non-empty string), got {"id":2}`,
      `${jsonl}/tasks/a/d.jsonl: line 3: not valid JSON`,
    ]);
  });

  it('reports a file that is missing, empty, or outside the task directory', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\ninstances: nowhere.txt\n')).toEqual([
      'task.yaml: instances: "nowhere.txt" not found: expected a file in the task directory listing the task\'s instances',
    ]);
    expect(taskYamlProblems('name: a\ncommand: "true"\ninstances: ../../benchmark.yaml\n')).toEqual([
      'task.yaml: instances: "../../benchmark.yaml" leads outside the task directory: expected a file inside it, relative to task.yaml',
    ]);
    const empty = withInstances('instances: ids.txt\n', { 'ids.txt': '\n# nothing\n' });
    expect(problemsOf(empty)).toEqual([`${empty}/tasks/a/ids.txt: no instance listed: expected one id per line, or JSON Lines with an "index" on each`]);
  });

  it('splits a task only when its score is said to be a mean over the instances it lists', () => {
    expect(taskYamlProblems('name: a\ncommand: "true"\naggregate: mean\n')).toEqual([
      'task.yaml: aggregate: a result combines over instances only when the task lists them: add `instances` (a file of ids, or a command that prints them)',
    ]);
    expect(taskYamlProblems('name: a\ncommand: "true"\ninstances: {command: ls}\nshard_size: 3\n')).toEqual([
      'task.yaml: shard_size: a task is split into shards only when its score is a mean over its instances: add `aggregate: mean` (or leave shard_size out)',
    ]);
    expect(taskYamlProblems('name: a\ncommand: "true"\ninstances: {command: ls}\naggregate: {overall: sum, n: sum}\nshard_size: 0\n')).toEqual([
      'task.yaml: shard_size: expected a positive whole number, got 0',
      'task.yaml: aggregate.overall: expected "mean": a task is split only when its overall is a mean over instances, got "sum"',
      'task.yaml: aggregate.n: expected a name of result_mapping (overall), got "n"',
    ]);
    expect(taskYamlProblems('name: a\ncommand: "true"\ninstances: {script: ls}\n')).toEqual([
      'task.yaml: instances: expected a file in the task directory, {file: <name>} or {command: <shell command>}, got {"script":"ls"}',
    ]);
  });
});

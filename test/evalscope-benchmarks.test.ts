// The EvalScope benchmark (benchmarks/evalscope): it passes `br validate`, every task names a dataset the
// installed EvalScope's own registry knows (asked inside the built image), with the judge and sandbox settings
// that dataset needs, and the built-in suites pick only its tasks, with group1..3 splitting full exactly.

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBenchmark } from '../contract/load-benchmark.js';
import type { TaskDefinition } from '../contract/benchmark.js';
import { loadSuites } from '../runs/suites.js';
import { br, repoRoot } from './support/harness.js';

const benchmarkDir = path.join(repoRoot, 'benchmarks', 'evalscope');
const IMAGE = 'benchrouter-test/evalscope-python:1.14.1';
const TOOLS_IMAGE = 'benchrouter-test/evalscope-tools:1.14.1';

/**
 * What the adapters of the tools environment's datasets import, at load time and when they generate or score
 * (EvalScope imports bfcl_eval and tau2 inside functions): every module must import in the built image.
 */
const ADAPTER_MODULES: Record<string, string[]> = {
  bfcl_v3: [
    'evalscope.benchmarks.bfcl.v3.bfcl_v3_adapter',
    'evalscope.benchmarks.bfcl.v3.generation',
    'bfcl_eval.eval_checker.ast_eval.ast_checker',
    'bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker',
    'bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils',
    'bfcl_eval.model_handler.utils',
    'bfcl_eval.constants.default_prompts',
    'bfcl_eval.constants.enums',
    'bfcl_eval.utils',
  ],
  tau2_bench: [
    'evalscope.benchmarks.tau_bench.tau2_bench.tau2_bench_adapter',
    'evalscope.benchmarks.tau_bench.tau2_bench.generation',
    'tau2.registry',
    'tau2.run',
  ],
  openai_mrcr: ['evalscope.benchmarks.openai_mrcr.openai_mrcr_adapter', 'tiktoken'],
};

const IMPORT_SCRIPT = `
import importlib, json, sys
out = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
        out[name] = 'ok'
    except Exception as error:
        out[name] = f'{type(error).__name__}: {error}'
print(json.dumps(out))
`;

/** The datasets of issue 19: the ones a team's EvalScope scripts run. */
const TEAM_DATASETS = [
  'aime24',
  'aime25',
  'aime26',
  'hmmt26',
  'imo_answerbench',
  'humaneval',
  'live_code_bench',
  'bigcodebench',
  'gpqa_diamond',
  'hle',
  'mmlu_pro',
  'super_gpqa',
  'longbench_v2',
  'openai_mrcr',
  'competition_math',
  'gsm8k',
  'arc',
  'bbh',
  'cmmlu',
  'drop',
  'hellaswag',
  'mmlu',
  'simple_qa',
  'trivia_qa',
  'winogrande',
  'bfcl_v3',
  'general_fc',
  'tau2_bench',
  'swe_bench_verified',
];

/** What EvalScope's registry says about a dataset. */
interface RegistryEntry {
  known: boolean;
  judgeOnly?: boolean;
  sandboxImage?: string | null;
  /** The adapter's own extra_params (tau2_bench's user model lives there). */
  extraParams?: string[];
}

const REGISTRY_SCRIPT = `
import json, sys
import evalscope.benchmarks
from evalscope.api.registry import BENCHMARK_REGISTRY
out = {}
for name in sys.argv[1:]:
    meta = BENCHMARK_REGISTRY.get(name)
    if meta is None:
        out[name] = {'known': False}
        continue
    policy = getattr(meta.data_adapter, 'scoring_policy', None)
    out[name] = {
        'known': True,
        'judgeOnly': str(getattr(policy, 'value', policy)).lower() == 'judge_only',
        'sandboxImage': (meta.sandbox_config or {}).get('image'),
        'extraParams': sorted((meta.extra_params or {}).keys()),
    }
print(json.dumps(out))
`;

function datasetOf(task: TaskDefinition): string {
  const match = /--dataset (\S+)/.exec(task.command);
  if (!match) throw new Error(`benchmarks/evalscope/tasks/${task.name}/task.yaml: command: expected "--dataset NAME", got ${task.command}`);
  return match[1]!;
}

describe('the evalscope benchmark', () => {
  const benchmark = loadBenchmark(benchmarkDir);
  let registry: Record<string, RegistryEntry>;

  beforeAll(() => {
    // Cached after the first build: the layers are the benchmark's own Dockerfile.
    execFileSync('docker', ['build', '--quiet', '--tag', IMAGE, path.join(benchmarkDir, 'environments', 'python')], {
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
      stdio: 'pipe',
    });
    const names = benchmark.tasks.map(datasetOf);
    const out = execFileSync('docker', ['run', '--rm', '--network', 'none', '--entrypoint', 'python3', IMAGE, '-c', REGISTRY_SCRIPT, ...names], {
      encoding: 'utf8',
    });
    registry = JSON.parse(out.trim().split('\n').pop()!) as Record<string, RegistryEntry>;
  }, 900_000);

  it('passes br validate', async () => {
    const result = await br(['validate', benchmarkDir, '--json'], {});
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ valid: true, problems: [] });
    expect(result.code).toBe(0);
  });

  it('has a task for every dataset of the team scripts, named as the dataset', () => {
    const tasks = new Map(benchmark.tasks.map((t) => [t.name, datasetOf(t)]));
    for (const name of TEAM_DATASETS) expect(tasks.get(name), name).toBe(name);
  });

  it("names in every task a dataset that the installed EvalScope's own registry knows", () => {
    const unknown = benchmark.tasks.map(datasetOf).filter((name) => !registry[name]?.known);
    expect(unknown).toEqual([]);
    expect(Object.keys(registry)).toHaveLength(benchmark.tasks.length);
  });

  it("asks for the run's judge exactly where EvalScope scores with a judge, and for tau2_bench's simulated user", () => {
    for (const task of benchmark.tasks) {
      const entry = registry[datasetOf(task)]!;
      const usesUserModel = entry.extraParams?.includes('user_model') ?? false;
      const wantsJudge = / --judge( |$)/.test(task.command);
      expect(wantsJudge, `${task.name}: judge`).toBe(entry.judgeOnly === true || usesUserModel);
      if (usesUserModel) expect(task.command, task.name).toContain('--judge user');
    }
    expect(
      benchmark.tasks
        .filter((t) => / --judge/.test(t.command))
        .map((t) => t.name)
        .sort(),
    ).toEqual(['hle', 'simple_qa', 'tau2_bench']);
  });

  it('runs the sandboxed datasets in DinD with their sandbox image preloaded, and only those', () => {
    // live_code_bench declares a sandbox image but EvalScope runs its tests in-process unless use_sandbox is set.
    const dindTasks = benchmark.tasks.filter((t) => t.docker);
    expect(dindTasks.map((t) => t.name).sort()).toEqual(['bigcodebench', 'humaneval', 'swe_bench_verified']);
    for (const task of dindTasks) {
      expect(task.environment, task.name).toBe('dind');
      expect(task.command, task.name).toContain('--sandbox');
      const image = registry[datasetOf(task)]!.sandboxImage;
      if (image) expect(task.dockerImages, task.name).toEqual([image]);
    }
    for (const task of benchmark.tasks.filter((t) => !t.docker)) expect(task.command, task.name).not.toContain('--sandbox');
  });
});

describe('the tools environment (bfcl_v3, tau2_bench, openai_mrcr)', () => {
  const benchmark = loadBenchmark(benchmarkDir);

  beforeAll(() => {
    // Its first layers are the python environment's; the extra packages take a few minutes on a first build.
    execFileSync('docker', ['build', '--quiet', '--tag', TOOLS_IMAGE, path.join(benchmarkDir, 'environments', 'tools')], {
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
      stdio: 'pipe',
    });
  }, 1_800_000);

  it('is the environment of exactly those three tasks', () => {
    expect(
      benchmark.tasks
        .filter((t) => t.environment === 'tools')
        .map((t) => t.name)
        .sort(),
    ).toEqual(Object.keys(ADAPTER_MODULES).sort());
  });

  it('imports every module their EvalScope adapters need, offline, with EvalScope itself still loading', () => {
    const modules = [...Object.values(ADAPTER_MODULES).flat(), 'evalscope.run'];
    const out = execFileSync('docker', ['run', '--rm', '--network', 'none', '--entrypoint', 'python3', TOOLS_IMAGE, '-c', IMPORT_SCRIPT, ...modules], {
      encoding: 'utf8',
    });
    const imported = JSON.parse(out.trim().split('\n').pop()!) as Record<string, string>;
    expect(imported).toEqual(Object.fromEntries(modules.map((m) => [m, 'ok'])));
    // Importing bfcl-eval's model handlers and litellm takes over a minute on a busy 2-core machine.
  }, 300_000);

  it("registers the three datasets in that image's EvalScope", () => {
    const out = execFileSync(
      'docker',
      ['run', '--rm', '--network', 'none', '--entrypoint', 'python3', TOOLS_IMAGE, '-c', REGISTRY_SCRIPT, ...Object.keys(ADAPTER_MODULES)],
      { encoding: 'utf8' },
    );
    const registry = JSON.parse(out.trim().split('\n').pop()!) as Record<string, RegistryEntry>;
    expect(Object.fromEntries(Object.entries(registry).map(([name, entry]) => [name, entry.known]))).toEqual({
      bfcl_v3: true,
      tau2_bench: true,
      openai_mrcr: true,
    });
  });
});

describe('the built-in EvalScope suites', () => {
  const suites = loadSuites([path.join(repoRoot, 'benchmarks', 'suites.yaml')]);
  const taskNames = new Set(loadBenchmark(benchmarkDir).tasks.map((t) => t.name));
  /** task → repeats, over a suite's entries. */
  const runsOf = (name: string) => {
    const runs = new Map<string, number>();
    for (const entry of suites.get(name)!.entries) for (const task of entry.tasks ?? []) runs.set(task, (runs.get(task) ?? 0) + (entry.repeats ?? 1));
    return runs;
  };

  it('are full, official, mid, lite and group1..3, each naming only tasks of the evalscope benchmark', () => {
    for (const name of ['full', 'official', 'mid', 'lite', 'group1', 'group2', 'group3']) {
      const entries = suites.get(name)?.entries ?? [];
      expect(entries.length, name).toBeGreaterThan(0);
      for (const entry of entries) {
        expect(entry.benchmark, name).toBe('evalscope');
        for (const task of entry.tasks ?? []) expect(taskNames.has(task), `${name}: ${task}`).toBe(true);
      }
    }
  });

  it('run every team dataset in full, and group1..3 split full without overlap, with the same run counts', () => {
    const full = runsOf('full');
    expect([...full.keys()].sort()).toEqual([...TEAM_DATASETS].sort());
    const groups = ['group1', 'group2', 'group3'].map(runsOf);
    const union = new Map<string, number>();
    for (const group of groups) {
      for (const [task, runs] of group) {
        expect(union.has(task), `${task} in two groups`).toBe(false);
        union.set(task, runs);
      }
    }
    expect(Object.fromEntries([...union].sort())).toEqual(Object.fromEntries([...full].sort()));
  });
});

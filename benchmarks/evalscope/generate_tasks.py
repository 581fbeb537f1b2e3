# Writes benchmark.yaml and one tasks/<dataset>/task.yaml per EvalScope dataset from the catalogue below, so
# that the 29 tasks differ only where their datasets do (judge, sandbox, timeout). Rerun after editing it.
"""Usage: python3 generate_tasks.py  (from anywhere; writes next to itself)"""

import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
BRIDGE = 'python3 /app/benchmark/evalscope_bridge.py'
HOUR = 3600

# name: EvalScope registry name (also the task name). judge: scores with an LLM judge (the run's --judge-model);
# 'user': the judge model plays tau2-bench's simulated user.
# sandbox: runs code in EvalScope's Docker sandbox, so the task gets its own daemon (DinD) with these images
# preloaded. local_path: a custom dataset read from the worker's BENCHROUTER_DATASET_DIR. environment 'tools': the
# adapter imports packages the python environment does not install (environments/tools/Dockerfile says which).
CATALOGUE = [
    {'name': 'aime24', 'timeout': 6 * HOUR},
    {'name': 'aime25', 'timeout': 6 * HOUR},
    {'name': 'aime26', 'timeout': 6 * HOUR},
    {'name': 'hmmt26', 'timeout': 6 * HOUR},
    {'name': 'imo_answerbench', 'timeout': 12 * HOUR},
    {'name': 'humaneval', 'sandbox': ['python:3.11-slim'], 'timeout': 4 * HOUR},
    {'name': 'live_code_bench', 'timeout': 24 * HOUR},
    {'name': 'bigcodebench', 'sandbox': ['bigcodebench/bigcodebench-evaluate:latest'], 'timeout': 24 * HOUR},
    {'name': 'gpqa_diamond', 'timeout': 12 * HOUR},
    {'name': 'hle', 'judge': True, 'timeout': 48 * HOUR},
    {'name': 'mmlu_pro', 'timeout': 48 * HOUR},
    {'name': 'super_gpqa', 'timeout': 48 * HOUR},
    {'name': 'longbench_v2', 'timeout': 24 * HOUR, 'memory': '8g'},
    {'name': 'openai_mrcr', 'environment': 'tools', 'timeout': 24 * HOUR, 'memory': '8g'},
    {'name': 'competition_math', 'timeout': 24 * HOUR},
    {'name': 'gsm8k', 'timeout': 12 * HOUR},
    {'name': 'arc', 'timeout': 12 * HOUR},
    {'name': 'bbh', 'timeout': 12 * HOUR},
    {'name': 'cmmlu', 'timeout': 12 * HOUR},
    {'name': 'drop', 'timeout': 12 * HOUR},
    {'name': 'hellaswag', 'timeout': 12 * HOUR},
    {'name': 'mmlu', 'timeout': 12 * HOUR},
    {'name': 'simple_qa', 'judge': True, 'timeout': 12 * HOUR},
    {'name': 'trivia_qa', 'timeout': 12 * HOUR},
    {'name': 'winogrande', 'timeout': 12 * HOUR},
    {'name': 'bfcl_v3', 'environment': 'tools', 'timeout': 24 * HOUR},
    {'name': 'general_fc', 'timeout': 12 * HOUR},
    {'name': 'tau2_bench', 'environment': 'tools', 'judge': 'user', 'timeout': 24 * HOUR},
    # Per-instance SWE-bench images are many and large: list the ones a pool has archived in docker_images.
    {'name': 'swe_bench_verified', 'sandbox': [], 'timeout': 48 * HOUR, 'memory': '16g', 'cpus': 4},
    # EvalScope's custom-dataset benchmarks: a directory of <subset>_<split>.jsonl under BENCHROUTER_DATASET_DIR.
    {'name': 'general_mcq', 'local_path': 'general_mcq', 'timeout': 2 * HOUR},
    {'name': 'general_qa', 'local_path': 'general_qa', 'timeout': 2 * HOUR, 'dataset_args': {'metric_list': ['Rouge']}},
]


def quoted(text):
    """A YAML scalar in single quotes (the JSON of --dataset-args contains double quotes and colons)."""
    return "'" + text.replace("'", "''") + "'"


def task_yaml(entry):
    flags = [f'--dataset {entry["name"]}']
    if entry.get('local_path'):
        flags.append(f'--local-path {entry["local_path"]}')
    if entry.get('dataset_args'):
        flags.append("--dataset-args '" + json.dumps(entry['dataset_args'], separators=(',', ':')) + "'")
    if entry.get('judge') == 'user':
        flags.append('--judge user')
    elif entry.get('judge'):
        flags.append('--judge')
    sandbox = entry.get('sandbox')
    if sandbox is not None:
        flags.append('--sandbox')
    lines = [
        f'# EvalScope\'s {entry["name"]}, run unmodified through the bridge (written by ../../generate_tasks.py).',
        f'name: {entry["name"]}',
        f'command: {quoted(BRIDGE + " " + " ".join(flags))}',
        f'timeout: {entry["timeout"]}',
        'result_mapping:',
        '  overall: score',
        '  samples: num',
    ]
    if sandbox is not None:
        lines.append('docker: true')
        lines.append('docker_images: [' + ', '.join(sandbox) + ']')
    resources = {k: entry[k] for k in ('memory', 'cpus') if k in entry}
    if resources:
        lines.append('resources:')
        lines.extend(f'  {k}: {v}' for k, v in resources.items())
    return '\n'.join(lines) + '\n'


def benchmark_yaml():
    lines = [
        '# Written by generate_tasks.py: one task per EvalScope dataset, all through evalscope_bridge.py.',
        'name: evalscope',
        'description: >-',
        '  EvalScope 1.14.1 benchmarks run unmodified: one task per EvalScope dataset, scored by EvalScope itself',
        "  (the report's primary metric); datasets from the worker's BENCHROUTER_DATASET_DIR or EvalScope's hub.",
        'tasks:',
    ]
    for entry in CATALOGUE:
        environment = 'dind' if entry.get('sandbox') is not None else entry.get('environment', 'python')
        lines.append(f'  - name: {entry["name"]}')
        lines.append(f'    environment: {environment}')
    return '\n'.join(lines) + '\n'


def main():
    tasks_dir = os.path.join(HERE, 'tasks')
    shutil.rmtree(tasks_dir, ignore_errors=True)
    for entry in CATALOGUE:
        os.makedirs(os.path.join(tasks_dir, entry['name']))
        with open(os.path.join(tasks_dir, entry['name'], 'task.yaml'), 'w', encoding='utf-8') as handle:
            handle.write(task_yaml(entry))
    with open(os.path.join(HERE, 'benchmark.yaml'), 'w', encoding='utf-8') as handle:
        handle.write(benchmark_yaml())
    print(f'wrote {len(CATALOGUE)} tasks under {tasks_dir}')


if __name__ == '__main__':
    main()

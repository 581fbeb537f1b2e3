# The one bridge from BenchRouter's task contract to EvalScope: builds EvalScope's own TaskConfig for one
# named dataset, runs it unmodified, and turns its report and per-sample reviews into result.json and records.jsonl.
"""Usage: evalscope_bridge.py --dataset NAME [--local-path DIR] [--dataset-args JSON] [--judge] [--sandbox]

Reads the contract variables (BENCHROUTER_MODEL_ENDPOINT, _MODEL_NAME, _API_KEY, _OUTPUT_DIR), the optional
BENCHROUTER_LIMIT, _SEED, _INSTANCES, _CONCURRENCY, _JUDGE_ENDPOINT/_MODEL/_API_KEY and _DATASET_DIR, and
EVALSCOPE_* settings a task's extra_env may set (EVALSCOPE_EVAL_BATCH_SIZE, EVALSCOPE_GENERATION_CONFIG,
EVALSCOPE_TIMEOUT).
"""

import argparse
import glob
import json
import os
import sys

# EvalScope's defaults for API models, as a team's run.py falls back to them when a benchmark has no
# generation-config entry of its own; the run's own overrides are applied by BenchRouter's gateway.
DEFAULT_GENERATION_CONFIG = {'temperature': 0.0, 'top_p': 1.0, 'max_tokens': 32768}


def fail(message):
    print(f'evalscope_bridge: {message}', file=sys.stderr)
    sys.exit(2)


def env_int(name):
    text = os.environ.get(name, '').strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        fail(f'{name}: expected a whole number, got {text!r}')


def env_json(name, default):
    text = os.environ.get(name, '').strip()
    if not text:
        return default
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        fail(f'{name}: expected a JSON object, got {text!r} ({error})')
    if not isinstance(value, dict):
        fail(f'{name}: expected a JSON object, got {text!r}')
    return value


def required_env(name):
    value = os.environ.get(name, '')
    if not value:
        fail(f'{name} is not set: BenchRouter sets it for every task')
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(description='Run one EvalScope dataset under the BenchRouter contract.')
    parser.add_argument('--dataset', required=True, help="a name in EvalScope's benchmark registry, e.g. gsm8k")
    parser.add_argument('--local-path', help='the dataset, relative to BENCHROUTER_DATASET_DIR (custom datasets)')
    parser.add_argument('--dataset-args', default='{}', help='JSON merged into dataset_args[<dataset>]')
    parser.add_argument('--judge', nargs='?', const='grader', choices=['grader', 'user'],
                        help="the dataset needs the run's judge: as its LLM grader (default), or as tau2's user simulator (user)")
    parser.add_argument('--sandbox', action='store_true', help='the dataset runs code in a Docker sandbox (a DinD task)')
    return parser.parse_args(argv)


def dataset_args_for(args):
    try:
        extra = json.loads(args.dataset_args)
    except json.JSONDecodeError as error:
        fail(f'--dataset-args: expected a JSON object, got {args.dataset_args!r} ({error})')
    if not args.local_path:
        return extra
    root = os.environ.get('BENCHROUTER_DATASET_DIR', '')
    if not root:
        fail(f'--local-path {args.local_path}: BENCHROUTER_DATASET_DIR is not set; start the worker with BENCHROUTER_DATASET_DIR=<dir holding {args.local_path}>')
    path = os.path.join(root, args.local_path)
    # EvalScope silently falls back to a hub download for a missing local_path; say what is missing instead.
    if not os.path.isdir(path):
        fail(f'--local-path {args.local_path}: expected a directory at {path} (BENCHROUTER_DATASET_DIR={root})')
    return {'local_path': path, **extra}


def task_config(args, work_dir):
    """EvalScope's own TaskConfig fields, from the contract variables: nothing here changes how it scores."""
    config = {
        'model': required_env('BENCHROUTER_MODEL_NAME'),
        'api_url': required_env('BENCHROUTER_MODEL_ENDPOINT'),
        'api_key': os.environ.get('BENCHROUTER_API_KEY') or 'EMPTY',
        'eval_type': 'openai_api',
        'datasets': [args.dataset],
        'dataset_args': {args.dataset: dataset_args_for(args)},
        'generation_config': {**DEFAULT_GENERATION_CONFIG, **env_json('EVALSCOPE_GENERATION_CONFIG', {})},
        # The run's --job-concurrency, else the task's own batch size, else EvalScope's default for API models.
        'eval_batch_size': env_int('BENCHROUTER_CONCURRENCY') or env_int('EVALSCOPE_EVAL_BATCH_SIZE') or 8,
        'work_dir': work_dir,
        'no_timestamp': True,
    }
    timeout = env_int('EVALSCOPE_TIMEOUT')
    if timeout:
        config['generation_config']['timeout'] = timeout
    limit = env_int('BENCHROUTER_LIMIT')
    if limit is not None:
        config['limit'] = limit
    seed = env_int('BENCHROUTER_SEED')
    if seed is not None:
        config['seed'] = seed
    dataset_dir = os.environ.get('BENCHROUTER_DATASET_DIR', '')
    if dataset_dir and not args.local_path:
        # A local ModelScope cache: EvalScope reads the dataset from it instead of downloading.
        config['dataset_dir'] = dataset_dir
    judge_model = os.environ.get('BENCHROUTER_JUDGE_MODEL', '')
    if judge_model and args.judge == 'user':
        # tau2-bench simulates its user with a second model, set through its own extra_params.
        user = {'user_model': judge_model, 'api_base': required_env('BENCHROUTER_JUDGE_ENDPOINT'), 'api_key': os.environ.get('BENCHROUTER_JUDGE_API_KEY') or 'EMPTY'}
        dataset_args = config['dataset_args'][args.dataset]
        dataset_args['extra_params'] = {**dataset_args.get('extra_params', {}), **user}
    elif judge_model:
        config['judge'] = {
            'models': [
                {
                    'model_id': judge_model,
                    'api_url': required_env('BENCHROUTER_JUDGE_ENDPOINT'),
                    'api_key': os.environ.get('BENCHROUTER_JUDGE_API_KEY') or 'EMPTY',
                }
            ]
        }
    if args.judge and not judge_model:
        fail(f'{args.dataset} needs a judge model: run it with --judge-model (BENCHROUTER_JUDGE_MODEL is not set)')
    if args.sandbox:
        # The task's own Docker daemon (DinD), with the sandbox image preloaded from the task's docker_images.
        config['sandbox'] = {'enabled': True, 'engine': 'docker'}
    return config


def only_file(pattern, what):
    found = sorted(glob.glob(pattern))
    if len(found) != 1:
        fail(f'expected one {what} at {pattern}, found {len(found)}: EvalScope did not finish (see its log under the work dir)')
    return found[0]


def read_jsonl(path):
    with open(path, encoding='utf-8') as handle:
        return [json.loads(line) for line in handle if line.strip()]


def metric_label(metric):
    """`accuracy`, or `accuracy_pass_hat_k_k=1` when the metric is not a plain mean."""
    identity = metric.get('identity') or {}
    label = identity.get('name') or metric.get('legacy_name') or 'score'
    if identity.get('aggregation') not in (None, 'mean'):
        label += f'_{identity["aggregation"]}'
    for key, value in sorted((identity.get('dimensions') or {}).items()):
        label += f'_{key}={value}'
    return label


def summarize_report(report):
    """The headline is the metric named by primary_metric_identity, not metrics[0] (for QA that is BLEU)."""
    metrics = report.get('metrics') or []
    identity = report.get('primary_metric_identity')
    primary = next((m for m in metrics if identity is not None and m.get('identity') == identity), None)
    if primary is None:
        reason = report.get('primary_metric_unavailable_reason') or 'no metric matches primary_metric_identity'
        fail(f'report of {report.get("dataset_name")}: no primary metric ({reason})')
    subsets = {}
    for category in primary.get('categories') or []:
        for subset in category.get('subsets') or []:
            subsets[subset['name']] = subset.get('score')
    return {
        'dataset': report.get('dataset_name'),
        'score': primary.get('score'),
        'metric': metric_label(primary),
        'metric_name': (identity or {}).get('name'),
        'num': primary.get('num'),
        'subsets': subsets,
        'metrics': {metric_label(m): m.get('score') for m in metrics},
        'primary_metric_identity': identity,
        'execution_summary': report.get('execution_summary'),
    }


def message_text(message):
    content = message.get('content')
    if isinstance(content, list):
        return ''.join(part.get('text', '') for part in content if isinstance(part, dict))
    return content or ''


def primary_value(sample_score, metric_name):
    """One sample's main score as EvalScope names it (Rouge-L-R for the report's rouge), as a number."""
    score = sample_score.get('score') or {}
    value = score.get('value') or {}
    name = score.get('main_score_name') if score.get('main_score_name') in value else metric_name
    picked = value[name] if name in value else next(iter(value.values()), 0)
    if isinstance(picked, bool):
        return float(picked)
    return float(picked or 0)


def records_from(work_dir, dataset, metric_name):
    """One record per reviewed sample, joined to its prediction on `index`, in dataset order."""
    predictions = {}
    for path in glob.glob(os.path.join(work_dir, 'predictions', '*', f'{dataset}_*.jsonl')):
        subset = os.path.basename(path)[len(dataset) + 1:-len('.jsonl')]
        for row in read_jsonl(path):
            predictions[(subset, row['index'])] = row
    records = []
    for path in sorted(glob.glob(os.path.join(work_dir, 'reviews', '*', f'{dataset}_*.jsonl'))):
        subset = os.path.basename(path)[len(dataset) + 1:-len('.jsonl')]
        for review in read_jsonl(path):
            prediction = predictions.get((subset, review['index']), {})
            output = prediction.get('model_output') or {}
            usage = output.get('usage') or {}
            sample_score = review.get('sample_score') or {}
            messages = review.get('messages') or prediction.get('messages') or []
            prompt = [m for m in messages if m.get('role') != 'assistant']
            records.append({
                'index': f'{subset}/{review["index"]}',
                'subset': subset,
                'sample_index': review['index'],
                'prompt': '\n'.join(message_text(m) for m in prompt),
                'prediction': (sample_score.get('score') or {}).get('prediction'),
                'extracted_prediction': (sample_score.get('score') or {}).get('extracted_prediction'),
                'ground_truth': review.get('target'),
                'score': primary_value(sample_score, metric_name),
                'prompt_tokens': usage.get('input_tokens'),
                'completion_tokens': usage.get('output_tokens'),
                'cost': None,
                'raw_output': message_text(messages[-1]) if messages and messages[-1].get('role') == 'assistant' else None,
            })
    records.sort(key=lambda r: (r['subset'], r['sample_index']))
    return records


def main(argv):
    args = parse_args(argv)
    output_dir = required_env('BENCHROUTER_OUTPUT_DIR')
    if os.environ.get('BENCHROUTER_INSTANCES'):
        # EvalScope selects samples by count (limit), not by id: say so rather than run a different set silently.
        fail('BENCHROUTER_INSTANCES is not supported by EvalScope datasets; use --limit')
    # A fresh work dir per run: EvalScope appends to an existing predictions file.
    work_dir = os.path.join(output_dir, 'evalscope')
    if os.path.exists(work_dir) and os.listdir(work_dir):
        fail(f'{work_dir} already holds an EvalScope run: expected a fresh results directory')

    tiktoken_dir = os.path.join(os.environ.get('BENCHROUTER_DATASET_DIR', ''), 'tiktoken')
    if os.environ.get('BENCHROUTER_DATASET_DIR') and os.path.isdir(tiktoken_dir):
        # openai_mrcr's tiktoken encodings, copied from a machine that downloaded them: tiktoken reads its cache.
        os.environ.setdefault('TIKTOKEN_CACHE_DIR', tiktoken_dir)

    from evalscope.config import TaskConfig
    from evalscope.run import run_task

    run_task(TaskConfig(**task_config(args, work_dir)))

    report_path = only_file(os.path.join(work_dir, 'reports', '*', f'{args.dataset}.json'), f'{args.dataset} report')
    with open(report_path, encoding='utf-8') as handle:
        report = json.load(handle)
    result = summarize_report(report)
    records = records_from(work_dir, args.dataset, result['metric_name'])
    result['records'] = len(records)
    with open(os.path.join(output_dir, 'records.jsonl'), 'w', encoding='utf-8') as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + '\n')
    with open(os.path.join(output_dir, 'result.json'), 'w', encoding='utf-8') as handle:
        json.dump(result, handle, ensure_ascii=False, indent=2)
    print(f'evalscope_bridge: {args.dataset}: {result["metric"]} = {result["score"]} over {len(records)} samples')


def exit_without_teardown():
    """Ends the process once everything is written, without the interpreter's own teardown.

    After a run, finalizing EvalScope's modules and objects (datasets, pandas, pyarrow ...) takes about
    0.5 s of a 4 s job, and nothing in it reaches the task's outputs: result.json and records.jsonl are
    closed, EvalScope's own files were read back from disk above. What a normal exit does that matters
    is done here: non-daemon threads are waited for, the atexit handlers run (logging.shutdown flushes
    EvalScope's log file) and stdout and stderr are flushed.
    """
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == '__main__':
    main(sys.argv[1:])
    exit_without_teardown()

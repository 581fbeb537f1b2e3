// The flags `br run` and `br submit` share, and how they become a run definition: run options,
// gateway options, generation settings (flags over a YAML generation config), judge and prices.

import { Command, InvalidArgumentError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { mergeGeneration, parseGenFlag, type GenerationSettings } from '../runs/generation.js';
import { fieldPath, InputError } from '../contract/problems.js';
import { readYamlFile } from '../contract/yaml-file.js';
import { DEFAULT_GATEWAY, DEFAULT_RUN_OPTIONS, type GatewayOptions, type ModelTarget, type RunOptions } from '../runs/run-spec.js';
import { loadPriceFile, type PriceTable } from '../gateway/price-table.js';

export interface RunFlags {
  model: string;
  endpoint: string;
  apiKeyEnv?: string;
  concurrency: number;
  hostTimeout?: number;
  heartbeatTimeout?: number;
  maxHosts?: number;
  tasks?: string;
  json?: boolean;
  repeats: number;
  seed?: number;
  limit?: number;
  instances?: string;
  gateway: boolean;
  cache?: boolean;
  modelConcurrency?: number;
  modelRate?: number;
  modelRetries?: number;
  gen: string[];
  genConfig?: string;
  maxTokens?: number;
  maxTokensAdd?: number;
  maxTokensScale?: number;
  thinking?: boolean;
  prices?: string;
  judgeEndpoint?: string;
  judgeModel?: string;
  judgeApiKeyEnv?: string;
  truncationTokens?: number;
  tokenizer?: string;
  jobConcurrency?: number;
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`expected a positive whole number, got "${value}"`);
  return n;
}

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`expected a whole number >= 0, got "${value}"`);
  return n;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`expected a positive number, got "${value}"`);
  return n;
}

function integer(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError(`expected a whole number, got "${value}"`);
  return n;
}

/** `model: 'found'`: no --model flag, the model is what the endpoint serves (`br schedule create`). */
export function addRunFlags(command: Command, benchmark: 'required' | 'optional' = 'required', model: 'flag' | 'found' = 'flag'): Command {
  command.argument(benchmark === 'required' ? '<benchmark>' : '[benchmark]', 'benchmark directory, or the name of a built-in benchmark');
  if (model === 'flag') command.requiredOption('--model <name>', 'model name sent to the endpoint');
  return command
    .requiredOption('--endpoint <url>', 'OpenAI-compatible base URL, ending in /v1')
    .option('--api-key-env <VAR>', 'environment variable on the worker host that holds the API key')
    .option('--concurrency <n>', 'jobs running at once', positiveInt, DEFAULT_RUN_OPTIONS.concurrency)
    .option('--tasks <names>', 'comma-separated subset of tasks to run')
    .option(
      '--repeats <n>',
      'run each task n times, with seeds seed..seed+n-1 in BENCHROUTER_SEED; reports mean ± std',
      positiveInt,
      DEFAULT_RUN_OPTIONS.repeats,
    )
    .option('--seed <n>', 'seed of the first repeat (BENCHROUTER_SEED)', integer)
    .option('--limit <n>', "run only each task's first n instances (BENCHROUTER_LIMIT; benchmarks that ignore it run all)", positiveInt)
    .option('--instances <ids>', 'run only these instance ids (BENCHROUTER_INSTANCES): comma-separated, or @FILE with one id per line')
    .option(
      '--host-timeout <s>',
      "seconds a job waits for its host's worker before moving to another host",
      positiveInt,
      DEFAULT_RUN_OPTIONS.hostTimeoutSeconds,
    )
    .option(
      '--heartbeat-timeout <s>',
      'seconds without a heartbeat before a running container activity is retried',
      positiveInt,
      DEFAULT_RUN_OPTIONS.heartbeatTimeoutSeconds,
    )
    .option('--max-hosts <n>', 'hosts a job may try before it fails', positiveInt, DEFAULT_RUN_OPTIONS.maxHosts)
    .option('--no-gateway', 'give containers the real endpoint and key instead of the metering gateway')
    .option('--cache', "replay the gateway's stored answers for identical requests")
    .option('--model-concurrency <n>', 'upstream model requests of the run at once, per host', positiveInt, DEFAULT_GATEWAY.concurrency)
    .option('--model-rate <n>', 'upstream model requests started per second, per host', positiveNumber)
    .option('--model-retries <n>', 'retries of a 429 or 5xx answer', nonNegativeInt, DEFAULT_GATEWAY.maxRetries)
    .addOption(
      new Option('--gen <key=value>', 'set a request field on every model call (repeatable), e.g. temperature=0')
        .argParser((v: string, prev: string[] = []) => [...prev, v])
        .default([]),
    )
    .option('--gen-config <file>', 'YAML generation config: {defaults: {...}, benchmarks: {<name>: {...}}}')
    .option('--max-tokens <n>', 'max_tokens on every model call', positiveInt)
    .option('--max-tokens-add <n>', "added to each request's own max_tokens", integer)
    .option('--max-tokens-scale <x>', "multiplies each request's own max_tokens", positiveNumber)
    .option('--thinking', 'turn thinking on (chat_template_kwargs.enable_thinking, reasoning_effort)')
    .option('--no-thinking', 'turn thinking off')
    .option('--prices <file>', 'YAML price table, $ per 1M tokens: {models: {<name>: {input, output}}}')
    .option('--judge-endpoint <url>', "a judge model's OpenAI-compatible base URL")
    .option('--judge-model <name>', "the judge model's name")
    .option('--judge-api-key-env <VAR>', "environment variable on the worker host that holds the judge's key")
    .option('--truncation-tokens <n>', 'middle-truncate prompts over n tokens (the gateway; needs --tokenizer)', positiveInt)
    .option('--tokenizer <file>', "the model's Hugging Face tokenizer.json, for --truncation-tokens (the same path on every worker host)")
    .option('--job-concurrency <n>', 'model requests one job may have in flight (BENCHROUTER_CONCURRENCY; EvalScope: eval_batch_size)', positiveInt)
    .option('--json', 'print the result as JSON');
}

const GenEntrySchema = z.record(z.string(), z.unknown());
const GenConfigSchema = z.strictObject({ defaults: GenEntrySchema.optional(), benchmarks: z.record(z.string(), GenEntrySchema).optional() });

/** One generation-config entry: the special keys adjust max_tokens and thinking; the rest are request fields. */
function generationFromEntry(entry: Record<string, unknown>, file: string, at: string): Partial<GenerationSettings> {
  const { max_tokens_add, max_tokens_scale, thinking, ...set } = entry;
  const problems = [];
  if (max_tokens_add !== undefined && !Number.isInteger(max_tokens_add))
    problems.push({ file, field: `${at}.max_tokens_add`, message: `expected a whole number, got ${JSON.stringify(max_tokens_add)}` });
  if (max_tokens_scale !== undefined && (typeof max_tokens_scale !== 'number' || max_tokens_scale <= 0))
    problems.push({ file, field: `${at}.max_tokens_scale`, message: `expected a positive number, got ${JSON.stringify(max_tokens_scale)}` });
  if (thinking !== undefined && typeof thinking !== 'boolean')
    problems.push({ file, field: `${at}.thinking`, message: `expected true or false, got ${JSON.stringify(thinking)}` });
  if (problems.length) throw new InputError(problems);
  return {
    set,
    ...(max_tokens_add !== undefined ? { maxTokensAdd: max_tokens_add as number } : {}),
    ...(max_tokens_scale !== undefined ? { maxTokensScale: max_tokens_scale as number } : {}),
    ...(thinking !== undefined ? { thinking: thinking as boolean } : {}),
  };
}

/** Layers, weakest first: the config's defaults, its benchmark entry, a suite entry's settings, the flags. */
export function generationFrom(
  flags: RunFlags,
  benchmarkName: string,
  suiteEntry?: { file: string; field: string; generation: Record<string, unknown> },
): GenerationSettings {
  const layers: Array<Partial<GenerationSettings>> = [];
  if (flags.genConfig) {
    const file = flags.genConfig;
    const read = readYamlFile(file);
    if (!read.ok) throw new InputError([read.problem]);
    const parsed = GenConfigSchema.safeParse(read.data);
    if (!parsed.success) throw new InputError(parsed.error.issues.map((i) => ({ file, field: fieldPath(i.path), message: i.message })));
    if (parsed.data.defaults) layers.push(generationFromEntry(parsed.data.defaults, file, 'defaults'));
    const entry = parsed.data.benchmarks?.[benchmarkName];
    if (entry) layers.push(generationFromEntry(entry, file, `benchmarks.${benchmarkName}`));
  }
  if (suiteEntry) layers.push(generationFromEntry(suiteEntry.generation, suiteEntry.file, suiteEntry.field));
  let set: Record<string, unknown>;
  try {
    set = Object.fromEntries(flags.gen.map(parseGenFlag));
  } catch (error) {
    throw new InputError([{ file: '--gen', field: '', message: (error as Error).message.replace(/^--gen: /, '') }]);
  }
  layers.push({
    set,
    ...(flags.maxTokens !== undefined ? { maxTokens: flags.maxTokens } : {}),
    ...(flags.maxTokensAdd !== undefined ? { maxTokensAdd: flags.maxTokensAdd } : {}),
    ...(flags.maxTokensScale !== undefined ? { maxTokensScale: flags.maxTokensScale } : {}),
    ...(flags.thinking !== undefined ? { thinking: flags.thinking } : {}),
  });
  return mergeGeneration(...layers);
}

export function runOptionsFrom(flags: RunFlags): Partial<RunOptions> {
  return {
    concurrency: flags.concurrency,
    hostTimeoutSeconds: flags.hostTimeout,
    heartbeatTimeoutSeconds: flags.heartbeatTimeout,
    maxHosts: flags.maxHosts,
    repeats: flags.repeats,
    ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
    ...(flags.limit !== undefined ? { limit: flags.limit } : {}),
    ...(flags.instances !== undefined ? { instances: instanceIds(flags.instances) } : {}),
    ...(flags.jobConcurrency !== undefined ? { jobConcurrency: flags.jobConcurrency } : {}),
  };
}

/** `a,b,c` or `@file` (one id per line; blank lines skipped). Ids travel comma-separated, so none may hold a comma. */
export function instanceIds(value: string): string[] {
  const fromFile = value.startsWith('@');
  const file = value.slice(1);
  let text = value;
  if (fromFile) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new InputError([
        { file, field: '--instances', message: `cannot read the instance list: ${(error as NodeJS.ErrnoException).code ?? String(error)}` },
      ]);
    }
  }
  const ids = (fromFile ? text.split('\n') : text.split(',')).map((id) => id.trim()).filter(Boolean);
  const where = fromFile ? file : '--instances';
  if (ids.length === 0) throw new InputError([{ file: where, field: '', message: 'expected at least one instance id' }]);
  const withComma = ids.find((id) => id.includes(','));
  if (withComma)
    throw new InputError([
      { file: where, field: '', message: `instance ids cannot contain a comma (BENCHROUTER_INSTANCES is comma-separated), got "${withComma}"` },
    ]);
  return [...new Set(ids)];
}

export function gatewayFrom(flags: RunFlags): Partial<GatewayOptions> {
  return {
    enabled: flags.gateway,
    cache: flags.cache === true,
    concurrency: flags.modelConcurrency,
    maxRetries: flags.modelRetries,
    ...(flags.modelRate !== undefined ? { ratePerSecond: flags.modelRate } : {}),
  };
}

export function judgeFrom(flags: RunFlags): ModelTarget | undefined {
  if (!flags.judgeEndpoint && !flags.judgeModel) return undefined;
  if (!flags.judgeEndpoint || !flags.judgeModel) {
    throw new InputError([
      { file: flags.judgeEndpoint ? '--judge-model' : '--judge-endpoint', field: '', message: 'a judge needs both --judge-endpoint and --judge-model' },
    ]);
  }
  return { name: flags.judgeModel, endpoint: flags.judgeEndpoint, ...(flags.judgeApiKeyEnv ? { apiKeyEnv: flags.judgeApiKeyEnv } : {}) };
}

/** `--truncation-tokens N --tokenizer FILE`: both or neither. The file is checked with the run request. */
export function truncationFrom(flags: RunFlags): { tokens: number; tokenizer: string } | undefined {
  if (flags.truncationTokens === undefined && flags.tokenizer === undefined) return undefined;
  if (flags.truncationTokens === undefined || flags.tokenizer === undefined) {
    throw new InputError([
      {
        file: flags.tokenizer === undefined ? '--tokenizer' : '--truncation-tokens',
        field: '',
        message: "prompt truncation needs both --truncation-tokens N and --tokenizer FILE (the model's tokenizer.json)",
      },
    ]);
  }
  return { tokens: flags.truncationTokens, tokenizer: flags.tokenizer };
}

export function pricesFrom(flags: RunFlags): PriceTable | undefined {
  return flags.prices ? loadPriceFile(flags.prices) : undefined;
}

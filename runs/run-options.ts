// A run's options, defined once. Everything else derives from this schema: `br run`/`submit`/`schedule`
// flags (cli/run-option-flags.ts: `--<kebab-case name>`), the API's submit body and so its OpenAPI document,
// the Python client's fields (clients/python, generated from its JSON Schema), docs/run-options.md, and the
// options a run pins in its workflow input (RunSpec.options). One name per option, flat: the flag is the name.

import { z } from 'zod';
import { SIDE_MODEL_ROLES, SIDE_MODELS, type SideModelField, type SideModelRole } from './side-models.js';

/** zod error option that reads "expected <what>, got <value>", as the contract's errors do. */
function expecting(what: string) {
  return { error: (issue: { input?: unknown }) => `expected ${what}, got ${shown(issue.input)}` };
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  return typeof value === 'string' ? `"${value}"` : JSON.stringify(value);
}

const positiveInt = z.number(expecting('a positive whole number')).int(expecting('a positive whole number')).positive(expecting('a positive whole number'));
const nonNegativeInt = z.number(expecting('a whole number >= 0')).int(expecting('a whole number >= 0')).nonnegative(expecting('a whole number >= 0'));
const positiveNumber = z.number(expecting('a positive number')).positive(expecting('a positive number'));
const httpUrl = z
  .string(expecting('an http(s) URL'))
  .regex(/^https?:\/\/\S+$/, expecting('an http(s) URL, the OpenAI-compatible base (usually ending in /v1)'));
const envName = z.string(expecting('a variable name')).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, expecting('an environment variable name like OPENAI_API_KEY'));
const name = z.string(expecting('a name')).min(1, expecting('a non-empty name'));
const instanceId = z
  .string(expecting('an instance id'))
  .min(1, expecting('a non-empty instance id'))
  .regex(/^[^,]*$/, expecting('an instance id without a comma (BENCHROUTER_INSTANCES is comma-separated)'));
const price = z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() }, expecting('{input, output} in $ per 1M tokens'));

/**
 * How a flag's value is written on the command line, where the type alone does not say: a comma list (or
 * `@FILE`), repeated `key=value` pairs (values read as JSON, or kept as the text written: key-text), or a YAML file. The derivation reads it from each field's metadata.
 */
export type CliForm = 'list' | 'list-or-file' | 'key-value' | 'key-text' | 'yaml-file';

/** The value's name in `--help` (`--endpoint <url>`), and its form where the type does not say it. */
function cli(value: string, form?: CliForm) {
  return { 'x-cli-value': value, ...(form ? { 'x-cli-form': form } : {}) };
}

/** The options' fields, before the rules that tie some of them together (runOptionRules). */
export const RunOptionFields = z.strictObject({
  model: name.describe('model name sent to the endpoint').meta(cli('name')),
  endpoint: httpUrl.describe('OpenAI-compatible base URL, ending in /v1').meta(cli('url')),
  apiKeyEnv: envName.optional().describe('environment variable on the worker host that holds the API key (the key never enters the run)').meta(cli('VAR')),
  tasks: z
    .array(name, expecting('a list of task names'))
    .min(1)
    .optional()
    .describe('only these tasks (default: all); for a benchmark with a task template, also any name it takes (br run inspect --tasks inspect_evals/gsm8k)')
    .meta(cli('names', 'list')),
  taskArgs: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, expecting('an argument name')),
      z.string(expecting('the value as text')),
      expecting('a mapping of argument names to values'),
    )
    .optional()
    .describe(
      'arguments of the tasks a task template makes, as the benchmark takes them (inspect: -T of inspect eval, values read as YAML), in BENCHROUTER_TASK_ARGS; -T key=value, repeatable',
    )
    .meta({ ...cli('key=value', 'key-text'), 'x-cli-short': '-T' }),
  concurrency: positiveInt.default(8).describe('jobs running at once').meta(cli('n')),
  repeats: positiveInt.default(1).describe('run each task n times, with seeds seed..seed+n-1 in BENCHROUTER_SEED; reports mean ± std').meta(cli('n')),
  seed: z
    .number(expecting('a whole number'))
    .int(expecting('a whole number'))
    .optional()
    .describe('seed of the first repeat (BENCHROUTER_SEED)')
    .meta(cli('n')),
  limit: positiveInt.optional().describe("run only each task's first n instances (BENCHROUTER_LIMIT; benchmarks that ignore it run all)").meta(cli('n')),
  instances: z
    .array(instanceId, expecting('a list of instance ids'))
    .min(1, expecting('at least one instance id'))
    .optional()
    .describe('run only these instance ids (BENCHROUTER_INSTANCES); on the command line comma-separated, or @FILE with one id per line')
    .meta(cli('ids', 'list-or-file')),
  shardSize: positiveInt
    .optional()
    .describe(
      "instances per job for a task that lists its instances and whose score is a mean over them (task.yaml instances, aggregate): its selected instances run in shards of n, each shard a job of its own (BENCHROUTER_INSTANCES), spread over the run's concurrency and hosts; default: the task's shard_size, else one job per task. 1 gives each instance its own container",
    )
    .meta(cli('n')),
  hostTimeout: positiveInt.default(120).describe("seconds a job waits for its host's worker before it moves to another host").meta(cli('s')),
  heartbeatTimeout: positiveInt.default(30).describe('seconds without a heartbeat before a running container activity is retried').meta(cli('s')),
  maxHosts: positiveInt.default(3).describe('hosts a job may try before it fails with INFRASTRUCTURE').meta(cli('n')),
  jobConcurrency: positiveInt
    .optional()
    .describe('model requests one job may have in flight (BENCHROUTER_CONCURRENCY; EvalScope: eval_batch_size)')
    .meta(cli('n')),
  jobsPerExecution: positiveInt
    .optional()
    .describe('jobs one execution of the run workflow starts before it continues as new (default 1000; small values are for tests)')
    .meta(cli('n')),
  preflight: z
    .boolean(expecting('true or false'))
    .default(true)
    .describe(
      'before the run starts, check once from a worker that each model endpoint (model, judge, user simulator) answers, lists the model (where it lists models) and accepts the key; off for an endpoint that comes up later',
    ),
  gateway: z
    .boolean(expecting('true or false'))
    .default(true)
    .describe("route model calls through the host's metering gateway; off, containers get the real endpoint and key"),
  cache: z.boolean(expecting('true or false')).default(false).describe("replay the gateway's stored answers for identical requests"),
  modelConcurrency: positiveInt.default(64).describe('upstream model requests of the run at once, per host').meta(cli('n')),
  modelRate: positiveNumber.optional().describe('upstream model requests started per second, per host').meta(cli('n')),
  modelRetries: nonNegativeInt.default(5).describe('retries of a 429 or 5xx answer').meta(cli('n')),
  budgetTokens: positiveInt
    .optional()
    .describe(
      "the run's budget of model tokens (prompt + completion, model, judge and user simulator, on every host): once spent, the gateway refuses further calls (HTTP 429 budget_exhausted) and the run starts no further job; those jobs fail with BUDGET",
    )
    .meta(cli('n')),
  budgetCost: positiveNumber.optional().describe("the run's budget in dollars (the usage's cost), enforced as budgetTokens is").meta(cli('usd')),
  jobBudgetTokens: positiveInt
    .optional()
    .describe(
      "each job's budget of model tokens (model, judge and user simulator): once a job spent it, the gateway refuses its further calls and the job fails with BUDGET",
    )
    .meta(cli('n')),
  jobBudgetCost: positiveNumber.optional().describe("each job's budget in dollars, enforced as jobBudgetTokens is").meta(cli('usd')),
  gen: z
    .record(z.string(), z.unknown(), expecting('a mapping of request fields'))
    .default({})
    .describe('request fields set on every model call (they override the benchmark\'s), e.g. {"temperature": 0}; --gen temperature=0, repeatable')
    .meta(cli('key=value', 'key-value')),
  maxTokens: positiveInt.optional().describe('max_tokens on every model call').meta(cli('n')),
  maxTokensAdd: z
    .number(expecting('a whole number'))
    .int(expecting('a whole number'))
    .optional()
    .describe("added to each request's own max_tokens")
    .meta(cli('n')),
  maxTokensScale: positiveNumber.optional().describe("multiplies each request's own max_tokens").meta(cli('x')),
  thinking: z
    .boolean(expecting('true or false'))
    .optional()
    .describe('turn thinking on (or off) on every model call: chat_template_kwargs.enable_thinking, reasoning_effort'),
  transcripts: z
    .boolean(expecting('true or false'))
    .default(true)
    .describe("record each job's model calls (request, answer, usage, instance) in its transcript.jsonl, keys and tokens redacted; br transcripts prints them"),
  transcriptMaxCalls: positiveInt
    .default(10_000)
    .describe("per job, the calls its transcript records; later ones are metered but not recorded, and the transcript's last line says so")
    .meta(cli('n')),
  stripThinking: z
    .boolean(expecting('true or false'))
    .default(false)
    .describe('remove <think>…</think> from answers before the benchmark sees them, in the gateway (streamed answers too)'),
  truncationTokens: positiveInt.optional().describe('middle-truncate prompts over n tokens, in the gateway (needs tokenizer)').meta(cli('n')),
  tokenizer: z
    .string(expecting('a file path'))
    .min(1)
    .optional()
    .describe("the model's Hugging Face tokenizer.json, for truncationTokens (the same path on every worker host)")
    .meta(cli('file')),
  judgeModel: name.optional().describe("a judge model's name, for benchmarks that call one").meta(cli('name')),
  judgeEndpoint: httpUrl.optional().describe("the judge model's OpenAI-compatible base URL").meta(cli('url')),
  judgeApiKeyEnv: envName.optional().describe("environment variable on the worker host that holds the judge's key").meta(cli('VAR')),
  userModel: name
    .optional()
    .describe("a user simulator's model name, for benchmarks that simulate the user (tau2's customer); default: the model under test")
    .meta(cli('name')),
  userEndpoint: httpUrl.optional().describe("the user simulator's OpenAI-compatible base URL").meta(cli('url')),
  userApiKeyEnv: envName.optional().describe("environment variable on the worker host that holds the user simulator's key").meta(cli('VAR')),
  prices: z
    .record(z.string(), price, expecting('a mapping of model names to {input, output}'))
    .optional()
    .describe('$ per 1M input/output tokens by model name, over the built-in table; on the command line a YAML file {models: {<name>: {input, output}}}')
    .meta(cli('file', 'yaml-file')),
});

/**
 * A rule's message names other options by their field names (as the API's callers write them); `params.names`
 * lists them, so that the command line can show each as its flag instead (cli/run-option-flags.ts).
 */
export interface RuleIssueParams {
  names: string[];
}

/** The rules between options, for any schema made of RunOptionFields (the schedule's omits the model). */
export function withRunOptionRules<T extends z.ZodType<Partial<z.output<typeof RunOptionFields>>>>(schema: T) {
  return schema.superRefine((options, ctx) => {
    const both = (a: SideModelField | 'truncationTokens', b: SideModelField | 'tokenizer', why: string) => {
      if ((options[a] === undefined) !== (options[b] === undefined))
        ctx.addIssue({
          code: 'custom',
          path: [options[a] === undefined ? a : b],
          message: `expected together with ${options[a] === undefined ? b : a}: ${why}`,
          params: { names: [options[a] === undefined ? b : a] } satisfies RuleIssueParams,
        });
    };
    for (const role of SIDE_MODEL_ROLES) {
      const { fields, what } = SIDE_MODELS[role];
      both(fields.model, fields.endpoint, `${what} needs a model and an endpoint`);
    }
    both('truncationTokens', 'tokenizer', "prompt truncation needs a token count and the model's tokenizer.json");
    const needsGateway = (name: 'truncationTokens' | 'stripThinking', what: string) => {
      if (options[name] !== undefined && options[name] !== false && options.gateway === false)
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `${what} is applied by the gateway: it cannot be used with gateway false`,
          params: { names: ['gateway'] } satisfies RuleIssueParams,
        });
    };
    needsGateway('truncationTokens', 'prompt truncation');
    needsGateway('stripThinking', 'stripping thinking');
    for (const budget of ['budgetTokens', 'budgetCost', 'jobBudgetTokens', 'jobBudgetCost'] as const)
      if (options[budget] !== undefined && options.gateway === false)
        ctx.addIssue({
          code: 'custom',
          path: [budget],
          message: 'budgets are enforced by the gateway: they cannot be used with gateway false',
          params: { names: ['gateway'] } satisfies RuleIssueParams,
        });
  });
}

export const RunOptionsSchema = withRunOptionRules(RunOptionFields);

/** The options as given (defaults may be left out). */
export type RunOptionsInput = z.input<typeof RunOptionsSchema>;
/** The options as a run pins them: every default filled in. */
export type RunOptions = z.output<typeof RunOptionsSchema>;
export type RunOptionName = keyof RunOptions;

/** The API's submit body: the benchmark and the run's options. */
export const RunRequestSchema = withRunOptionRules(
  RunOptionFields.extend({
    benchmark: z
      .string(expecting('a benchmark name or directory'))
      .min(1)
      .describe('a built-in benchmark name (see GET /benchmarks) or a benchmark directory on the server'),
  }),
);
/** A validated submit body, every default filled in. */
export type RunRequest = z.output<typeof RunRequestSchema>;

/** What reaches the model: the target the gateway (or, without it, the container) calls. */
export interface ModelTarget {
  name: string;
  /** OpenAI-compatible base URL, `.../v1`. */
  endpoint: string;
  /** The variable on the worker host that holds the key; the key itself never enters the run. */
  apiKeyEnv?: string;
}

export function modelTargetOf(options: Pick<RunOptions, 'model' | 'endpoint' | 'apiKeyEnv'>): ModelTarget {
  return { name: options.model, endpoint: options.endpoint, ...(options.apiKeyEnv ? { apiKeyEnv: options.apiKeyEnv } : {}) };
}

/** A side model's target when the run names one (a user simulator's absence means the model under test plays the user). */
export function sideModelTargetOf(options: Partial<Pick<RunOptions, SideModelField>>, role: SideModelRole): ModelTarget | undefined {
  const { fields } = SIDE_MODELS[role];
  const name = options[fields.model];
  const endpoint = options[fields.endpoint];
  const apiKeyEnv = options[fields.apiKeyEnv];
  if (!name || !endpoint) return undefined;
  return { name, endpoint, ...(apiKeyEnv ? { apiKeyEnv } : {}) };
}

/** The options with every default, from a partial set that must name at least the model and endpoint. */
export function runOptions(input: RunOptionsInput): RunOptions {
  return RunOptionsSchema.parse(input);
}

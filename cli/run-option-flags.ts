// `br run`, `submit` and `schedule create` flags, derived from the one definition of a run's options
// (runs/run-options.ts): each option is `--<kebab-case name>`, with its description and default; the values
// given become a partial request, validated by the same schema the API validates its body with.

import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { fieldPath, InputError, type Problem } from '../contract/problems.js';
import { readYamlFile } from '../contract/yaml-file.js';
import { loadPriceFile } from '../gateway/price-table.js';
import { parseGenFlag } from '../runs/generation.js';
import { RunOptionFields, type CliForm, type RuleIssueParams, type RunOptionName, type RunOptionsInput } from '../runs/run-options.js';

/** `maxTokensAdd` → `max-tokens-add`. */
export function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The flag an option is set by on the command line (`--concurrency`). */
export function flagOf(option: string): string {
  return `--${kebabCase(option)}`;
}

type Field = z.ZodType;

/** The field's own type, under its optional and default wrappers. */
function baseType(field: Field): string {
  let def = field.def as { type: string; innerType?: Field };
  while ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType) def = def.innerType.def as typeof def;
  return def.type;
}

/** An option every run must give: no default, not optional (`model`, `endpoint`). */
export function isRequired(field: Field): boolean {
  return field.def.type !== 'optional' && field.def.type !== 'default';
}

/** The flags an option is set by: `--concurrency`; a boolean on by default `--no-gateway`; one with no default both ways. */
export function flagsOf(name: RunOptionName): string[] {
  const field = RunOptionFields.shape[name] as Field;
  if (baseType(field) !== 'boolean') return [flagOf(name)];
  const fallback = defaultOf(field);
  return [...(fallback !== true ? [flagOf(name)] : []), ...(fallback !== false ? [`--no-${kebabCase(name)}`] : [])];
}

function defaultOf(field: Field): unknown {
  const def = field.def as { type: string; defaultValue?: unknown };
  return def.type === 'default' ? def.defaultValue : undefined;
}

function metaOf(field: Field): { value?: string; form?: CliForm; short?: string } {
  const meta = field.meta() as Record<string, unknown> | undefined;
  return {
    value: meta?.['x-cli-value'] as string | undefined,
    form: meta?.['x-cli-form'] as CliForm | undefined,
    short: meta?.['x-cli-short'] as string | undefined,
  };
}

/** The CLI-only flag that layers a YAML file of generation settings under the flags. */
const GEN_CONFIG_FLAG = '--gen-config <file>';

/**
 * Adds a flag for every run option but `omit` (`br schedule create` finds the model at the endpoint), and
 * `--gen-config`. Values are not defaulted here: a flag not given leaves its option to the schema's default.
 */
export function addRunOptionFlags(command: Command, omit: readonly RunOptionName[] = []): Command {
  for (const [name, field] of Object.entries(RunOptionFields.shape) as Array<[RunOptionName, Field]>) {
    if (omit.includes(name)) continue;
    const flag = flagOf(name);
    const fallback = defaultOf(field);
    const shownDefault =
      fallback === undefined || (typeof fallback === 'object' && Object.keys(fallback as object).length === 0) ? '' : ` (default: ${JSON.stringify(fallback)})`;
    const description = `${field.description ?? ''}`;
    if (baseType(field) === 'boolean') {
      // Default true: the flag turns it off (--no-gateway); no default: both ways (--thinking / --no-thinking).
      for (const each of flagsOf(name)) {
        const negated = each !== flag;
        const help = !negated ? description : fallback === true ? `${description} (on unless this flag is given)` : `the opposite of ${flag}`;
        command.addOption(new Option(each, help));
      }
      continue;
    }
    const { value = 'value', form, short } = metaOf(field);
    const option = new Option(`${short ? `${short}, ` : ''}${flag} <${value}>`, `${description}${shownDefault}`);
    if (form === 'key-value' || form === 'key-text') option.argParser((v: string, previous: string[] = []) => [...previous, v]);
    if (isRequired(field)) option.makeOptionMandatory();
    command.addOption(option);
  }
  return command.option(GEN_CONFIG_FLAG, 'YAML generation settings under the flags: {defaults: {...}, benchmarks: {<name>: {...}}}');
}

/** What commander parsed: option names (camelCase, as the schema's) to the strings and booleans given. */
export type ParsedFlags = Record<string, unknown> & { genConfig?: string };

/** The run options the flags give, converted from their command-line form, not yet validated (see parseRunRequest). */
export function runOptionsFromFlags(flags: ParsedFlags): Partial<Record<RunOptionName, unknown>> {
  const options: Partial<Record<RunOptionName, unknown>> = {};
  for (const [name, field] of Object.entries(RunOptionFields.shape) as Array<[RunOptionName, Field]>) {
    const given = flags[name];
    if (given === undefined) continue;
    const type = baseType(field);
    const { form } = metaOf(field);
    if (type === 'boolean') {
      // A negatable flag commander defaults to true stands for the schema's own default: not given.
      if (!(given === true && defaultOf(field) === true)) options[name] = given;
    } else if (type === 'number') options[name] = Number.isNaN(Number(given)) || given === '' ? given : Number(given);
    else if (form === 'list') options[name] = commaList(String(given));
    else if (form === 'list-or-file') options[name] = listOrFile(String(given), flagOf(name));
    else if (form === 'key-value') options[name] = keyValues(given as string[], flagOf(name));
    else if (form === 'key-text') options[name] = keyTexts(given as string[], flagOf(name));
    else if (form === 'yaml-file') options[name] = loadPriceFile(String(given));
    else options[name] = given;
  }
  return options;
}

/** `a, b,,c` → ['a', 'b', 'c']. */
export function commaList(text: string | undefined): string[] {
  return (
    text
      ?.split(',')
      .map((t) => t.trim())
      .filter(Boolean) ?? []
  );
}

/** `a,b,c` or `@file` (one id per line; blank lines skipped), repeats dropped in order. */
export function listOrFile(value: string, flag: string): string[] {
  if (!value.startsWith('@')) return [...new Set(commaList(value))];
  const file = value.slice(1);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError([{ file, field: flag, message: `cannot read the list: ${(error as NodeJS.ErrnoException).code ?? String(error)}` }]);
  }
  return [
    ...new Set(
      text
        .split('\n')
        .map((id) => id.trim())
        .filter(Boolean),
    ),
  ];
}

function keyValues(pairs: string[], flag: string): Record<string, unknown> {
  try {
    return Object.fromEntries(pairs.map(parseGenFlag));
  } catch (error) {
    throw new InputError([{ file: flag, field: '', message: (error as Error).message.replace(/^--gen: /, '') }]);
  }
}

/** `key=value` pairs, each value the text as written (`-T shuffle=false`: the benchmark reads it its own way). */
function keyTexts(pairs: string[], flag: string): Record<string, string> {
  const entries = pairs.map((pair) => {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InputError([{ file: flag, field: '', message: `expected key=value, got "${pair}"` }]);
    return [pair.slice(0, eq).trim(), pair.slice(eq + 1)] as const;
  });
  return Object.fromEntries(entries);
}

/**
 * The problems of a run request as a user sees them: on the command line each names its flag
 * (`--concurrency: expected a positive whole number, got 0`), in a file or body its field.
 */
export function requestProblems(error: z.ZodError, source: 'flags' | { file: string; at?: string }): Problem[] {
  return error.issues.map((issue) => {
    const [first] = issue.path;
    if (source === 'flags')
      return { file: typeof first === 'string' ? flagOf(first) : 'br run', field: fieldPath(issue.path.slice(1)), message: asFlags(issue) };
    return { file: source.file, field: [source.at, fieldPath(issue.path)].filter(Boolean).join('.'), message: issue.message };
  });
}

/** A rule's message with the options it names shown as their flags: `tokenizer` as --tokenizer, `gateway false` as --no-gateway. */
function asFlags(issue: z.core.$ZodIssue): string {
  const names = (issue as { params?: Partial<RuleIssueParams> }).params?.names ?? [];
  return names.reduce(
    (message, name) =>
      message.includes(`${name} false`)
        ? message.replace(`${name} false`, `--no-${kebabCase(name)}`)
        : message.replace(new RegExp(`\\b${name}\\b`), flagOf(name)),
    issue.message,
  );
}

/** Generation-config keys that are not request fields: they adjust max_tokens and thinking. */
const GenEntrySchema = z.record(z.string(), z.unknown());
const GenConfigSchema = z.strictObject({ defaults: GenEntrySchema.optional(), benchmarks: z.record(z.string(), GenEntrySchema).optional() });

/** One generation entry (a --gen-config section, a suite entry's `generation`) as run options. */
export function generationOptionsOf(entry: Record<string, unknown>, file: string, at: string): Partial<RunOptionsInput> {
  const { max_tokens_add, max_tokens_scale, thinking, ...gen } = entry;
  const problems: Problem[] = [];
  const check = (ok: boolean, key: string, what: string, value: unknown) => {
    if (!ok) problems.push({ file, field: `${at}.${key}`, message: `expected ${what}, got ${JSON.stringify(value)}` });
  };
  if (max_tokens_add !== undefined) check(Number.isInteger(max_tokens_add), 'max_tokens_add', 'a whole number', max_tokens_add);
  if (max_tokens_scale !== undefined)
    check(typeof max_tokens_scale === 'number' && max_tokens_scale > 0, 'max_tokens_scale', 'a positive number', max_tokens_scale);
  if (thinking !== undefined) check(typeof thinking === 'boolean', 'thinking', 'true or false', thinking);
  if (problems.length) throw new InputError(problems);
  return {
    gen,
    ...(max_tokens_add !== undefined ? { maxTokensAdd: max_tokens_add as number } : {}),
    ...(max_tokens_scale !== undefined ? { maxTokensScale: max_tokens_scale as number } : {}),
    ...(thinking !== undefined ? { thinking: thinking as boolean } : {}),
  };
}

/** --gen-config's layers for a benchmark, weakest first: its defaults, then its entry for the benchmark. */
export function generationConfigLayers(file: string, benchmarkName: string): Array<Partial<RunOptionsInput>> {
  const read = readYamlFile(file);
  if (!read.ok) throw new InputError([read.problem]);
  const parsed = GenConfigSchema.safeParse(read.data);
  if (!parsed.success) throw new InputError(parsed.error.issues.map((i) => ({ file, field: fieldPath(i.path), message: i.message })));
  const layers: Array<Partial<RunOptionsInput>> = [];
  if (parsed.data.defaults) layers.push(generationOptionsOf(parsed.data.defaults, file, 'defaults'));
  const entry = parsed.data.benchmarks?.[benchmarkName];
  if (entry) layers.push(generationOptionsOf(entry, file, `benchmarks.${benchmarkName}`));
  return layers;
}

/** Layers of options, weakest first: later values win, `gen` maps merge key by key. */
export function layerOptions(...layers: Array<Partial<Record<string, unknown>>>): Partial<Record<string, unknown>> {
  const out: Partial<Record<string, unknown>> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      out[key] = key === 'gen' ? { ...(out.gen as object | undefined), ...(value as object) } : value;
    }
  }
  return out;
}

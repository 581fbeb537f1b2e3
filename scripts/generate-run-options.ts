// Writes what derives from the one definition of a run's options (runs/run-options.ts) and cannot be derived
// at run time: the Python client's option schema and the options table of docs/run-options.md.
// `npm run generate:run-options`; test/unit/run-options-generated.test.ts fails when either is stale.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { flagsOf, isRequired } from '../cli/run-option-flags.js';
import { REPO_ROOT as repoRoot } from '../config/repository.js';
import { RunOptionFields, RunRequestSchema, type RunOptionName } from '../runs/run-options.js';
export const PYTHON_OPTIONS_FILE = path.join(repoRoot, 'clients', 'python', 'benchrouter_client', 'run_options.json');
export const OPTIONS_DOC_FILE = path.join(repoRoot, 'docs', 'run-options.md');

/** The submit body's JSON Schema (what a caller may send: defaults are optional), as the Python client checks it. */
export function pythonOptionsSchema(): string {
  return `${JSON.stringify(z.toJSONSchema(RunRequestSchema, { io: 'input', unrepresentable: 'any' }), null, 2)}\n`;
}

function typeOf(field: z.ZodType): string {
  const schema = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as { type?: string; items?: { type?: string } };
  if (schema.type === 'array') return `list of ${schema.items?.type ?? 'values'}`;
  return schema.type === 'object' ? 'mapping' : (schema.type ?? 'any');
}

export function optionsDoc(): string {
  const rows = Object.entries(RunOptionFields.shape).map(([name, field]) => {
    const fallback =
      (field.def as { type: string; defaultValue?: unknown }).type === 'default' ? JSON.stringify((field.def as { defaultValue?: unknown }).defaultValue) : '';
    const fallbackCell = isRequired(field) ? 'required' : fallback ? `\`${fallback}\`` : '';
    const short = (field.meta() as Record<string, unknown> | undefined)?.['x-cli-short'];
    const flags = [...(typeof short === 'string' ? [short] : []), ...flagsOf(name as RunOptionName)].map((flag) => `\`${flag}\``).join(' ');
    return `| \`${name}\` | ${flags} | ${typeOf(field)} | ${fallbackCell} | ${(field.description ?? '').replace(/\|/g, '\\|')} |`;
  });
  return [
    '# Run options',
    '',
    'Every option of a run, as [`runs/run-options.ts`](../runs/run-options.ts) defines it once. The same name is the',
    "API's submit body field (`POST /evals/submit`, and `POST /schedules` without `model`), the Python client's",
    "keyword argument, and, in kebab case, `br run`/`br submit`/`br schedule create`'s flag; a run pins the",
    'options it ran with, every default filled in, in its workflow input. This page is generated',
    '(`npm run generate:run-options`); a unit test fails when it is stale.',
    '',
    '| option | flag | type | default | what it does |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    'Rules between options: `judgeModel` and `judgeEndpoint` go together, as do `userModel` and `userEndpoint`, and `truncationTokens` and',
    '`tokenizer`; truncation needs the gateway. On the command line a list is comma-separated (`--instances` also',
    'takes `@FILE`, one id per line), `--gen key=value` repeats, `--prices` names a YAML file',
    '`{models: {<name>: {input, output}}}`, and `--gen-config FILE` layers generation settings under the flags.',
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  writeFileSync(PYTHON_OPTIONS_FILE, pythonOptionsSchema());
  writeFileSync(OPTIONS_DOC_FILE, optionsDoc());
  console.log(`wrote ${path.relative(process.cwd(), PYTHON_OPTIONS_FILE)} and ${path.relative(process.cwd(), OPTIONS_DOC_FILE)}`);
}

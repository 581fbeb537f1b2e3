// A run's options, defined once (runs/run-options.ts): the flags `br run` derives from them, the values
// they become, and the errors a bad one gives, on the command line and in an API body alike.

import { Command } from 'commander';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { specFromFlags } from '../../cli/run-definition.js';
import { addRunOptionFlags, flagOf, listOrFile, type ParsedFlags } from '../../cli/run-option-flags.js';
import { runSpecFromRequest } from '../../client/run-request.js';
import { InputError } from '../../contract/problems.js';
import { jobSpecsOf } from '../../runs/job-specs.js';
import { RunOptionFields, RunRequestSchema } from '../../runs/run-options.js';
import { generationOf } from '../../runs/generation.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const tokenizer = path.join(repoRoot, 'test', 'fixtures', 'tokenizer', 'tiny-bpe.json');

/** `br run arith` with these flags, parsed by the real flag definitions, to the run spec. */
function specOf(argv: string[]) {
  const command = addRunOptionFlags(
    new Command()
      .argument('<benchmark>')
      .exitOverride()
      .configureOutput({ writeErr: () => undefined }),
  );
  command.parse(['arith', '--model', 'm', '--endpoint', 'http://127.0.0.1:1/v1', ...argv], { from: 'user' });
  return specFromFlags('arith', command.opts<ParsedFlags>());
}

describe('the flags derived from the options', () => {
  it('give every option a flag named for it, with its description', () => {
    const command = addRunOptionFlags(new Command());
    const flags = new Map(command.options.map((o) => [o.long, o.description]));
    for (const [name, field] of Object.entries(RunOptionFields.shape)) {
      const flag = flagOf(name);
      expect(flags.has(flag) || flags.has(`--no-${flag.slice(2)}`), flag).toBe(true);
      expect([flags.get(flag), flags.get(`--no-${flag.slice(2)}`)].join(' '), flag).toContain(field.description!);
    }
    expect([...flags.keys()]).toEqual(
      expect.arrayContaining(['--host-timeout', '--model-concurrency', '--no-gateway', '--thinking', '--no-thinking', '--gen', '--gen-config']),
    );
  });

  it('omit what a command finds elsewhere: a schedule has no --model', () => {
    expect(addRunOptionFlags(new Command(), ['model']).options.map((o) => o.long)).not.toContain('--model');
  });

  it('make the same run definition as the API body with the same options', () => {
    const fromFlags = specOf(['--concurrency', '3', '--repeats', '2', '--tasks', 'addition', '--no-gateway', '--gen', 'temperature=0', '--max-tokens', '64']);
    const body = RunRequestSchema.parse({
      benchmark: 'arith',
      model: 'm',
      endpoint: 'http://127.0.0.1:1/v1',
      concurrency: 3,
      repeats: 2,
      tasks: ['addition'],
      gateway: false,
      gen: { temperature: 0 },
      maxTokens: 64,
    });
    const fromBody = runSpecFromRequest(body);
    const { runId: _a, submittedAt: _b, ...flagged } = fromFlags;
    const { runId: _c, submittedAt: _d, ...bodied } = fromBody;
    expect(flagged).toEqual(bodied);
    expect(fromFlags.options).toMatchObject({ concurrency: 3, repeats: 2 });
    expect(fromFlags.tasks.map((t) => t.name)).toEqual(['addition']);
  });

  it('name the flag in each error, several at once', () => {
    expect(() => specOf(['--concurrency', '0', '--host-timeout', 'soon'])).toThrow(InputError);
    try {
      specOf(['--concurrency', '0', '--host-timeout', 'soon']);
    } catch (error) {
      expect((error as InputError).message.split('\n')).toEqual([
        '--concurrency: expected a positive whole number, got 0',
        '--host-timeout: expected a positive whole number, got "soon"',
      ]);
    }
    expect(() => specOf(['--tasks', 'division'])).toThrow('--tasks: no task named "division" (have addition, multiplication)');
    expect(() => specOf(['--endpoint', 'ftp://x'])).toThrow(
      '--endpoint: expected an http(s) URL, the OpenAI-compatible base (usually ending in /v1), got "ftp://x"',
    );
  });
});

describe('--instances', () => {
  it('reads a comma-separated list, trimming blanks and dropping repeats in order', () => {
    expect(listOrFile(' q-2, q-1,,q-2 ', '--instances')).toEqual(['q-2', 'q-1']);
  });

  it('reads @FILE with one id per line', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-instances-'));
    try {
      writeFileSync(path.join(dir, 'ids.txt'), 'alpha\n\nbeta\r\ngamma\n');
      expect(listOrFile(`@${path.join(dir, 'ids.txt')}`, '--instances')).toEqual(['alpha', 'beta', 'gamma']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an id holding a comma and an empty list, naming the flag; a missing file, naming the file', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-instances-'));
    const file = path.join(dir, 'ids.txt');
    try {
      writeFileSync(file, 'a,b\n');
      expect(() => specOf(['--instances', `@${file}`])).toThrow(
        '--instances: [0]: expected an instance id without a comma (BENCHROUTER_INSTANCES is comma-separated), got "a,b"',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => specOf(['--instances', ','])).toThrow('--instances: expected at least one instance id');
    expect(() => listOrFile('@/nonexistent/ids.txt', '--instances')).toThrow('/nonexistent/ids.txt: --instances: cannot read the list: ENOENT');
  });
});

describe('--truncation-tokens, --tokenizer and --job-concurrency', () => {
  it("pin the truncation and the tokenizer's hash, and the per-job concurrency in the options and job specs", () => {
    const spec = specOf(['--truncation-tokens', '16384', '--tokenizer', tokenizer, '--job-concurrency', '32', '--gen', 'temperature=0']);
    expect(generationOf(spec.options, spec.resolved)).toEqual({
      set: { temperature: 0 },
      truncation: { maxTokens: 16384, tokenizer, sha256: createHash('sha256').update(readFileSync(tokenizer)).digest('hex') },
    });
    expect(spec.options.jobConcurrency).toBe(32);
    expect(jobSpecsOf(spec).map((job) => job.options.jobConcurrency)).toEqual([32, 32]);
    const plain = specOf([]);
    expect(generationOf(plain.options, plain.resolved)).toEqual({ set: {} });
  });

  it('refuse one truncation flag without the other, truncation without the gateway, and a tokenizer file that is missing', () => {
    expect(() => specOf(['--truncation-tokens', '100'])).toThrow(
      "--tokenizer: expected together with --truncation-tokens: prompt truncation needs a token count and the model's tokenizer.json",
    );
    expect(() => specOf(['--tokenizer', tokenizer])).toThrow('--truncation-tokens: expected together with --tokenizer');
    expect(() => specOf(['--truncation-tokens', '100', '--tokenizer', tokenizer, '--no-gateway'])).toThrow(
      '--truncation-tokens: prompt truncation is applied by the gateway: it cannot be used with --no-gateway',
    );
    expect(() => specOf(['--truncation-tokens', '100', '--tokenizer', '/nonexistent/tokenizer.json'])).toThrow(
      "/nonexistent/tokenizer.json: --tokenizer: no such file: expected the model's tokenizer.json",
    );
    expect(() => specOf(['--truncation-tokens', '0', '--tokenizer', tokenizer])).toThrow('--truncation-tokens: expected a positive whole number, got 0');
  });
});

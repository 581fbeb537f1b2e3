// Flags that select instances, truncate prompts and set a job's concurrency: parsed into run options the
// way `br run` passes them on.

import { Command } from 'commander';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { specFromFlags } from '../../cli/run-definition.js';
import { addRunFlags, instanceIds, type RunFlags } from '../../cli/run-flags.js';
import { jobSpecsOf } from '../../runs/job-specs.js';
import { InputError } from '../../contract/problems.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

describe('--instances', () => {
  it('reads a comma-separated list, trimming blanks and dropping repeats in order', () => {
    expect(instanceIds(' q-2, q-1,,q-2 ')).toEqual(['q-2', 'q-1']);
  });

  it('reads @FILE with one id per line', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-instances-'));
    try {
      writeFileSync(path.join(dir, 'ids.txt'), 'alpha\n\nbeta\r\ngamma\n');
      expect(instanceIds(`@${path.join(dir, 'ids.txt')}`)).toEqual(['alpha', 'beta', 'gamma']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an id holding a comma, naming the file it came from', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-instances-'));
    const file = path.join(dir, 'ids.txt');
    try {
      writeFileSync(file, 'a,b\n');
      expect(() => instanceIds(`@${file}`)).toThrow(InputError);
      expect(() => instanceIds(`@${file}`)).toThrow(`${file}: instance ids cannot contain a comma (BENCHROUTER_INSTANCES is comma-separated), got "a,b"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an empty list and a missing file', () => {
    expect(() => instanceIds(',')).toThrow('--instances: expected at least one instance id');
    expect(() => instanceIds('@/nonexistent/ids.txt')).toThrow('/nonexistent/ids.txt: --instances: cannot read the instance list: ENOENT');
  });
});

describe('--truncation-tokens, --tokenizer and --job-concurrency', () => {
  const tokenizer = path.join(repoRoot, 'test', 'fixtures', 'tokenizer', 'tiny-bpe.json');
  /** `br run arith` with these flags, parsed by the real command definition, to the run spec. */
  const specOf = (argv: string[]) => {
    const command = addRunFlags(new Command().exitOverride().configureOutput({ writeErr: () => undefined }));
    command.parse(['arith', '--model', 'm', '--endpoint', 'http://127.0.0.1:1/v1', ...argv], { from: 'user' });
    return specFromFlags('arith', command.opts<RunFlags>());
  };

  it('pin the truncation in the generation settings and the per-job concurrency in the options and job specs', () => {
    const spec = specOf(['--truncation-tokens', '16384', '--tokenizer', tokenizer, '--job-concurrency', '32', '--gen', 'temperature=0']);
    expect(spec.generation).toEqual({
      set: { temperature: 0 },
      truncation: { maxTokens: 16384, tokenizer, sha256: createHash('sha256').update(readFileSync(tokenizer)).digest('hex') },
    });
    expect(spec.options.jobConcurrency).toBe(32);
    expect(jobSpecsOf(spec).map((job) => job.options.jobConcurrency)).toEqual([32, 32]);
    expect(specOf([]).generation).toEqual({ set: {} });
    expect(jobSpecsOf(specOf([]))[0]!.options).toEqual({ hostTimeoutSeconds: 120, heartbeatTimeoutSeconds: 30, maxHosts: 3 });
  });

  it('refuse one truncation flag without the other, and a tokenizer file that is missing', () => {
    expect(() => specOf(['--truncation-tokens', '100'])).toThrow(
      "--tokenizer: prompt truncation needs both --truncation-tokens N and --tokenizer FILE (the model's tokenizer.json)",
    );
    expect(() => specOf(['--tokenizer', tokenizer])).toThrow('--truncation-tokens: prompt truncation needs both');
    expect(() => specOf(['--truncation-tokens', '100', '--tokenizer', '/nonexistent/tokenizer.json'])).toThrow(
      "/nonexistent/tokenizer.json: --tokenizer: no such file: expected the model's tokenizer.json",
    );
    expect(() => specOf(['--truncation-tokens', '0', '--tokenizer', tokenizer])).toThrow('expected a positive whole number, got "0"');
  });
});

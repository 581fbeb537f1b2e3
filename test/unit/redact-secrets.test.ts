// Redaction of what a task may print or write: every secret the worker knows for a job is cut from
// text and from whole results before they enter workflow history.

import { runOptions } from '../../runs/run-options.js';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keepLogTail, SHOWN_LINE_CHARS } from '../../activities/container-log-tail.js';
import { jobSecrets, redactDeep, redactSecrets } from '../../activities/redact-secrets.js';

const key = 'sk-live-0123456789abcdef';
const token = 'brj-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

describe('redactSecrets', () => {
  it('replaces every occurrence of every secret', () => {
    expect(redactSecrets(`key=${key} again ${key}; token ${token}`, [key, token])).toBe('key=[redacted] again [redacted]; token [redacted]');
  });

  it('redacts a secret that contains another one whole', () => {
    expect(redactSecrets(`x ${key}-extended y`, [key, `${key}-extended`])).toBe('x [redacted] y');
  });

  it('leaves text alone when there are no secrets, and ignores too-short ones that would mangle it', () => {
    expect(redactSecrets('EMPTY key, ok', [])).toBe('EMPTY key, ok');
    expect(redactSecrets('EMPTY key, ok', ['ok', ''])).toBe('EMPTY key, ok');
  });
});

describe('redactDeep', () => {
  it('redacts strings at any depth, keys included, and keeps other values', () => {
    const value = { message: `failed with ${key}`, result: { overall: 0.5, raw_metrics: { leaked: key, [key]: 1, list: [token, 2, null] } } };
    expect(redactDeep(value, [key, token])).toEqual({
      message: 'failed with [redacted]',
      result: { overall: 0.5, raw_metrics: { leaked: '[redacted]', '[redacted]': 1, list: ['[redacted]', 2, null] } },
    });
  });
});

describe('jobSecrets', () => {
  const job = {
    jobId: 'br-1.000-a',
    options: runOptions({
      model: 'm',
      endpoint: 'http://x/v1',
      apiKeyEnv: 'MODEL_KEY',
      judgeModel: 'j',
      judgeEndpoint: 'http://y/v1',
      judgeApiKeyEnv: 'JUDGE_KEY',
    }),
  };

  it("holds the model's and judge's resolved keys and both gateway tokens", () => {
    const gateway = { tokenFor: (jobId: string, role: string) => `brj-${jobId}-${role}` };
    expect(jobSecrets(job, gateway, { MODEL_KEY: 'model-secret', JUDGE_KEY: 'judge-secret' })).toEqual([
      'model-secret',
      'judge-secret',
      'brj-br-1.000-a-model',
      'brj-br-1.000-a-judge',
    ]);
  });

  it('holds only the keys with --no-gateway, and skips keys not set on this host', () => {
    expect(jobSecrets({ ...job, options: { ...job.options, gateway: false } }, undefined, { MODEL_KEY: 'model-secret' })).toEqual(['model-secret']);
  });
});

describe('keepLogTail', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-log-tail-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('keeps the last 20 lines, redacted, beside container.log and returns only the last non-empty line', () => {
    const jobDir = path.join(scratch, 'job');
    mkdirSync(jobDir);
    const lines = Array.from({ length: 30 }, (_, i) => `2026-11-30T14:00:00.000000000Z line ${i} key=${key}`);
    writeFileSync(path.join(jobDir, 'container.log'), `${lines.join('\n')}\n\n  \n`);
    expect(keepLogTail(jobDir, [key])).toBe('line 29 key=[redacted]');
    const tail = readFileSync(path.join(jobDir, 'container-tail.log'), 'utf8');
    expect(tail).not.toContain(key);
    expect(tail).toContain('line 10 key=[redacted]');
    expect(tail).not.toContain('line 9 ');
  });

  it("shows the task's last line rather than the DinD runtime's closing lines, and the runtime's when the task said nothing", () => {
    const jobDir = path.join(scratch, 'dind-job');
    mkdirSync(jobDir);
    const stamp = '2026-11-30T14:00:00.000000000Z';
    writeFileSync(
      path.join(jobDir, 'container.log'),
      `${stamp} inner service up, now failing\n${stamp} [dind] task exited with status 4; inner daemon stopped in 1.2s\n`,
    );
    expect(keepLogTail(jobDir, [])).toBe('inner service up, now failing');
    writeFileSync(path.join(jobDir, 'container.log'), `${stamp} [dind] error: dockerd did not start\n`);
    expect(keepLogTail(jobDir, [])).toBe('[dind] error: dockerd did not start');
  });

  it(`cuts the shown line to ${SHOWN_LINE_CHARS} characters after redacting, so no part of a secret survives the cut`, () => {
    const jobDir = path.join(scratch, 'long');
    mkdirSync(jobDir);
    writeFileSync(path.join(jobDir, 'container.log'), `${'a'.repeat(SHOWN_LINE_CHARS - 10)}${key}${'b'.repeat(500)}\n`);
    const shown = keepLogTail(jobDir, [key]);
    expect(shown).toHaveLength(SHOWN_LINE_CHARS);
    expect(shown).toContain('[redacted]'.slice(0, 7));
    expect(shown).not.toContain(key.slice(0, 7));
  });

  it('reads only the end of a huge log', () => {
    const jobDir = path.join(scratch, 'huge');
    mkdirSync(jobDir);
    writeFileSync(path.join(jobDir, 'container.log'), `${'spam\n'.repeat(2_000_000)}the end\n`);
    expect(keepLogTail(jobDir, [])).toBe('the end');
  });

  it('returns nothing, and keeps an empty tail, when the task printed nothing', () => {
    const jobDir = path.join(scratch, 'quiet');
    mkdirSync(jobDir);
    expect(keepLogTail(jobDir, [key])).toBe('');
    expect(readFileSync(path.join(jobDir, 'container-tail.log'), 'utf8')).toBe('');
  });
});

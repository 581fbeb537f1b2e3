// Middle truncation with a model's own tokenizer (gateway/prompt-truncation.ts), on a 300-token byte-level
// BPE tokenizer.json that Hugging Face's Python `tokenizers` trained and saved
// (test/fixtures/tokenizer/make-tokenizer.py): the expected texts are what that script printed, so the
// JS tokenizer is checked against the reference implementation, not against itself.

import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTokenizerFile, middleTruncate, truncateRequest, truncator } from '../../gateway/prompt-truncation.js';
import { upstreamRequest } from '../../gateway/request-body.js';
import { runSpecFromRequest } from '../../client/run-request.js';
import { RunRequestSchema } from '../../runs/run-options.js';
import { generationOf } from '../../runs/generation.js';
import { InputError } from '../../contract/problems.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const FIXTURE = path.join(repoRoot, 'test', 'fixtures', 'tokenizer', 'tiny-bpe.json');
const SHA256 = createHash('sha256').update(readFileSync(FIXTURE)).digest('hex');
const LONG = 'Middle truncation keeps the beginning and the end of a prompt and drops its middle.';
const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-truncation-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('middleTruncate', () => {
  const { tokenizer } = loadTokenizerFile(FIXTURE);

  it('keeps the first and last N/2 tokens, as Python tokenizers decodes them', () => {
    expect(tokenizer.encode(LONG, { add_special_tokens: false }).ids.length).toBe(47);
    expect(middleTruncate(tokenizer, LONG, 8)).toBe('Middle tr middle.');
    // Multi-byte characters: accents and CJK, where a byte-level token may hold part of a character.
    const mixed = 'Les modèles de langue lisent des invites très longues; 長い文脈も読みます.';
    expect(tokenizer.encode(mixed, { add_special_tokens: false }).ids.length).toBe(57);
    expect(middleTruncate(tokenizer, mixed, 10)).toBe('Les modます.');
  });

  it('leaves a prompt of N tokens or fewer alone, and rounds an odd N down on both sides', () => {
    expect(middleTruncate(tokenizer, LONG, 47)).toBeUndefined();
    expect(middleTruncate(tokenizer, LONG, 100)).toBeUndefined();
    expect(middleTruncate(tokenizer, LONG, 9)).toBe('Middle tr middle.');
    expect(middleTruncate(tokenizer, LONG, 1)).toBe('');
  });
});

describe('truncateRequest', () => {
  const cut = truncator(loadTokenizerFile(FIXTURE), { maxTokens: 8, tokenizer: FIXTURE, sha256: SHA256 });

  it("cuts a chat request's last user message only, string or text part", () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'system', content: LONG },
        { role: 'user', content: LONG },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: LONG },
      ],
    };
    expect(truncateRequest('chat/completions', body, cut)).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: LONG },
        { role: 'user', content: LONG },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'Middle tr middle.' },
      ],
    });
    const parts = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: LONG },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
      ],
    };
    expect(truncateRequest('chat/completions', parts, cut)).toEqual({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Middle tr middle.' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
      ],
    });
  });

  it("cuts a completions request's prompt; short prompts and other endpoints are left alone", () => {
    expect(truncateRequest('completions', { prompt: LONG, max_tokens: 5 }, cut)).toEqual({ prompt: 'Middle tr middle.', max_tokens: 5 });
    expect(truncateRequest('completions', { prompt: 'short' }, cut)).toBeUndefined();
    expect(truncateRequest('chat/completions', { messages: [{ role: 'user', content: 'short' }] }, cut)).toBeUndefined();
    expect(truncateRequest('embeddings', { input: LONG }, cut)).toBeUndefined();
  });

  it('changes only the prompt in the bytes sent upstream, and says so', () => {
    const raw = Buffer.from(`{"model": "m", "temperature": 1.0, "messages": [{"role": "user", "content": ${JSON.stringify(LONG)}}]}`);
    const sent = upstreamRequest('chat/completions', raw, { set: {} }, cut);
    expect(sent.ok && sent.payload.toString()).toBe('{"model": "m", "temperature": 1.0, "messages": [{"role":"user","content":"Middle tr middle."}]}');
    expect(sent.ok && sent.truncated).toBe(true);
    const short = Buffer.from('{"model":"m","messages":[{"role":"user","content":"short"}]}');
    const untouched = upstreamRequest('chat/completions', short, { set: {} }, cut);
    expect(untouched.ok && untouched.payload).toBe(short);
    expect(untouched.ok && untouched.truncated).toBe(false);
  });
});

describe('loadTokenizerFile', () => {
  it("gives the file's SHA-256", () => {
    expect(loadTokenizerFile(FIXTURE).sha256).toBe(SHA256);
  });

  it('names the file and the problem: missing, a directory, unreadable, not JSON, not a tokenizer', () => {
    const missing = path.join(scratch, 'nope.json');
    expect(() => loadTokenizerFile(missing)).toThrow(`${missing}: no such file: expected the model's tokenizer.json`);
    expect(() => loadTokenizerFile(scratch)).toThrow(`${scratch}: is a directory: expected the tokenizer.json file in it`);
    const notJson = path.join(scratch, 'config.yaml');
    writeFileSync(notJson, 'model: x\n');
    expect(() => loadTokenizerFile(notJson)).toThrow(`${notJson}: not a tokenizer: expected a Hugging Face tokenizer.json, but it is not JSON`);
    const notTokenizer = path.join(scratch, 'package.json');
    writeFileSync(notTokenizer, '{"name": "x"}');
    expect(() => loadTokenizerFile(notTokenizer)).toThrow(
      `${notTokenizer}: not a tokenizer: expected a Hugging Face tokenizer.json with a "model" object naming its "type" (BPE, WordPiece, Unigram, ...)`,
    );
    const badModel = path.join(scratch, 'bad-model.json');
    writeFileSync(badModel, '{"model": {"type": "NoSuchModel"}}');
    expect(() => loadTokenizerFile(badModel)).toThrow(`${badModel}: not a tokenizer this gateway can use: `);
    if (process.getuid?.() !== 0) {
      const locked = path.join(scratch, 'locked.json');
      writeFileSync(locked, readFileSync(FIXTURE));
      chmodSync(locked, 0o000);
      expect(() => loadTokenizerFile(locked)).toThrow(`${locked}: cannot read the tokenizer file (EACCES)`);
    }
  });
});

describe('the run request', () => {
  const request = (extra: Record<string, unknown>) => RunRequestSchema.parse({ benchmark: 'arith', model: 'm', endpoint: 'http://127.0.0.1:1/v1', ...extra });

  it("pins the tokenizer's absolute path and SHA-256 in the run's generation settings", () => {
    const spec = runSpecFromRequest(request({ truncationTokens: 4096, tokenizer: FIXTURE, jobConcurrency: 32 }));
    expect([spec.options.truncationTokens, spec.options.tokenizer, spec.resolved.tokenizer]).toEqual([4096, FIXTURE, { path: FIXTURE, sha256: SHA256 }]);
    expect(generationOf(spec.options, spec.resolved)).toEqual({ set: {}, truncation: { maxTokens: 4096, tokenizer: FIXTURE, sha256: SHA256 } });
    expect(spec.options.jobConcurrency).toBe(32);
  });

  it('refuses a file that is not a tokenizer, naming it and the field, and truncation without the gateway', () => {
    mkdirSync(path.join(scratch, 'model'), { recursive: true });
    const notTokenizer = path.join(scratch, 'model', 'config.json');
    writeFileSync(notTokenizer, '{"architectures": []}');
    const submit = () => runSpecFromRequest(request({ truncationTokens: 8, tokenizer: notTokenizer }), { file: 'body' });
    expect(submit).toThrow(InputError);
    expect(submit).toThrow(`${notTokenizer}: tokenizer: not a tokenizer: expected a Hugging Face tokenizer.json`);
    expect(
      RunRequestSchema.safeParse({ benchmark: 'arith', model: 'm', endpoint: 'http://127.0.0.1:1/v1', gateway: false, truncationTokens: 8, tokenizer: FIXTURE })
        .error?.issues,
    ).toEqual([
      expect.objectContaining({
        path: ['truncationTokens'],
        message: 'prompt truncation is applied by the gateway: it cannot be used with gateway false',
      }),
    ]);
  });
});

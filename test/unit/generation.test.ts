// Generation settings (runs/generation.ts): reading `--gen key=value`, layering settings, and the request
// body the upstream receives once they are applied.

import { describe, expect, it } from 'vitest';
import { layerOptions } from '../../cli/run-option-flags.js';
import { applyGeneration, isEmptyGeneration, NO_GENERATION_SETTINGS, parseGenFlag } from '../../runs/generation.js';

describe('parseGenFlag', () => {
  it('reads the value as JSON when it parses: numbers, booleans, null, arrays and objects', () => {
    expect(parseGenFlag('temperature=0')).toEqual(['temperature', 0]);
    expect(parseGenFlag('top_p=0.95')).toEqual(['top_p', 0.95]);
    expect(parseGenFlag('logprobs=true')).toEqual(['logprobs', true]);
    expect(parseGenFlag('seed=null')).toEqual(['seed', null]);
    expect(parseGenFlag('stop=["\\n\\n","END"]')).toEqual(['stop', ['\n\n', 'END']]);
    expect(parseGenFlag('response_format={"type":"json_object"}')).toEqual(['response_format', { type: 'json_object' }]);
  });

  it('keeps a value that is not JSON as the string typed, "=" included, and trims the key', () => {
    expect(parseGenFlag('reasoning_effort=low')).toEqual(['reasoning_effort', 'low']);
    expect(parseGenFlag('stop=a=b')).toEqual(['stop', 'a=b']);
    expect(parseGenFlag(' user =x')).toEqual(['user', 'x']);
    expect(parseGenFlag('suffix=')).toEqual(['suffix', '']);
  });

  it('rejects a flag without a key, naming the flag and what it expects', () => {
    expect(() => parseGenFlag('temperature')).toThrow('--gen: expected key=value, got "temperature"');
    expect(() => parseGenFlag('=0')).toThrow('--gen: expected key=value, got "=0"');
  });
});

describe('layered generation options (--gen-config, a suite entry, the flags)', () => {
  it('lets a later layer win option by option and merges the gen maps', () => {
    expect(
      layerOptions({ gen: { temperature: 0.7, top_p: 1 }, maxTokens: 512, thinking: true }, {}, { gen: { temperature: 0 }, maxTokensAdd: 64, thinking: false }),
    ).toEqual({ gen: { temperature: 0, top_p: 1 }, maxTokens: 512, maxTokensAdd: 64, thinking: false });
  });

  it('is empty with no layers, skips what a layer leaves undefined, and does not share an input gen map', () => {
    expect(layerOptions()).toEqual({});
    expect(layerOptions({ limit: 5 }, { limit: undefined })).toEqual({ limit: 5 });
    const layer = { gen: { temperature: 0 } };
    (layerOptions(layer).gen as Record<string, number>).temperature = 1;
    expect(layer.gen.temperature).toBe(0);
  });
});

describe('isEmptyGeneration', () => {
  it('is true only when nothing would change a request', () => {
    expect(isEmptyGeneration(NO_GENERATION_SETTINGS)).toBe(true);
    expect(isEmptyGeneration({ set: { temperature: 0 } })).toBe(false);
    expect(isEmptyGeneration({ set: {}, thinking: false })).toBe(false);
    expect(isEmptyGeneration({ set: {}, maxTokensScale: 1 })).toBe(false);
  });
});

describe('applyGeneration', () => {
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.7, max_tokens: 101 };

  it('leaves the body as it was with no settings', () => {
    expect(applyGeneration(body, NO_GENERATION_SETTINGS)).toEqual(body);
  });

  it("sets fields over the benchmark's own and never changes the caller's body", () => {
    const before = structuredClone(body);
    expect(applyGeneration(body, { set: { temperature: 0, seed: 7 } })).toEqual({ ...body, temperature: 0, seed: 7 });
    expect(body).toEqual(before);
  });

  it('scales max_tokens (rounded), then adds to it', () => {
    expect(applyGeneration(body, { set: {}, maxTokensScale: 1.5 }).max_tokens).toBe(152);
    expect(applyGeneration(body, { set: {}, maxTokensAdd: 64 }).max_tokens).toBe(165);
    expect(applyGeneration(body, { set: {}, maxTokensScale: 2, maxTokensAdd: -2 }).max_tokens).toBe(200);
  });

  it('sets max_tokens outright with --max-tokens, and an add then applies on top', () => {
    expect(applyGeneration(body, { set: {}, maxTokens: 4096 }).max_tokens).toBe(4096);
    expect(applyGeneration(body, { set: {}, maxTokens: 4096, maxTokensAdd: 4 }).max_tokens).toBe(4100);
  });

  it('adjusts max_completion_tokens when the request uses that field instead', () => {
    const modern = { model: 'm', max_completion_tokens: 1000 };
    expect(applyGeneration(modern, { set: {}, maxTokensAdd: 24 })).toEqual({ model: 'm', max_completion_tokens: 1024 });
    expect(applyGeneration(modern, { set: {}, maxTokens: 50 })).toEqual({ model: 'm', max_completion_tokens: 50 });
  });

  it('adds no token limit to a request that had none, unless --max-tokens sets one', () => {
    expect(applyGeneration({ model: 'm' }, { set: {}, maxTokensAdd: 64, maxTokensScale: 2 })).toEqual({ model: 'm' });
    expect(applyGeneration({ model: 'm' }, { set: {}, maxTokens: 64 })).toEqual({ model: 'm', max_tokens: 64 });
  });

  it('switches thinking through chat_template_kwargs, keeping the kwargs already there', () => {
    expect(applyGeneration({ model: 'm', chat_template_kwargs: { add_generation_prompt: true } }, { set: {}, thinking: false })).toEqual({
      model: 'm',
      chat_template_kwargs: { add_generation_prompt: true, enable_thinking: false },
    });
    expect(applyGeneration({ model: 'm' }, { set: {}, thinking: true })).toEqual({ model: 'm', chat_template_kwargs: { enable_thinking: true } });
  });

  it('sets reasoning_effort to "none" to turn thinking off only where the request already uses that field', () => {
    expect(applyGeneration({ model: 'm', reasoning_effort: 'high' }, { set: {}, thinking: false }).reasoning_effort).toBe('none');
    expect(applyGeneration({ model: 'm' }, { set: {}, thinking: false })).not.toHaveProperty('reasoning_effort');
  });

  it('turning thinking on removes a "none" effort and keeps any other', () => {
    expect(applyGeneration({ model: 'm', reasoning_effort: 'none' }, { set: {}, thinking: true })).not.toHaveProperty('reasoning_effort');
    expect(applyGeneration({ model: 'm', reasoning_effort: 'low' }, { set: {}, thinking: true }).reasoning_effort).toBe('low');
  });
});

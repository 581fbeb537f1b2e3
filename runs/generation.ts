// Generation settings applied uniformly to every model call of a run, by the gateway: set or
// override request fields, adjust max_tokens, switch thinking on or off. Pure. A run pins the options
// they come from (runs/run-options.ts) and the tokenizer's hash; generationOf derives the settings from
// them on the host, so a change to generationOf changes what runs in flight apply.

import type { RunOptions } from './run-options.js';
import type { ResolvedOptions } from './run-spec.js';

export interface GenerationSettings {
  /** Fields set on every request body (`--gen temperature=0`); they override the benchmark's. */
  set: Record<string, unknown>;
  /** max_tokens for every request (`--max-tokens`). */
  maxTokens?: number;
  /** Added to the request's own max_tokens (`--max-tokens-add`). */
  maxTokensAdd?: number;
  /** Multiplies the request's own max_tokens (`--max-tokens-scale`). */
  maxTokensScale?: number;
  /** `--thinking` / `--no-thinking`. */
  thinking?: boolean;
  /** `--truncation-tokens N --tokenizer FILE`: the gateway middle-truncates prompts over N tokens. */
  truncation?: TruncationSettings;
  /** `--strip-thinking`: the gateway removes `<think>…</think>` from answers (gateway/thinking.ts). */
  stripThinking?: true;
}

/** Middle truncation of over-long prompts with the model's own tokenizer (gateway/prompt-truncation.ts). */
export interface TruncationSettings {
  /** Prompts of more tokens than this keep their first and last maxTokens / 2. */
  maxTokens: number;
  /** The model's tokenizer.json, an absolute path that every worker host reads. */
  tokenizer: string;
  /** SHA-256 of the file the run was submitted with: a host whose file differs refuses the job. */
  sha256: string;
}

export const NO_GENERATION_SETTINGS: GenerationSettings = { set: {} };

/** The settings the gateway applies to a run's model calls, from its options and what submitting resolved (the tokenizer's hash). */
export function generationOf(
  options: Pick<RunOptions, 'gen' | 'maxTokens' | 'maxTokensAdd' | 'maxTokensScale' | 'thinking' | 'truncationTokens' | 'stripThinking'>,
  resolved: Pick<ResolvedOptions, 'tokenizer'>,
): GenerationSettings {
  if (options.truncationTokens !== undefined && !resolved.tokenizer)
    throw new Error(
      'truncationTokens is set but the run pins no tokenizer hash: submit it through runSpecOfBenchmark (client/run-request.ts), which checks and hashes the file',
    );
  return {
    set: options.gen,
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(options.maxTokensAdd !== undefined ? { maxTokensAdd: options.maxTokensAdd } : {}),
    ...(options.maxTokensScale !== undefined ? { maxTokensScale: options.maxTokensScale } : {}),
    ...(options.thinking !== undefined ? { thinking: options.thinking } : {}),
    ...(options.truncationTokens !== undefined && resolved.tokenizer
      ? { truncation: { maxTokens: options.truncationTokens, tokenizer: resolved.tokenizer.path, sha256: resolved.tokenizer.sha256 } }
      : {}),
    ...(options.stripThinking ? { stripThinking: true as const } : {}),
  };
}

/** `key=value` from `--gen`: the value is JSON when it parses (numbers, booleans, objects), else a string. */
export function parseGenFlag(flag: string): [string, unknown] {
  const eq = flag.indexOf('=');
  if (eq <= 0) throw new Error(`--gen: expected key=value, got "${flag}"`);
  const key = flag.slice(0, eq).trim();
  const raw = flag.slice(eq + 1);
  try {
    return [key, JSON.parse(raw)];
  } catch {
    return [key, raw];
  }
}

/** Whether the settings leave request bodies as they are (stripThinking acts on answers). */
export function isEmptyGeneration(g: GenerationSettings): boolean {
  return (
    Object.keys(g.set).length === 0 &&
    g.maxTokens === undefined &&
    g.maxTokensAdd === undefined &&
    g.maxTokensScale === undefined &&
    g.thinking === undefined &&
    g.truncation === undefined
  );
}

/**
 * The request body the upstream receives. Thinking maps to the two common forms: vLLM/SGLang chat
 * templates (`chat_template_kwargs.enable_thinking`, always set), and OpenAI-style
 * `reasoning_effort`, set to "none" to turn thinking off only when the request already uses that
 * field (servers that do not know it may reject it).
 */
export function applyGeneration(body: Record<string, unknown>, g: GenerationSettings): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body, ...g.set };
  const tokenField = 'max_completion_tokens' in out && !('max_tokens' in out) ? 'max_completion_tokens' : 'max_tokens';
  if (g.maxTokens !== undefined) out[tokenField] = g.maxTokens;
  const current = out[tokenField];
  if (typeof current === 'number') {
    let adjusted = current;
    if (g.maxTokensScale !== undefined) adjusted = Math.round(adjusted * g.maxTokensScale);
    if (g.maxTokensAdd !== undefined) adjusted += g.maxTokensAdd;
    out[tokenField] = adjusted;
  }
  if (g.thinking !== undefined) {
    const kwargs =
      typeof out.chat_template_kwargs === 'object' && out.chat_template_kwargs !== null ? (out.chat_template_kwargs as Record<string, unknown>) : {};
    out.chat_template_kwargs = { ...kwargs, enable_thinking: g.thinking };
    if ('reasoning_effort' in out) {
      if (!g.thinking) out.reasoning_effort = 'none';
      else if (out.reasoning_effort === 'none') delete out.reasoning_effort;
    }
  }
  return out;
}

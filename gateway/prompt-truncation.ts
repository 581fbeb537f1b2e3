// Middle truncation of over-long prompts with the model's own tokenizer (`--truncation-tokens N
// --tokenizer FILE`), as long-context evaluation scripts do it (LongBench's rule): a prompt of more
// than N tokens keeps its first N/2 and last N/2 tokens, each half decoded back to text. The gateway
// applies it to every model request of the run; the run pins the tokenizer's path and SHA-256.
// Tokenization is Hugging Face's tokenizer.json format, read by @huggingface/tokenizers (pure JS).

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { Endpoint } from './gateway-routes.js';
import type { TruncationSettings } from '../runs/generation.js';

export class TokenizerFileError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'TokenizerFileError';
  }
}

export interface LoadedTokenizer {
  tokenizer: Tokenizer;
  /** SHA-256 of the tokenizer.json bytes, hex. */
  sha256: string;
}

/**
 * Reads a Hugging Face tokenizer.json (and the tokenizer_config.json beside it, when there is one) and
 * checks that it tokenizes. Errors name the file and what is wrong with it: missing, unreadable, not
 * JSON, or not a tokenizer.
 */
export function loadTokenizerFile(file: string): LoadedTokenizer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new TokenizerFileError(file, "no such file: expected the model's tokenizer.json");
    if (code === 'EISDIR') throw new TokenizerFileError(file, 'is a directory: expected the tokenizer.json file in it');
    throw new TokenizerFileError(file, `cannot read the tokenizer file (${code ?? (error as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new TokenizerFileError(file, `not a tokenizer: expected a Hugging Face tokenizer.json, but it is not JSON (${(error as Error).message})`);
  }
  const model = typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>).model : undefined;
  if (typeof model !== 'object' || model === null || typeof (model as Record<string, unknown>).type !== 'string')
    throw new TokenizerFileError(
      file,
      'not a tokenizer: expected a Hugging Face tokenizer.json with a "model" object naming its "type" (BPE, WordPiece, Unigram, ...)',
    );
  const config = tokenizerConfig(file);
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(json as object, config);
    tokenizer.encode('BenchRouter checks that this tokenizer encodes.', { add_special_tokens: false });
  } catch (error) {
    throw new TokenizerFileError(file, `not a tokenizer this gateway can use: ${(error as Error).message}`);
  }
  return { tokenizer, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** tokenizer_config.json beside the tokenizer (special-token and clean-up settings), or none. */
function tokenizerConfig(file: string): object {
  const beside = path.join(path.dirname(file), 'tokenizer_config.json');
  if (!existsSync(beside)) return {};
  try {
    const config: unknown = JSON.parse(readFileSync(beside, 'utf8'));
    return typeof config === 'object' && config !== null ? config : {};
  } catch (error) {
    throw new TokenizerFileError(beside, `expected the JSON tokenizer config that goes with ${path.basename(file)} (${(error as Error).message})`);
  }
}

/**
 * The text cut to its first and last `maxTokens / 2` tokens (rounded down, as LongBench does), or
 * undefined when it is not longer than `maxTokens`. Special tokens are neither added nor kept.
 */
export function middleTruncate(tokenizer: Tokenizer, text: string, maxTokens: number): string | undefined {
  const ids = tokenizer.encode(text, { add_special_tokens: false }).ids;
  if (ids.length <= maxTokens) return undefined;
  const half = Math.floor(maxTokens / 2);
  if (half === 0) return '';
  const decode = (part: number[]) => tokenizer.decode(part, { skip_special_tokens: true });
  return decode(ids.slice(0, half)) + decode(ids.slice(ids.length - half));
}

/** Truncates one prompt text; undefined when it is short enough. */
export type Truncate = (text: string) => string | undefined;

export function truncator(loaded: LoadedTokenizer, settings: TruncationSettings): Truncate {
  return (text) => middleTruncate(loaded.tokenizer, text, settings.maxTokens);
}

/**
 * The request body with its prompt truncated, or undefined when nothing was cut. The prompt is the last
 * user message of a chat request (its text, or its last text part) and `prompt` of a completions
 * request (a string); the other messages (system, few-shot turns) are sent as they are.
 */
export function truncateRequest(endpoint: Endpoint, body: Record<string, unknown>, truncate: Truncate): Record<string, unknown> | undefined {
  if (endpoint === 'completions') {
    if (typeof body.prompt !== 'string') return undefined;
    const cut = truncate(body.prompt);
    return cut === undefined ? undefined : { ...body, prompt: cut };
  }
  if (endpoint !== 'chat/completions' || !Array.isArray(body.messages)) return undefined;
  const messages = body.messages as unknown[];
  const at = lastIndex(messages, (m) => isObject(m) && m.role === 'user');
  if (at < 0) return undefined;
  const message = messages[at] as Record<string, unknown>;
  let content: unknown;
  if (typeof message.content === 'string') {
    const cut = truncate(message.content);
    if (cut === undefined) return undefined;
    content = cut;
  } else if (Array.isArray(message.content)) {
    const parts = message.content as unknown[];
    const part = lastIndex(parts, (p) => isObject(p) && p.type === 'text' && typeof p.text === 'string');
    if (part < 0) return undefined;
    const cut = truncate((parts[part] as { text: string }).text);
    if (cut === undefined) return undefined;
    content = parts.map((p, i) => (i === part ? { ...(p as object), text: cut } : p));
  } else {
    return undefined;
  }
  return { ...body, messages: messages.map((m, i) => (i === at ? { ...message, content } : m)) };
}

function lastIndex(items: unknown[], matches: (item: unknown) => boolean): number {
  for (let i = items.length - 1; i >= 0; i -= 1) if (matches(items[i])) return i;
  return -1;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

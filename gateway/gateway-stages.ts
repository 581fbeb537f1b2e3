// The stages of one call through the model gateway (gateway/model-gateway.ts `handle`), each testable alone:
// preparing the upstream request from what the job sent, deciding whether an upstream answer is retried, relaying
// an answer (whole or streamed) while reading its usage and thinking, and the transcript line the call ends with.
// Only relayStream does I/O (it reads the upstream's stream and writes the job's response).

import type { Writable } from 'node:stream';
import type { GenerationSettings } from '../runs/generation.js';
import type { UsageSample } from '../runs/usage.js';
import { checkRoute, type Endpoint } from './gateway-routes.js';
import type { Truncate } from './prompt-truncation.js';
import { upstreamRequest, type UpstreamRequest } from './request-body.js';
import { StreamAssembler } from './stream-assembly.js';
import { StreamObserver } from './stream-observer.js';
import { wholeAnswerThinking } from './thinking.js';
import { transcriptBody, type TranscriptCall } from './transcript.js';
import { usageOf, type TokenUsage } from './usage-fields.js';

/** A call the gateway answers itself, with an error: its status, message and OpenAI error type. */
export interface Refusal {
  status: number;
  message: string;
  type: string;
}

/** Where a call goes: its endpoint and the upstream path with the query the job sent. */
export type CallTarget = { ok: true; endpoint: Endpoint; pathAndQuery: string } | ({ ok: false } & Refusal);

/** Stage 1: the route a call asks for, checked against the allow-list (before its body is read). */
export function callTarget(method: string, target: string): CallTarget {
  const check = checkRoute(method, target);
  if (!check.allowed) return { ok: false, status: 404, message: check.reason, type: 'not_found' };
  const query = target.indexOf('?');
  return { ok: true, endpoint: check.route.endpoint, pathAndQuery: check.route.upstreamPath + (query >= 0 ? target.slice(query) : '') };
}

export type PreparedBody = { ok: true; request?: Extract<UpstreamRequest, { ok: true }> } | ({ ok: false } & Refusal);

/**
 * Stage 2: the body to send upstream. A POST's body is parsed and the run's generation settings and truncation
 * applied (gateway/request-body.ts); a GET sends none. `raw` is undefined when the body was over the limit.
 */
export function preparedBody(
  method: string,
  endpoint: Endpoint,
  raw: Buffer | undefined,
  settings: { generation: GenerationSettings; truncate?: Truncate; maxBodyBytes: number },
): PreparedBody {
  if (raw === undefined) return { ok: false, status: 413, message: `request body over ${settings.maxBodyBytes} bytes`, type: 'request_too_large' };
  if (method !== 'POST') return { ok: true };
  const prepared = upstreamRequest(endpoint, raw, settings.generation, settings.truncate);
  if (!prepared.ok) return { ok: false, status: 400, message: prepared.message, type: 'invalid_request_error' };
  return { ok: true, request: prepared };
}

/** What to do with an upstream answer: retry it (after `waitMs`, or the backoff), and how the run's limit learns from it. */
export interface AnswerVerdict {
  retry: boolean;
  /** The upstream asked for less (a 429, or a retryable answer with Retry-After): the limit backs off. */
  throttle: boolean;
  /** An answer under 500 that is no 429: the limit may grow. */
  succeeded: boolean;
  /** Counted as a throttled call (a 429). */
  throttled: boolean;
}

/** Stage 3: a 429 or 5xx is retried while retries are left; the rest is relayed. */
export function answerVerdict(status: number, retryAfter: string | undefined, retries: number, maxRetries: number): AnswerVerdict {
  const retryable = status === 429 || status >= 500;
  const throttle = status === 429 || (retryable && retryAfter !== undefined);
  return { retry: retryable && retries < maxRetries, throttle, succeeded: !throttle && status < 500, throttled: status === 429 };
}

/** What relaying an answer learned: the bytes the job got, their usage and thinking, and the transcript's answer. */
export interface Relayed {
  forwarded: Buffer;
  usage?: TokenUsage;
  ttftMs?: number;
  endedInThinking: number;
  /** The answer as the transcript records it (computed only when asked: there may be no transcript). */
  answer(): unknown;
}

/** Stage 4a: a whole (not streamed) answer: its usage read and, asked to, its thinking stripped. */
export function relayWhole(status: number, body: Buffer, stripThinking: boolean): Relayed {
  if (status < 200 || status >= 300) return { forwarded: body, endedInThinking: 0, answer: () => transcriptBody(body) };
  const parsed = parsedBody(body);
  const thinking = wholeAnswerThinking(parsed, stripThinking);
  const forwarded = thinking.changed ? Buffer.from(JSON.stringify(parsed)) : body;
  return {
    forwarded,
    usage: parsed === undefined ? undefined : usageOf(parsed),
    endedInThinking: thinking.endedInThinking,
    answer: () => (parsed !== undefined ? parsed : transcriptBody(forwarded)),
  };
}

/**
 * Stage 4b: a streamed answer, relayed event by event as it comes (the usage-only event the gateway asked for
 * dropped, thinking stripped when asked), its first token timed from `startedAt`; reassembled for the transcript
 * only when `assemble` (a transcript is kept).
 */
export async function relayStream(
  stream: AsyncIterable<unknown> | Iterable<unknown>,
  out: Writable,
  startedAt: number,
  edits: { dropUsageEvent: boolean; stripThinking: boolean },
  assemble: boolean,
): Promise<Relayed> {
  const assembler = assemble ? new StreamAssembler() : undefined;
  const observer = new StreamObserver(startedAt, edits, assembler);
  const sent: Buffer[] = [];
  for await (const chunk of stream) {
    const piece = observer.feed(chunk as Buffer);
    if (piece.length) {
      sent.push(piece);
      out.write(piece);
    }
  }
  const rest = observer.end();
  sent.push(rest);
  out.end(rest);
  return {
    forwarded: Buffer.concat(sent),
    usage: observer.usage,
    ttftMs: observer.firstTokenAt,
    endedInThinking: observer.endedInThinking,
    answer: () => assembler?.answer(),
  };
}

/** Stage 5: the transcript line of a call that ended: what was sent and answered, its status, latency and usage. */
export function transcriptLine(
  call: { seq: number; at: Date; instance?: string; path: string; sent?: Buffer },
  sample: UsageSample,
  exchange: { response?: unknown; error?: string } = {},
): TranscriptCall {
  return {
    seq: call.seq,
    at: call.at.toISOString(),
    ...(call.instance !== undefined ? { instance: call.instance } : {}),
    path: call.path,
    status: sample.status,
    latency_ms: Math.round(sample.latencyMs * 1000) / 1000,
    ...(sample.cache === 'hit' ? { cache: 'hit' as const } : {}),
    ...(call.sent ? { request: transcriptBody(call.sent) } : {}),
    ...(exchange.response !== undefined ? { response: exchange.response } : {}),
    ...(sample.status >= 200 && sample.status < 300
      ? {
          usage: {
            prompt_tokens: sample.promptTokens,
            completion_tokens: sample.completionTokens,
            ...(sample.reasoningTokens !== undefined ? { reasoning_tokens: sample.reasoningTokens } : {}),
            cost: sample.cost,
          },
        }
      : {}),
    ...(exchange.error !== undefined ? { error: exchange.error } : {}),
  };
}

function parsedBody(text: Buffer): unknown {
  try {
    return JSON.parse(text.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

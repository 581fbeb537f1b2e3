// What the upstream receives for a client's POST body: the client's exact bytes, unless the run's
// generation settings, its prompt truncation or the gateway's own stream usage request change a field;
// then only those fields' text changes. Bodies that are not JSON objects are refused here, with the reason. Pure.

import { applyGeneration, isEmptyGeneration, type GenerationSettings } from '../runs/generation.js';
import type { Endpoint } from './gateway-routes.js';
import { applyJsonEdits, diffJsonObjects } from './json-text-edit.js';
import { truncateRequest, type Truncate } from './prompt-truncation.js';

export type UpstreamRequest =
  | {
      ok: true;
      /** The bytes to send upstream. */
      payload: Buffer;
      model: string;
      stream: boolean;
      /** The gateway asked for stream usage and the client did not: its usage-only event is dropped. */
      stripUsageEvent: boolean;
      /** The prompt was over the run's truncation limit and was middle-truncated. */
      truncated: boolean;
    }
  | { ok: false; message: string };

/** Endpoints whose settings the run's generation overrides apply to. */
const GENERATES: ReadonlySet<Endpoint> = new Set(['chat/completions', 'completions']);
/** Endpoints that report streamed usage only when asked (stream_options.include_usage). */
const USAGE_ON_REQUEST: ReadonlySet<Endpoint> = new Set(['chat/completions', 'completions']);

/** `truncate`: the run's prompt truncation (--truncation-tokens), when it has one. */
export function upstreamRequest(endpoint: Endpoint, raw: Buffer, generation: GenerationSettings, truncate?: Truncate): UpstreamRequest {
  const text = raw.toString('utf8');
  if (text.trim() === '') return { ok: false, message: `request body: expected a JSON object for /v1/${endpoint}, got an empty body` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `request body is not valid JSON: ${(error as Error).message}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return {
      ok: false,
      message: `request body: expected a JSON object for /v1/${endpoint}, got ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`}`,
    };
  }
  const body = parsed as Record<string, unknown>;
  let sent = GENERATES.has(endpoint) && !isEmptyGeneration(generation) ? applyGeneration(body, generation) : body;
  const cut = truncate && GENERATES.has(endpoint) ? truncateRequest(endpoint, sent, truncate) : undefined;
  if (cut) sent = cut;
  const stream = sent.stream === true;
  const options = isObject(sent.stream_options) ? sent.stream_options : undefined;
  const clientWantsUsage = options?.include_usage === true;
  // Usage for every streamed call: the client gets it only if it asked.
  if (stream && USAGE_ON_REQUEST.has(endpoint) && !clientWantsUsage) sent = { ...sent, stream_options: { ...options, include_usage: true } };
  const edits = sent === body ? [] : diffJsonObjects(body, sent);
  return {
    ok: true,
    payload: edits.length === 0 ? raw : Buffer.from(applyJsonEdits(text, edits)),
    model: typeof sent.model === 'string' ? sent.model : '',
    stream,
    stripUsageEvent: stream && USAGE_ON_REQUEST.has(endpoint) && !clientWantsUsage,
    truncated: cut !== undefined,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

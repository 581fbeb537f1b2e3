// `br export <run> --format atif`, its pure part: each instance's model calls in its job's transcript as the steps
// of one Harbor ATIF trajectory take them (benchmarks/harbor/export_atif.py builds the trajectory with Harbor's
// own models). A harness sends the conversation so far with each call: each call contributes only what its request
// added to the previous call's messages and answer, then its own answer. A request that does not continue the
// previous one (a new conversation, a history the harness summarized or rewrote) contributes all its messages.

import type { TranscriptCall } from '../gateway/transcript.js';
import { answerMessages, chatTurn, newMessages, textOf, type Message } from '../gateway/transcript-chat.js';

/** A chat message as export_atif.py takes it: its text (as `br transcripts` shows it), its tool calls' arguments as objects. */
export interface AtifMessage {
  role: string;
  text: string;
  reasoning?: string;
  tool_calls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
  /** For a tool result: the call it answers. */
  tool_call_id?: string;
}

/** One model call as export_atif.py takes it. */
export interface AtifCall {
  seq: number;
  /** ISO time the request went upstream (the call's end less its latency). */
  sent_at: string;
  /** ISO time the answer came back. */
  at: string;
  /** The model the answer names, when it names one. */
  model?: string;
  /** The request's messages the conversation did not hold yet, in order. */
  asked: AtifMessage[];
  /** The answer's first message; null when the response held none. */
  answer: AtifMessage | null;
  usage: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number; reasoning_tokens?: number; cost_usd?: number };
  latency_ms: number;
  /** Answered from the gateway's cache. */
  cache?: 'hit';
}

/** Tool-call arguments as ATIF takes them, an object: what the model wrote under `raw` when it is not a JSON object. */
export function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text || '{}') as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
  } catch {
    return { raw: text };
  }
}

export function atifMessage(message: Message): AtifMessage {
  const turn = chatTurn(message);
  const reasoning = turn.reasoning ?? (typeof message.reasoning === 'string' && message.reasoning ? message.reasoning : undefined);
  return {
    role: turn.role,
    text: turn.text,
    ...(reasoning ? { reasoning } : {}),
    tool_calls: turn.toolCalls.map((call, n) => ({ id: call.id ?? `call-${n}`, name: call.name, arguments: argumentsObject(call.arguments) })),
    ...(turn.toolCallId ? { tool_call_id: turn.toolCallId } : {}),
  };
}

function messagesOf(request: unknown): Message[] | undefined {
  const messages = (request as { messages?: unknown } | null | undefined)?.messages;
  return Array.isArray(messages) ? messages.filter((m): m is Message => typeof m === 'object' && m !== null) : undefined;
}

/** Arguments as the model meant them: a harness that sends an answer back may re-serialize its JSON. */
function argumentsKey(value: unknown): string {
  if (typeof value !== 'string') return JSON.stringify(value ?? null);
  try {
    return JSON.stringify(JSON.parse(value));
  } catch {
    return value;
  }
}

/**
 * What a message says, whatever a client adds or drops when it sends an answer back (`refusal: null`,
 * `annotations`, content as a string or as parts).
 */
function messageKey(message: Message): string {
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Array<{ id?: unknown; function?: { name?: unknown; arguments?: unknown } }>) : [];
  return JSON.stringify([
    message.role,
    textOf(message.content),
    calls.map((call) => [call?.id ?? null, call?.function?.name ?? null, argumentsKey(call?.function?.arguments)]),
    message.tool_call_id ?? null,
  ]);
}

function continues(context: Message[], messages: Message[]): boolean {
  return messages.length >= context.length && context.every((message, i) => messageKey(message) === messageKey(messages[i]!));
}

function usageOf(call: TranscriptCall): AtifCall['usage'] {
  const answered = (
    call.response as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } } } | null
  )?.usage;
  const prompt = call.usage?.prompt_tokens ?? answered?.prompt_tokens;
  const completion = call.usage?.completion_tokens ?? answered?.completion_tokens;
  const cached = answered?.prompt_tokens_details?.cached_tokens;
  const cost = call.usage?.cost;
  return {
    ...(typeof prompt === 'number' ? { prompt_tokens: prompt } : {}),
    ...(typeof completion === 'number' ? { completion_tokens: completion } : {}),
    ...(typeof cached === 'number' ? { cached_tokens: cached } : {}),
    ...(call.usage?.reasoning_tokens !== undefined ? { reasoning_tokens: call.usage.reasoning_tokens } : {}),
    // The gateway writes 0 for a call it has no price for: only a known cost is a cost.
    ...(typeof cost === 'number' && cost > 0 ? { cost_usd: cost } : {}),
  };
}

/** An instance's calls (answered ones, in the transcript's order) as trajectory input. */
export function atifCalls(calls: TranscriptCall[]): AtifCall[] {
  let context: Message[] = [];
  return calls.map((call) => {
    const messages = messagesOf(call.request);
    const asked = messages ? (continues(context, messages) ? messages.slice(context.length) : messages) : newMessages(call.request);
    const answer = answerMessages(call.response)[0] ?? null;
    context = messages ? [...messages, ...(answer ? [answer] : [])] : [];
    const model = (call.response as { model?: unknown } | null)?.model;
    const end = Date.parse(call.at);
    return {
      seq: call.seq,
      sent_at: Number.isFinite(end) ? new Date(end - (call.latency_ms ?? 0)).toISOString() : call.at,
      at: call.at,
      ...(typeof model === 'string' && model ? { model } : {}),
      asked: asked.map(atifMessage),
      answer: answer ? atifMessage(answer) : null,
      usage: usageOf(call),
      latency_ms: call.latency_ms,
      ...(call.cache ? { cache: call.cache } : {}),
    };
  });
}

/** The tools the instance's last call that offered any offered (OpenAI function definitions). */
export function toolDefinitions(calls: TranscriptCall[]): unknown[] | undefined {
  for (const call of [...calls].reverse()) {
    const tools = (call.request as { tools?: unknown } | null | undefined)?.tools;
    if (Array.isArray(tools) && tools.length > 0) return tools as unknown[];
  }
  return undefined;
}

/** A task name or instance id as one directory name: `/` as `.` (as the Inspect export names its logs), nothing that climbs. */
export function pathSegment(name: string): string {
  const safe = name.replace(/[/\\]/g, '.').replace(/[^\w.@+=-]/g, '_');
  return safe === '' || /^\.+$/.test(safe) ? `_${safe}` : safe;
}

/**
 * Where an instance's trajectory goes under the export directory: `<task>/<instance>/trajectory.json`; a run with
 * repeats puts each repeat in a directory of its own, `<task>/repeat-<r>/<instance>/trajectory.json`.
 */
export function trajectoryPath(task: string, instance: string, repeat: number | undefined): string {
  return [pathSegment(task), ...(repeat !== undefined ? [`repeat-${repeat}`] : []), pathSegment(instance), 'trajectory.json'].join('/');
}

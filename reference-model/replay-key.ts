// The stable key of a model request in a replay answers file: a sha256 over the request's messages
// (or a completion's prompt) in a canonical form, so that the same conversation hashes the same
// whatever client serialized it (key order, spacing inside tool-call arguments, null contents).

import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth: one text per value. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Tool-call arguments that are JSON are compared as JSON, not as the client happened to space them. */
function canonicalArguments(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return canonicalJson(JSON.parse(text));
  } catch {
    return text;
  }
}

function normalizeToolCall(call: unknown): unknown {
  if (typeof call !== 'object' || call === null) return call;
  const { id, type, function: fn } = call as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
  return { id, type: type ?? 'function', function: fn ? { name: fn.name, arguments: canonicalArguments(fn.arguments) } : undefined };
}

/** The fields that make a message what it is; empty contents (null, "") read as absent. */
export function normalizeMessage(message: unknown): unknown {
  if (typeof message !== 'object' || message === null) return message;
  const m = message as Record<string, unknown>;
  const toolCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0 ? m.tool_calls.map(normalizeToolCall) : undefined;
  return {
    role: m.role,
    content: m.content === null || m.content === '' ? undefined : m.content,
    name: m.name ?? undefined,
    tool_calls: toolCalls,
    tool_call_id: m.tool_call_id ?? undefined,
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export function messagesKey(messages: readonly unknown[]): string {
  return sha256(canonicalJson({ messages: messages.map(normalizeMessage) }));
}

export function promptKey(prompt: string): string {
  return sha256(canonicalJson({ prompt }));
}

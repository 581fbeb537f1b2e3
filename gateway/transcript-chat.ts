// A transcript read as a conversation: each call's new messages (what the harness added since the
// model's last answer) and the model's answer, with tool calls and tool results as their own turns.
// Pure; `br transcripts` prints it as text and the dashboard's transcript page as a chat.

import type { TranscriptCall, TranscriptLine } from './transcript.js';

export type Message = Record<string, unknown>;

export interface ChatToolCall {
  id?: string;
  name: string;
  arguments: string;
}

/** One turn as a chat shows it: who, what they said (and thought), the tools they called. */
export interface ChatTurn {
  role: string;
  text: string;
  reasoning?: string;
  toolCalls: ChatToolCall[];
  /** For a tool result: the call it answers. */
  toolCallId?: string;
}

/** Transcript lines from the file's text; a half-written or foreign line is counted, not thrown. */
export function parseTranscript(text: string): { lines: TranscriptLine[]; unreadable: number } {
  const lines: TranscriptLine[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const value = JSON.parse(line) as TranscriptLine | null;
      if (typeof value === 'object' && value !== null) lines.push(value);
      else unreadable += 1;
    } catch {
      unreadable += 1; // half a line a killed worker left
    }
  }
  return { lines, unreadable };
}

export function isCall(line: TranscriptLine): line is TranscriptCall {
  return 'seq' in line;
}

/**
 * One instance's calls, all lines without one. The line that ends a capped transcript stays: the instance's
 * later calls may be among those the cap left out, and whoever reads it must know.
 */
export function linesOfInstance(lines: TranscriptLine[], instance: string | undefined): TranscriptLine[] {
  return instance === undefined ? lines : lines.filter((line) => !isCall(line) || line.instance === instance);
}

/** The request's messages after its last assistant turn (all of them on a first call); a completion's prompt. */
export function newMessages(request: unknown): Message[] {
  if (typeof request !== 'object' || request === null) return request === undefined ? [] : [{ role: 'request', content: request }];
  const body = request as Record<string, unknown>;
  if (Array.isArray(body.messages)) {
    const messages = (body.messages as unknown[]).filter((m): m is Message => typeof m === 'object' && m !== null);
    const lastAnswer = messages.map((m) => m?.role).lastIndexOf('assistant');
    return messages.slice(lastAnswer + 1);
  }
  if (body.prompt !== undefined) return [{ role: 'prompt', content: body.prompt }];
  if (body.input !== undefined) return [{ role: 'input', content: body.input }];
  return [];
}

/** The answer's messages: a chat completion's choices, a completion's text, else the body as it is. */
export function answerMessages(response: unknown): Message[] {
  if (typeof response !== 'object' || response === null) return response === undefined ? [] : [{ role: 'answer', content: response }];
  const choices = (response as { choices?: unknown }).choices;
  if (!Array.isArray(choices)) return [{ role: 'answer', content: response }];
  return (choices as unknown[])
    .filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null)
    .map((choice) => (typeof choice.message === 'object' && choice.message !== null ? (choice.message as Message) : { role: 'answer', content: choice.text }));
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : JSON.stringify(part))).join('\n');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

export function chatTurn(message: Message): ChatTurn {
  const toolCalls = Array.isArray(message.tool_calls)
    ? (message.tool_calls as Array<{ id?: string; function?: { name?: string; arguments?: unknown } } | null>).flatMap((call) =>
        call ? [{ ...(call.id ? { id: call.id } : {}), name: call.function?.name ?? '?', arguments: textOf(call.function?.arguments) }] : [],
      )
    : [];
  return {
    role: typeof message.role === 'string' ? message.role : 'message',
    text: textOf(message.content),
    ...(typeof message.reasoning_content === 'string' && message.reasoning_content ? { reasoning: message.reasoning_content } : {}),
    toolCalls,
    ...(typeof message.tool_call_id === 'string' ? { toolCallId: message.tool_call_id } : {}),
  };
}

/** One call as turns: what was new in its request, then its answer. */
export function callTurns(call: TranscriptCall): { asked: ChatTurn[]; answered: ChatTurn[] } {
  return { asked: newMessages(call.request).map(chatTurn), answered: answerMessages(call.response).map(chatTurn) };
}

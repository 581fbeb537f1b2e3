// A replay answers file: JSON Lines, one canned completion per line, keyed by the request it
// answers (its `messages` or `prompt`, or the `key` `br replay-model` printed for an unknown request),
// or scripted: by a text the conversation's first user message contains and the turn (how many answers
// the model has given in it), for agents whose observations differ from run to run (a container's
// hostname in a shell prompt, a timestamp). Every bad line is reported with its line number, all at once.

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { fieldPath, InputError, type Problem } from '../contract/problems.js';
import { messagesKey, promptKey } from './replay-key.js';

const ToolCallSchema = z.strictObject({
  id: z.string().min(1).optional(),
  type: z.literal('function').optional(),
  function: z.strictObject({
    name: z.string().min(1),
    // Written as an object for readability, or as the string the model would send.
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
  }),
});

const AnswerLineSchema = z
  .strictObject({
    key: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected a 64-character sha256 hex key')
      .optional(),
    messages: z.array(z.record(z.string(), z.unknown())).min(1).optional(),
    prompt: z.string().optional(),
    match: z.string().min(1).optional(),
    turn: z.number().int().nonnegative().optional(),
    content: z.string().nullable().optional(),
    tool_calls: z.array(ToolCallSchema).min(1).optional(),
    finish_reason: z.string().min(1).optional(),
    usage: z.strictObject({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).optional(),
  })
  .refine((line) => [line.key, line.messages, line.prompt, line.match].filter((v) => v !== undefined).length === 1, {
    message: 'expected exactly one of "key", "messages", "prompt" or "match" to say which request this answers',
  })
  .refine((line) => (line.match === undefined) === (line.turn === undefined), {
    message: 'expected "match" and "turn" together: the text the first user message contains, and how many answers came before',
  })
  .refine((line) => line.content != null || line.tool_calls !== undefined, { message: 'expected "content" or "tool_calls": the answer itself' });

export interface ToolCall {
  id?: string;
  name: string;
  /** As the model sends it: a JSON string. */
  arguments: string;
}

export interface ReplayAnswer {
  key: string;
  /** 1-based line of the answers file, for error messages and `--misses` bookkeeping. */
  line: number;
  content: string | null;
  toolCalls: ToolCall[];
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/** A scripted answer: for a conversation whose first user message contains `match`, at its `turn`. */
export interface ScriptedAnswer extends ReplayAnswer {
  match: string;
  turn: number;
}

export interface ReplayAnswers {
  byKey: Map<string, ReplayAnswer>;
  scripted: ScriptedAnswer[];
}

/**
 * The answer to a chat request: the one keyed by its messages, else the scripted one for its first user
 * message and turn (the number of assistant messages it holds), else none.
 */
export function findChatAnswer(answers: ReplayAnswers, key: string, messages: readonly unknown[]): ReplayAnswer | undefined {
  const keyed = answers.byKey.get(key);
  if (keyed || answers.scripted.length === 0) return keyed;
  const roleOf = (m: unknown) => (typeof m === 'object' && m !== null ? (m as { role?: unknown }).role : undefined);
  const first = messages.find((m) => roleOf(m) === 'user') as { content?: unknown } | undefined;
  const text = typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content ?? '');
  const turn = messages.filter((m) => roleOf(m) === 'assistant').length;
  return answers.scripted.find((answer) => answer.turn === turn && text.includes(answer.match));
}

export function parseAnswers(text: string, file: string): ReplayAnswers {
  const answers = new Map<string, ReplayAnswer>();
  const scripted: ScriptedAnswer[] = [];
  const problems: Problem[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch (error) {
      problems.push({ file, field: `line ${line}`, message: `not valid JSON: ${(error as Error).message}` });
      return;
    }
    const parsed = AnswerLineSchema.safeParse(data);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        problems.push({ file, field: `line ${line}${issue.path.length ? ` ${fieldPath(issue.path)}` : ''}`, message: issue.message });
      return;
    }
    const entry = parsed.data;
    if (entry.match !== undefined) {
      const earlier = scripted.find((answer) => answer.match === entry.match && answer.turn === entry.turn);
      if (earlier) {
        problems.push({ file, field: `line ${line}`, message: `answers the same match and turn as line ${earlier.line}` });
        return;
      }
      scripted.push({ ...answerOf(entry, `script:${line}`, line), match: entry.match, turn: entry.turn! });
      return;
    }
    const key = entry.key ?? (entry.messages ? messagesKey(entry.messages) : promptKey(entry.prompt!));
    const earlier = answers.get(key);
    if (earlier) {
      problems.push({ file, field: `line ${line}`, message: `answers the same request as line ${earlier.line} (key ${key})` });
      return;
    }
    answers.set(key, answerOf(entry, key, line));
  });
  if (problems.length > 0) throw new InputError(problems);
  return { byKey: answers, scripted };
}

function answerOf(entry: z.infer<typeof AnswerLineSchema>, key: string, line: number): ReplayAnswer {
  return {
    key,
    line,
    content: entry.content ?? null,
    toolCalls: (entry.tool_calls ?? []).map((call) => ({
      ...(call.id ? { id: call.id } : {}),
      name: call.function.name,
      arguments: typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments),
    })),
    ...(entry.finish_reason ? { finishReason: entry.finish_reason } : {}),
    ...(entry.usage ? { usage: entry.usage } : {}),
  };
}

export function loadAnswers(file: string): ReplayAnswers {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError([{ file, field: '', message: `cannot read the answers file: ${(error as NodeJS.ErrnoException).code ?? String(error)}` }]);
  }
  return parseAnswers(text, file);
}

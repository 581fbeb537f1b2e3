// A streamed answer put back together as the whole answer it stands for, for the transcript: chat
// chunks into one chat.completion (text, reasoning_content and tool calls joined per choice), text
// completion chunks into one text_completion, and a Responses API stream into its completed response.
// Pure.

interface ChoiceParts {
  role?: string;
  content: string;
  reasoning: string;
  text: string;
  toolCalls: Map<number, { id?: string; type?: string; name: string; arguments: string }>;
  finish_reason?: unknown;
  chat: boolean;
}

export class StreamAssembler {
  private readonly choices = new Map<number, ChoiceParts>();
  private head: Record<string, unknown> = {};
  private usage: unknown;
  private completed: unknown;

  /** Takes one parsed event of the stream. */
  add(event: unknown): void {
    if (typeof event !== 'object' || event === null) return;
    const e = event as Record<string, unknown>;
    if (e.type === 'response.completed') this.completed = e.response;
    if (e.usage) this.usage = e.usage;
    if (!Array.isArray(e.choices)) return;
    if (e.id !== undefined) this.head = { id: e.id, model: e.model };
    for (const choice of e.choices as Array<Record<string, unknown>>) {
      if (typeof choice !== 'object' || choice === null) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      let parts = this.choices.get(index);
      if (!parts) this.choices.set(index, (parts = { content: '', reasoning: '', text: '', toolCalls: new Map(), chat: false }));
      if (choice.finish_reason) parts.finish_reason = choice.finish_reason;
      if (typeof choice.text === 'string') parts.text += choice.text;
      const delta = choice.delta as Record<string, unknown> | undefined;
      if (typeof delta !== 'object' || delta === null) continue;
      parts.chat = true;
      if (typeof delta.role === 'string') parts.role = delta.role;
      if (typeof delta.content === 'string') parts.content += delta.content;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string') parts.reasoning += reasoning;
      if (Array.isArray(delta.tool_calls))
        for (const call of delta.tool_calls as Array<Record<string, unknown>>) {
          if (typeof call !== 'object' || call === null) continue;
          const at = typeof call.index === 'number' ? call.index : parts.toolCalls.size;
          const known = parts.toolCalls.get(at) ?? { name: '', arguments: '' };
          const fn = (call.function ?? {}) as Record<string, unknown>;
          if (typeof call.id === 'string') known.id = call.id;
          if (typeof call.type === 'string') known.type = call.type;
          if (typeof fn.name === 'string') known.name += fn.name;
          if (typeof fn.arguments === 'string') known.arguments += fn.arguments;
          parts.toolCalls.set(at, known);
        }
    }
  }

  /** The whole answer the events made; undefined when they held none. */
  answer(): unknown {
    if (this.completed !== undefined) return this.completed;
    if (this.choices.size === 0) return this.usage ? { usage: this.usage } : undefined;
    const choices = [...this.choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, parts]) =>
        parts.chat
          ? { index, message: messageOf(parts), finish_reason: parts.finish_reason ?? null }
          : { index, text: parts.text, finish_reason: parts.finish_reason ?? null },
      );
    const chat = [...this.choices.values()].some((parts) => parts.chat);
    return { ...this.head, object: chat ? 'chat.completion' : 'text_completion', choices, ...(this.usage ? { usage: this.usage } : {}) };
  }
}

function messageOf(parts: ChoiceParts): Record<string, unknown> {
  const toolCalls = [...parts.toolCalls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({ ...(call.id ? { id: call.id } : {}), type: call.type ?? 'function', function: { name: call.name, arguments: call.arguments } }));
  return {
    role: parts.role ?? 'assistant',
    content: parts.content,
    ...(parts.reasoning ? { reasoning_content: parts.reasoning } : {}),
    ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
  };
}

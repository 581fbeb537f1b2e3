// Watches a server-sent-event stream as it passes through the gateway: notes when the first token
// arrives (TTFT), the usage the upstream reports and answers that max_tokens cut off inside their
// thinking; drops the usage-only event when the gateway, not the client, asked for it, and with
// --strip-thinking removes the thinking from the answers' text. Bytes are forwarded as they came
// unless an event must change; text is decoded (with a streaming decoder) only to read them.

import type { StreamAssembler } from './stream-assembly.js';
import { SseSplitter, sseData } from './sse-splitter.js';
import { StreamedThinking } from './thinking.js';
import { carriesOutput, usageOf, type TokenUsage } from './usage-fields.js';

export interface StreamEdits {
  /** Drop the usage-only event (the gateway asked for it, not the client). */
  dropUsageEvent: boolean;
  /** Remove `<think>…</think>` from the answers' text (gateway/thinking.ts). */
  stripThinking: boolean;
}

interface ChoiceState {
  thinking: StreamedThinking;
  /** reasoning_content (or reasoning) deltas seen: a server that parses the thinking out of the text. */
  reasoned: boolean;
  texted: boolean;
  /** A chat answer (deltas), not a text completion. */
  chat: boolean;
}

export class StreamObserver {
  private readonly splitter = new SseSplitter();
  private readonly decoder = new TextDecoder('utf-8');
  private readonly choices = new Map<number, ChoiceState>();
  firstTokenAt?: number;
  usage?: TokenUsage;
  /** Answers (choices) that ended for length inside their thinking. */
  endedInThinking = 0;

  /** `assembler`, when given, is handed every event as the client gets it (the transcript's answer). */
  constructor(
    private readonly startedAt: number,
    private readonly edits: StreamEdits,
    private readonly assembler?: StreamAssembler,
  ) {}

  /** Takes upstream bytes; returns the bytes to forward now. */
  feed(chunk: Buffer): Buffer {
    const events = this.splitter.push(chunk);
    if (!this.edits.dropUsageEvent && !this.edits.stripThinking) {
      // Nothing will change: forward the chunk at once, even mid-event.
      for (const event of events) this.observe(event);
      return chunk;
    }
    const kept = events.map((event) => this.observe(event)).filter((event) => event !== undefined);
    return kept.length === 1 ? kept[0]! : Buffer.concat(kept);
  }

  /**
   * What is left when the upstream closes: an unfinished event, read like the others, and, when stripping,
   * the text still held for answers that never finished (a stream cut short), in an event of their own.
   */
  end(): Buffer {
    const rest = this.splitter.end();
    const out = rest.length ? this.observe(rest) : undefined;
    // Without edits, these bytes went out with their chunk already.
    if (!this.edits.dropUsageEvent && !this.edits.stripThinking) return Buffer.alloc(0);
    const held = [...this.choices.entries()]
      .map(([index, state]) => ({ index, state, text: state.thinking.end() }))
      .filter(({ text }) => text)
      .map(({ index, state, text }) => ({ index, ...(state.chat ? { delta: { content: text } } : { text }), finish_reason: null }));
    this.choices.clear();
    const released = held.length ? Buffer.from(`data: ${JSON.stringify({ choices: held })}\n\n`) : Buffer.alloc(0);
    return Buffer.concat([out ?? Buffer.alloc(0), released]);
  }

  /** Reads one event; returns the bytes to forward for it (undefined: none). */
  private observe(event: Buffer): Buffer | undefined {
    const data = sseData(this.decoder.decode(event, { stream: true }));
    if (data === undefined || data === '[DONE]') return event;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return event;
    }
    if (this.firstTokenAt === undefined && carriesOutput(parsed)) this.firstTokenAt = performance.now() - this.startedAt;
    const changed = this.watchThinking(parsed);
    this.assembler?.add(parsed);
    const usage = usageOf(parsed);
    if (usage) {
      this.usage = usage;
      // The usage-only chunk OpenAI sends for stream_options.include_usage has no choices.
      const choices = (parsed as { choices?: unknown }).choices;
      if (this.edits.dropUsageEvent && (parsed as { usage?: unknown }).usage && (!Array.isArray(choices) || choices.length === 0)) return undefined;
    }
    return changed ? Buffer.from(`data: ${JSON.stringify(parsed)}\n\n`) : event;
  }

  /** Follows each choice's text (chat `delta.content`, completion `text`); when stripping, edits it in place. True when it did. */
  private watchThinking(event: unknown): boolean {
    if (typeof event !== 'object' || event === null) return false;
    const choices = (event as { choices?: unknown }).choices;
    if (!Array.isArray(choices)) return false;
    let changed = false;
    for (const choice of choices as Array<Record<string, unknown>>) {
      if (typeof choice !== 'object' || choice === null) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      let state = this.choices.get(index);
      if (!state) this.choices.set(index, (state = { thinking: new StreamedThinking(this.edits.stripThinking), reasoned: false, texted: false, chat: false }));
      const delta = typeof choice.delta === 'object' && choice.delta !== null ? (choice.delta as Record<string, unknown>) : undefined;
      if (delta) state.chat = true;
      // A chat answer's finishing chunk may come without a delta: what is released goes into a new one.
      const holder = delta ?? (state.chat ? ((choice.delta = {}) as Record<string, unknown>) : choice);
      const field = state.chat ? 'content' : 'text';
      if (delta && (nonEmpty(delta.reasoning_content) || nonEmpty(delta.reasoning))) state.reasoned = true;
      const text = holder[field];
      let out = typeof text === 'string' ? state.thinking.feed(text) : undefined;
      if (typeof text === 'string' && text.trim()) state.texted = true;
      const finish = choice.finish_reason;
      if (typeof finish === 'string' && finish) {
        if (finish === 'length' && (state.thinking.inThinking || (state.reasoned && !state.texted))) this.endedInThinking += 1;
        const rest = state.thinking.end();
        if (rest) out = (out ?? '') + rest;
        this.choices.delete(index);
      }
      if (this.edits.stripThinking && out !== undefined && out !== text) {
        holder[field] = out;
        changed = true;
      }
    }
    return changed;
  }
}

function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

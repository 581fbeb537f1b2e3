// Watches a server-sent-event stream as it passes through the gateway: notes when the first token
// arrives (TTFT) and the usage the upstream reports, and drops the usage-only event when the
// gateway, not the client, asked for it. Bytes are forwarded as they came; text is decoded (with a
// streaming decoder) only to read them.

import { SseSplitter, sseData } from './sse-splitter.js';
import { carriesOutput, usageOf, type TokenUsage } from './usage-fields.js';

export class StreamObserver {
  private readonly splitter = new SseSplitter();
  private readonly decoder = new TextDecoder('utf-8');
  firstTokenAt?: number;
  usage?: TokenUsage;

  constructor(
    private readonly startedAt: number,
    private readonly dropUsageEvent: boolean,
  ) {}

  /** Takes upstream bytes; returns the bytes to forward now. */
  feed(chunk: Buffer): Buffer {
    const events = this.splitter.push(chunk);
    if (!this.dropUsageEvent) {
      // Nothing will be dropped: forward the chunk at once, even mid-event.
      for (const event of events) this.observe(event);
      return chunk;
    }
    const kept = events.filter((event) => this.observe(event));
    return kept.length === 1 ? kept[0]! : Buffer.concat(kept);
  }

  /** What is left when the upstream closes: an unfinished event, read like the others. */
  end(): Buffer {
    const rest = this.splitter.end();
    if (rest.length === 0) return rest;
    const keep = this.observe(rest);
    // Without dropping, these bytes went out with their chunk already.
    return this.dropUsageEvent && keep ? rest : Buffer.alloc(0);
  }

  /** Reads one event; false when it must not be forwarded. */
  private observe(event: Buffer): boolean {
    const data = sseData(this.decoder.decode(event, { stream: true }));
    if (data === undefined || data === '[DONE]') return true;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return true;
    }
    if (this.firstTokenAt === undefined && carriesOutput(parsed)) this.firstTokenAt = performance.now() - this.startedAt;
    const usage = usageOf(parsed);
    if (!usage) return true;
    this.usage = usage;
    // The usage-only chunk OpenAI sends for stream_options.include_usage has no choices.
    const choices = (parsed as { choices?: unknown }).choices;
    return !(this.dropUsageEvent && (parsed as { usage?: unknown }).usage && (!Array.isArray(choices) || choices.length === 0));
  }
}

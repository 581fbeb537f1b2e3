// Watches an OpenAI-style server-sent-event stream as it passes through the gateway: notes when the
// first token arrives (TTFT) and the usage the upstream reports at the end, and drops that
// usage-only event when the gateway, not the client, asked for it.

export class StreamObserver {
  private pending = '';
  firstTokenAt?: number;
  usage?: { prompt_tokens?: number; completion_tokens?: number; cost?: number };

  constructor(
    private readonly startedAt: number,
    private readonly dropUsageEvent: boolean,
  ) {}

  /** Takes upstream bytes; returns the bytes to forward now (whole events only). */
  feed(chunk: Buffer): string {
    this.pending += chunk.toString('utf8');
    let out = '';
    let end: number;
    while ((end = this.pending.indexOf('\n\n')) >= 0) {
      const event = this.pending.slice(0, end + 2);
      this.pending = this.pending.slice(end + 2);
      if (this.observe(event)) out += event;
    }
    return out;
  }

  /** Whatever is left when the upstream closes. */
  end(): string {
    const rest = this.pending;
    this.pending = '';
    return rest;
  }

  /** Reads one event; false when it must not be forwarded. */
  private observe(event: string): boolean {
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .join('\n');
    if (!data || data === '[DONE]') return true;
    let parsed: { choices?: Array<{ delta?: { content?: string; reasoning_content?: string }; text?: string }>; usage?: StreamObserver['usage'] | null };
    try {
      parsed = JSON.parse(data);
    } catch {
      return true;
    }
    if (this.firstTokenAt === undefined && parsed.choices?.some((c) => c.delta?.content || c.delta?.reasoning_content || c.text)) {
      this.firstTokenAt = performance.now() - this.startedAt;
    }
    if (parsed.usage) {
      this.usage = parsed.usage;
      if (this.dropUsageEvent && (parsed.choices?.length ?? 0) === 0) return false;
    }
    return true;
  }
}

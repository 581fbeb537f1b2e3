// Reasoning models' thinking in answer text: `<think>…</think>` before the answer, or only the closing
// tag when the chat template opened it in the prompt. With --strip-thinking the gateway removes it
// before the harness sees the answer, whole or streamed; either way it notices an answer that
// max_tokens cut off inside its thinking. One rule for both forms:
//   - everything through the first `</think>` is thinking (and the whitespace after it);
//   - with no `</think>`, an answer that starts with `<think>` is all thinking (cut off inside it);
//   - any other answer has no thinking.
// Pure.

const OPEN = '<think>';
const CLOSE = '</think>';
const STARTS_THINKING = /^\s*<think>/;

/** A whole answer's text without its thinking. */
export function stripThinking(text: string): string {
  const close = text.indexOf(CLOSE);
  if (close >= 0) return text.slice(close + CLOSE.length).trimStart();
  return STARTS_THINKING.test(text) ? '' : text;
}

/** Whether a whole answer's text ends inside its thinking (opened, never closed). */
export function endsInThinking(text: string): boolean {
  return STARTS_THINKING.test(text) && !text.includes(CLOSE);
}

/**
 * The thinking of one streamed answer (one choice), piece by piece. Watches every answer for
 * `endsInThinking`; when stripping, holds the text back until its thinking has closed, then passes
 * what follows through as it comes. An answer with no `</think>` is released whole at its end (a
 * closing tag could have come at any moment), or dropped when it opened with `<think>`.
 */
export class StreamedThinking {
  /** The answer's text while it may still be thinking (only watching: its opening and a tail). */
  private held = '';
  /** Past the thinking: it has closed, or (only watching) the answer opened without it. */
  private settled = false;
  /** After the closing tag: whitespace is dropped until the answer's first other character. */
  private answerStarted = false;

  constructor(private readonly strip: boolean) {}

  /** Takes a piece of the answer's text; returns the text to forward now. */
  feed(piece: string): string {
    if (this.settled) return this.strip ? this.answerText(piece) : piece;
    this.held += piece;
    const close = this.held.indexOf(CLOSE);
    if (close >= 0) {
      this.settled = true;
      const rest = this.held.slice(close + CLOSE.length);
      this.held = '';
      return this.strip ? this.answerText(rest) : piece;
    }
    if (!this.strip) {
      // Only watching: an answer that does not open with <think> is decided; one that does keeps its
      // opening and a tail long enough to find a closing tag split across pieces.
      if (STARTS_THINKING.test(this.held)) this.held = OPEN + this.held.slice(-CLOSE.length);
      else if (this.held.trim().length >= OPEN.length) this.settled = true;
      return piece;
    }
    return '';
  }

  /** The end of the answer: what is still held, as the whole-answer rule has it. */
  end(): string {
    if (this.settled || !this.strip) return '';
    return stripThinking(this.held);
  }

  /** Whether the answer, ended now, ends inside its thinking. */
  get inThinking(): boolean {
    return !this.settled && STARTS_THINKING.test(this.held);
  }

  private answerText(piece: string): string {
    if (this.answerStarted) return piece;
    const text = piece.trimStart();
    if (text) this.answerStarted = true;
    return text;
  }
}

/**
 * A whole (not streamed) chat or text completion: counts its answers that max_tokens cut off inside their
 * thinking and, when stripping, removes the thinking from each answer's text in place. `changed` says
 * whether it did, so the body is written anew only then.
 */
export function wholeAnswerThinking(answer: unknown, strip: boolean): { endedInThinking: number; changed: boolean } {
  const choices = (answer as { choices?: unknown } | null)?.choices;
  let endedInThinking = 0;
  let changed = false;
  if (!Array.isArray(choices)) return { endedInThinking, changed };
  for (const choice of choices as Array<Record<string, unknown>>) {
    if (typeof choice !== 'object' || choice === null) continue;
    const message = typeof choice.message === 'object' && choice.message !== null ? (choice.message as Record<string, unknown>) : undefined;
    const holder = message ?? choice;
    const field = message ? 'content' : 'text';
    const text = typeof holder[field] === 'string' ? (holder[field] as string) : '';
    const reasoned = message !== undefined && [message.reasoning_content, message.reasoning].some((r) => typeof r === 'string' && r.length > 0);
    if (choice.finish_reason === 'length' && (endsInThinking(text) || (reasoned && !text.trim()))) endedInThinking += 1;
    if (strip && typeof holder[field] === 'string') {
      const stripped = stripThinking(text);
      if (stripped !== text) {
        holder[field] = stripped;
        changed = true;
      }
    }
  }
  return { endedInThinking, changed };
}

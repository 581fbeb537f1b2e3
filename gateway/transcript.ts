// A job's transcript: every model call its harness made through the gateway, one JSON line per call as
// it ends (request as sent upstream, response with streams reassembled, usage, latency, status, the
// instance it was tagged with), appended to `transcript.jsonl` beside the job's log. Capped in calls and
// bytes, the cap's effect written as the last line; the upstream key and the job's token are replaced
// by `[redacted]` wherever they appear. `br transcripts` reads it back (cli/commands/transcripts.ts).

import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync, type WriteStream } from 'node:fs';
import path from 'node:path';

export interface TranscriptCall {
  seq: number;
  /** ISO time the call ended. */
  at: string;
  instance?: string;
  /** `/v1/chat/completions`, ... */
  path: string;
  status: number;
  latency_ms: number;
  cache?: 'hit';
  /** The body sent upstream (the run's generation settings applied), parsed; its text when it was not JSON. */
  request?: unknown;
  /** The answer, parsed; a stream reassembled into one answer; the text (cut at 64 KB) when it was not JSON. */
  response?: unknown;
  usage?: { prompt_tokens: number; completion_tokens: number; reasoning_tokens?: number; cost: number };
  error?: string;
}

/** The line that ends a capped transcript: what the cap left out. */
export interface TranscriptCap {
  capped: { reason: 'calls' | 'bytes'; limit: number; recorded_calls: number; note: string };
}

export type TranscriptLine = TranscriptCall | TranscriptCap;

export interface TranscriptLimits {
  maxCalls: number;
  maxBytes: number;
}

export const DEFAULT_TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024;
const TEXT_CAP = 64 * 1024;
const REDACTED = '[redacted]';

export class TranscriptWriter {
  private readonly stream: WriteStream;
  private bytes: number;
  private calls: number;
  private capped: boolean;
  private readonly secrets: string[];

  /** Opens (or, after a worker restart, reopens to append to) the job's transcript. */
  constructor(
    readonly file: string,
    private readonly limits: TranscriptLimits,
    secrets: string[],
  ) {
    // Short strings (an empty key, "EMPTY") would redact ordinary words: only real secrets are looked for.
    this.secrets = secrets.filter((s) => s.length >= 8);
    mkdirSync(path.dirname(file), { recursive: true });
    const existing = existsSync(file) ? readFileSync(file, 'utf8') : '';
    this.bytes = existsSync(file) ? statSync(file).size : 0;
    const lines = existing.split('\n').filter(Boolean);
    this.calls = lines.length;
    this.capped = lines.length > 0 && lines.at(-1)!.startsWith('{"capped"');
    this.stream = createWriteStream(file, { flags: 'a' });
    // A worker killed mid-write left half a line: the next one starts on a line of its own.
    if (existing && !existing.endsWith('\n')) this.stream.write('\n');
    // A write that fails (a full disk) must not end the worker: the transcript stops, the job goes on.
    this.stream.on('error', (error) => {
      this.capped = true;
      console.error(`model gateway: transcript ${file}: ${error.message}; no further calls are recorded`);
    });
  }

  write(call: TranscriptCall): void {
    if (this.capped) return;
    if (this.calls >= this.limits.maxCalls) return this.cap('calls', this.limits.maxCalls);
    const line = `${this.redact(JSON.stringify(call))}\n`;
    const size = Buffer.byteLength(line);
    if (this.bytes + size > this.limits.maxBytes) return this.cap('bytes', this.limits.maxBytes);
    this.bytes += size;
    this.calls += 1;
    this.stream.write(line);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }

  private cap(reason: 'calls' | 'bytes', limit: number): void {
    this.capped = true;
    const note = `transcript stopped at its ${reason === 'calls' ? `${limit} calls` : `${limit} bytes`}: later calls of this job are metered but not recorded`;
    const line: TranscriptCap = { capped: { reason, limit, recorded_calls: this.calls, note } };
    this.stream.write(`${JSON.stringify(line)}\n`);
  }

  private redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join(REDACTED);
    return out;
  }
}

/** A body for the transcript: parsed JSON, or its text cut at 64 KB. */
export function transcriptBody(bytes: Buffer | undefined): unknown {
  if (!bytes || bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text.length > TEXT_CAP ? `${text.slice(0, TEXT_CAP)}… (${bytes.length} bytes)` : text;
  }
}

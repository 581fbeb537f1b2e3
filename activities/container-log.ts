// A task container's output, kept as the job's container.log while the container runs: streamed
// from the daemon with backpressure and cut at a size cap, so the worker's memory stays flat and the
// file stays bounded whatever a task prints. Past the cap only the last bytes are kept, for the tail.
// The job's secrets (its keys and gateway tokens) are cut from it before a byte reaches the disk, a secret
// that arrives split over two reads included.

import { createWriteStream, type WriteStream } from 'node:fs';
import { Writable, type Readable } from 'node:stream';
import { dockerError, type DockerEngine } from './docker-engine.js';
import { redactBytes, secretBytes } from './redact-secrets.js';
import type { LogCapture, LogSummary } from './engines/engine.js';

export const LOG_CAP_BYTES = 16 * 1024 * 1024;
/** Output past the cap that is still kept: a failure's last lines are usually the ones that explain it. */
export const LOG_KEEP_LAST_BYTES = 64 * 1024;
/** Lines read back from the daemon for the kept end when the follower fell behind. */
export const LOG_TAIL_LINES = 500;

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(1)} MiB` : `${bytes} bytes`;
}

/**
 * Writes the first `capBytes` to the file, then only counts, keeping the last `keepLastBytes` in a
 * bounded buffer; on end, one line says how much was dropped and the kept end follows it.
 */
export class CappedLogWriter extends Writable {
  private written = 0;
  private endsWithNewline = true;
  private dropped = 0;
  /** Bytes past the cap written after the note, as the kept end. */
  private keptWritten = 0;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private readonly secrets: Buffer[];
  /** The end of what arrived, held back until the next read shows whether a secret starts in it. */
  private held: Buffer = Buffer.alloc(0);

  constructor(
    private readonly file: WriteStream,
    private readonly capBytes = LOG_CAP_BYTES,
    private readonly keepLastBytes = LOG_KEEP_LAST_BYTES,
    secrets: readonly string[] = [],
  ) {
    super({ highWaterMark: 1024 * 1024 });
    this.secrets = secretBytes(secrets);
    // Without a listener a file that cannot be opened or written (a full disk) would throw from the
    // event loop and take the worker down; the capture fails instead.
    file.on('error', (error) => this.destroy(error));
  }

  summary(): LogSummary {
    return { bytes: this.written + this.dropped + this.keptWritten, dropped: this.dropped };
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.take(this.redacted(chunk), done);
  }

  /**
   * `chunk` after what was held back, its secrets cut, less a new held-back end: the last bytes in which a secret
   * may start and go on in the next read (one byte short of the longest secret).
   */
  private redacted(chunk: Buffer): Buffer {
    if (this.secrets.length === 0) return chunk;
    const text = redactBytes(this.held.length ? Buffer.concat([this.held, chunk]) : chunk, this.secrets);
    const hold = Math.min(text.length, this.secrets[0]!.length - 1);
    this.held = Buffer.from(text.subarray(text.length - hold));
    return text.subarray(0, text.length - hold);
  }

  private take(chunk: Buffer, done: (error?: Error | null) => void): void {
    const room = Math.max(0, this.capBytes - this.written);
    const over = chunk.subarray(room);
    if (over.length > 0) this.keep(over);
    if (room === 0) return done();
    const head = chunk.subarray(0, room);
    this.written += head.length;
    this.endsWithNewline = head[head.length - 1] === 10;
    // Calling back only once the file took the bytes is what makes the source wait for the disk.
    this.file.write(head, (error) => done(error));
  }

  /**
   * Chunks that queued while the file was busy, written as one: a task printing fast arrives one line
   * per read, and one file write per line cost more than the rest of following its output.
   */
  override _writev(chunks: Array<{ chunk: Buffer }>, done: (error?: Error | null) => void): void {
    this.take(this.redacted(chunks.length === 1 ? chunks[0]!.chunk : Buffer.concat(chunks.map((c) => c.chunk))), done);
  }

  /** True once output went past the cap. */
  overCap(): boolean {
    return this.dropped > 0;
  }

  /** Replaces the kept end with `bytes` (the daemon's own last lines, which a lagging follower can miss). */
  useEnd(bytes: Buffer): void {
    if (bytes.length === 0) return;
    bytes = redactBytes(bytes, this.secrets);
    this.held = Buffer.alloc(0);
    this.kept = [bytes];
    this.keptBytes = bytes.length;
  }

  private keep(bytes: Buffer): void {
    this.dropped += bytes.length;
    this.kept.push(bytes);
    this.keptBytes += bytes.length;
    while (this.keptBytes - this.kept[0]!.length >= this.keepLastBytes) this.keptBytes -= this.kept.shift()!.length;
  }

  override _final(done: (error?: Error | null) => void): void {
    // What was held back is the output's end: no secret starts in it that does not end there too.
    if (this.held.length > 0) {
      const end = this.held;
      this.held = Buffer.alloc(0);
      this.take(end, (error) => (error ? done(error) : this._final(done)));
      return;
    }
    if (this.dropped > 0) {
      let last = Buffer.concat(this.kept);
      last = last.subarray(Math.max(0, last.length - this.keepLastBytes));
      // Start the kept end at a line boundary: a cut line would read as a real one.
      const newline = last.indexOf(10);
      if (newline >= 0 && newline < last.length - 1) last = last.subarray(newline + 1);
      this.dropped = Math.max(0, this.dropped - last.length);
      this.keptWritten = last.length;
      const lineStart = this.endsWithNewline ? '' : '\n';
      // "At least": a follower slower than the task misses what the daemon's own capped copy rotated away.
      this.file.write(
        `${lineStart}[benchrouter] output past the ${sizeText(this.capBytes)} log cap: at least ${sizeText(this.dropped)} dropped; the last ${sizeText(last.length)} follow\n`,
      );
      this.file.write(last);
      this.kept = [];
    }
    this.file.end(() => done());
  }

  /** A writer that errors or is destroyed closes its file: nothing else holds the descriptor. */
  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.file.destroy();
    done(error);
  }
}

/**
 * Follows a container's logs into `file` from the container's first line (a reattaching attempt
 * rewrites the file from the daemon's own copy, itself capped by the json-file log options).
 */
export async function captureContainerLog(
  docker: DockerEngine,
  containerId: string,
  file: string,
  secrets: readonly string[] = [],
  capBytes = LOG_CAP_BYTES,
): Promise<LogCapture> {
  const following = new AbortController();
  const source = await docker.followLogs(containerId, following.signal);
  const writer = new CappedLogWriter(createWriteStream(file), capBytes, LOG_KEEP_LAST_BYTES, secrets);
  docker.demux(source, writer);
  // demux ignores write()'s answer; pausing here is what keeps a fast task from filling memory.
  source.on('data', () => {
    if (!writer.writableNeedDrain || source.isPaused()) return;
    source.pause();
    writer.once('drain', () => source.resume());
  });
  return followInto(source, writer, following, {
    // Past the cap the daemon's json-file copy rotates under a lagging follower, which can miss the
    // newest lines; the kept end is read from the daemon's live file instead (when it still has it).
    beforeEnd: async () => {
      if (writer.overCap()) writer.useEnd(await docker.logTail(containerId, LOG_TAIL_LINES).catch(() => Buffer.alloc(0)));
    },
    // A daemon that goes away mid-stream leaves a bare "aborted": the failure (and the activity's retry) says what broke.
    failure: (error) => dockerError('container logs', error),
  });
}

/**
 * A log capture's life, whatever engine streams the output: the file completes once the stream ends or closes
 * (after `beforeEnd`, which may replace the kept end); a stream stopped on purpose (`stop()`, which aborts
 * `following`) ends it the same way; any other stream error destroys the writer and fails the capture with
 * `failure(error)`.
 */
export function followInto(
  source: Readable,
  writer: CappedLogWriter,
  following: AbortController,
  hooks: { beforeEnd: () => Promise<void>; failure: (error: Error) => Error },
): LogCapture {
  const finished = new Promise<LogSummary>((resolve, reject) => {
    let ended = false;
    const end = async () => {
      if (ended) return;
      ended = true;
      await hooks.beforeEnd().catch(reject);
      writer.end(() => resolve(writer.summary()));
    };
    source.once('end', () => void end());
    source.once('close', () => void end());
    source.once('error', (error: Error) => {
      if (following.signal.aborted) return void end();
      writer.destroy(error);
      reject(hooks.failure(error));
    });
    writer.once('error', reject);
  });
  // A stream that fails while the task runs is only awaited later (drained or stop): until then the
  // rejection is handled here, not reported as unhandled, which ends a Node process.
  finished.catch(() => undefined);
  return {
    finished,
    async stop() {
      following.abort();
      source.destroy();
      return finished;
    },
  };
}

// Docker's multiplexed log stream (8-byte header, then payload, per line) turned back into plain
// output, one chunk in, at most one chunk out: a task printing gigabytes costs one copy per chunk.

/** Header: stream type (0 stdin, 1 stdout, 2 stderr), 3 zero bytes, payload length (uint32 BE). */
const HEADER_BYTES = 8;

/**
 * Frames split anywhere across chunks are joined; stdout and stderr come out interleaved, as they
 * came. The daemon sends one frame per log line, so a chunk holds hundreds of them: the payloads of
 * one chunk are joined into one buffer rather than written one by one (docker-modem's demuxStream
 * copied the rest of its buffer per frame, and each payload it wrote kept that copy alive).
 * A stream that is not multiplexed (a TTY container) is passed through as it is, from the first bad header on.
 */
export class DockerLogFrames {
  /** Bytes of a header split across chunks. */
  private header = Buffer.alloc(HEADER_BYTES);
  private headerBytes = 0;
  /** Payload bytes of the current frame still to come. */
  private payloadLeft = 0;
  private raw = false;

  /** The plain output in `chunk` (possibly empty); the caller must not keep `chunk` for reuse. */
  push(chunk: Buffer): Buffer {
    if (this.raw) return chunk;
    const parts: Buffer[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.payloadLeft > 0) {
        const end = Math.min(chunk.length, at + this.payloadLeft);
        parts.push(chunk.subarray(at, end));
        this.payloadLeft -= end - at;
        at = end;
        continue;
      }
      const take = Math.min(HEADER_BYTES - this.headerBytes, chunk.length - at);
      chunk.copy(this.header, this.headerBytes, at, at + take);
      this.headerBytes += take;
      at += take;
      if (this.headerBytes < HEADER_BYTES) break;
      this.headerBytes = 0;
      const streamType = this.header[0]!;
      if (streamType > 2) {
        // Not a multiplexed stream (or it lost alignment): everything from here on is output as is.
        this.raw = true;
        parts.push(Buffer.from(this.header), chunk.subarray(at));
        break;
      }
      this.payloadLeft = this.header.readUInt32BE(4);
    }
    if (parts.length === 0) return Buffer.alloc(0);
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

// Server-sent events as the spec frames them: lines end with CRLF, LF or CR, and a blank line ends
// an event. The splitter works on bytes, so the events it hands back are the upstream's exact bytes
// (a UTF-8 character split across two writes is never cut: CR and LF never occur inside one).

const CR = 0x0d;
const LF = 0x0a;
const EMPTY = Buffer.alloc(0);

export class SseSplitter {
  private pending: Buffer = EMPTY;
  /** Where scanning resumes in `pending`, and where the current line starts there. */
  private scanFrom = 0;
  private lineStart = 0;

  /** Takes upstream bytes; returns the events they complete, each with its terminating blank line. */
  push(chunk: Buffer): Buffer[] {
    const data = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const events: Buffer[] = [];
    let eventStart = 0;
    let lineStart = this.lineStart;
    let i = this.scanFrom;
    for (; i < data.length; i++) {
      const byte = data[i];
      if (byte !== CR && byte !== LF) continue;
      // A CR as the last byte may be the first half of a CRLF: wait for the next chunk to tell.
      if (byte === CR && i + 1 === data.length) break;
      const lineEnd = byte === CR && data[i + 1] === LF ? i + 2 : i + 1;
      if (i === lineStart) {
        events.push(data.subarray(eventStart, lineEnd));
        eventStart = lineEnd;
      }
      lineStart = lineEnd;
      i = lineEnd - 1;
    }
    this.pending = data.subarray(eventStart);
    this.scanFrom = i - eventStart;
    this.lineStart = lineStart - eventStart;
    return events;
  }

  /** The bytes of an unfinished event when the stream ends (empty when it ended cleanly). */
  end(): Buffer {
    const rest = this.pending;
    this.pending = EMPTY;
    this.scanFrom = 0;
    this.lineStart = 0;
    return rest;
  }
}

/** The data of one event's text: its `data:` lines joined with LF, or undefined when it has none. */
export function sseData(event: string): string | undefined {
  let data: string | undefined;
  for (const line of event.split(/\r\n|\r|\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') continue;
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

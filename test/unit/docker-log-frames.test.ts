// Docker's multiplexed log stream back to plain output: frames split anywhere, stdout and stderr
// interleaved, a TTY stream passed through, and one output chunk per input chunk.

import { describe, expect, it } from 'vitest';
import { DockerLogFrames } from '../../activities/docker-log-frames.js';

/** One frame as the daemon sends it: type, three zero bytes, payload length, payload. */
function frame(streamType: number, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = streamType;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

function demuxInPieces(stream: Buffer, pieceBytes: number): { text: string; outputs: number } {
  const frames = new DockerLogFrames();
  const out: Buffer[] = [];
  for (let at = 0; at < stream.length; at += pieceBytes) out.push(frames.push(stream.subarray(at, at + pieceBytes)));
  return { text: Buffer.concat(out).toString(), outputs: out.length };
}

describe('DockerLogFrames', () => {
  const lines = Array.from({ length: 50 }, (_, i) => `2026-11-30T15:00:00.${String(i).padStart(9, '0')}Z line ${i} ${'x'.repeat(i * 7)}\n`);
  const stream = Buffer.concat(lines.map((line, i) => frame(i % 3 === 0 ? 2 : 1, line)));

  it('gives back stdout and stderr in the order they came, whatever size the chunks are cut to', () => {
    for (const piece of [1, 3, 7, 8, 9, 64, 1000, stream.length]) expect(demuxInPieces(stream, piece).text, `pieces of ${piece} bytes`).toBe(lines.join(''));
  });

  it('keeps an empty frame and a frame longer than a chunk', () => {
    const long = 'y'.repeat(100_000) + '\n';
    const input = Buffer.concat([frame(1, ''), frame(1, long), frame(2, 'after\n')]);
    expect(demuxInPieces(input, 4096).text).toBe(`${long}after\n`);
  });

  it('writes one buffer per chunk read, not one per frame', () => {
    const { outputs } = demuxInPieces(stream, stream.length);
    expect(outputs).toBe(1);
  });

  it('passes a stream that is not multiplexed (a TTY container) through as it is', () => {
    const tty = Buffer.from('plain output from a TTY container\nsecond line\n');
    expect(demuxInPieces(tty, 5).text).toBe(tty.toString());
  });

  it('passes the rest through from a header that is not one, after the frames before it', () => {
    const input = Buffer.concat([frame(1, 'framed\n'), Buffer.from('raw tail with no header\n')]);
    expect(demuxInPieces(input, 3).text).toBe('framed\nraw tail with no header\n');
  });
});

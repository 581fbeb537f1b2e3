// The pure parts of talking to the Docker engine: reading the multiplexed log stream, and naming the
// capabilities a host's bounding set lacks (which decides the DinD capabilities mode's CapDrop).

import { describe, expect, it } from 'vitest';
import { missingCapabilities } from '../../activities/dind-runtime.js';
import { demultiplex } from '../../activities/docker-engine.js';

const STDOUT = 1;
const STDERR = 2;

/** One frame of Docker's non-TTY log stream: [stream, 0, 0, 0, size (4 bytes BE)] + payload. */
function frame(stream: number, payload: string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(8);
  header.writeUInt8(stream, 0);
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

describe('demultiplex', () => {
  it('concatenates interleaved stdout and stderr frames in stream order, without headers', () => {
    const stream = Buffer.concat([
      frame(STDOUT, '2025-01-01T00:00:00Z out one\n'),
      frame(STDERR, '2025-01-01T00:00:01Z err one\n'),
      frame(STDOUT, '2025-01-01T00:00:02Z out two\n'),
      frame(STDERR, 'ünïcødé ✓\n'),
    ]);
    expect(demultiplex(stream).toString()).toBe('2025-01-01T00:00:00Z out one\n2025-01-01T00:00:01Z err one\n2025-01-01T00:00:02Z out two\nünïcødé ✓\n');
  });

  it('reads the frame size as a 4-byte big-endian number, so a frame over 255 bytes stays whole', () => {
    const long = 'x'.repeat(70_000);
    expect(demultiplex(Buffer.concat([frame(STDOUT, long), frame(STDERR, 'tail')])).toString()).toBe(`${long}tail`);
  });

  it('keeps empty frames from shifting the ones after them', () => {
    expect(demultiplex(Buffer.concat([frame(STDOUT, 'a'), frame(STDERR, ''), frame(STDOUT, 'b')])).toString()).toBe('ab');
  });

  it('gives an empty buffer for an empty stream', () => {
    const out = demultiplex(Buffer.alloc(0));
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(out.length).toBe(0);
  });

  it('ignores a truncated trailing header', () => {
    const stream = Buffer.concat([frame(STDOUT, 'complete\n'), frame(STDERR, 'next').subarray(0, 5)]);
    expect(demultiplex(stream).toString()).toBe('complete\n');
  });
});

describe('missingCapabilities', () => {
  it('names SYS_RESOURCE for a mask without bit 24', () => {
    expect(missingCapabilities('000001fffeffffff')).toEqual(['SYS_RESOURCE']);
  });

  it('names nothing for a full mask of all 41 known capabilities', () => {
    expect(missingCapabilities('000001ffffffffff')).toEqual([]);
  });

  it('names SYS_ADMIN and SYS_RESOURCE, in bit order, for a mask without bits 21 and 24', () => {
    const mask = (0x1ffffffffffn & ~(1n << 21n) & ~(1n << 24n)).toString(16).padStart(16, '0');
    expect(mask).toBe('000001fffedfffff');
    expect(missingCapabilities(mask)).toEqual(['SYS_ADMIN', 'SYS_RESOURCE']);
  });

  it('tolerates the whitespace around a CapBnd value read from /proc', () => {
    expect(missingCapabilities(' 000001fffeffffff\n')).toEqual(['SYS_RESOURCE']);
  });

  it('names the newer capabilities an older kernel lacks', () => {
    // A 38-bit mask (through AUDIT_READ): PERFMON, BPF and CHECKPOINT_RESTORE are missing.
    expect(missingCapabilities('0000003fffffffff')).toEqual(['PERFMON', 'BPF', 'CHECKPOINT_RESTORE']);
  });
});

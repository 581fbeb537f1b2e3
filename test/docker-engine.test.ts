// Talking to the Docker engine: dockerode's multiplexed log stream read into a size-capped log file,
// the one failure path (HTTP statuses and silence as DockerError) against the real daemon, builds whose
// failures are told apart (the Dockerfile's own fault or not), and the capabilities a host's bounding
// set lacks (which decides the DinD capabilities mode's CapDrop).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createWriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import tar from 'tar-fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CappedLogWriter } from '../activities/container-log.js';
import { missingCapabilities } from '../activities/engines/docker/dind-detect.js';
import { DockerEngine, DockerError } from '../activities/docker-engine.js';
import { isDockerfileFault } from '../activities/ensure-image.js';

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

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'br-docker-engine-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Feeds `chunks` (split anywhere, as a socket would) through demux into a capped log file; its text. */
async function demuxed(chunks: Buffer[], capBytes?: number, keepLastBytes?: number): Promise<{ text: string; writer: CappedLogWriter }> {
  const file = path.join(scratch, `log-${Math.random().toString(36).slice(2)}.log`);
  const writer = new CappedLogWriter(createWriteStream(file), capBytes, keepLastBytes);
  const source = new PassThrough();
  new DockerEngine().demux(source, writer);
  const ended = new Promise<void>((resolve) => source.once('end', resolve));
  for (const chunk of chunks) source.write(chunk);
  source.end();
  source.resume();
  await ended;
  await new Promise<void>((resolve) => writer.end(resolve));
  return { text: readFileSync(file, 'utf8'), writer };
}

describe('a log stream demultiplexed into the log file', () => {
  it('keeps interleaved stdout and stderr frames in stream order, without headers', async () => {
    const stream = Buffer.concat([
      frame(STDOUT, '2025-01-01T00:00:00Z out one\n'),
      frame(STDERR, '2025-01-01T00:00:01Z err one\n'),
      frame(STDOUT, '2025-01-01T00:00:02Z out two\n'),
      frame(STDERR, 'ünïcødé ✓\n'),
    ]);
    const { text } = await demuxed([stream]);
    expect(text).toBe('2025-01-01T00:00:00Z out one\n2025-01-01T00:00:01Z err one\n2025-01-01T00:00:02Z out two\nünïcødé ✓\n');
  });

  it('reads a frame over 255 bytes whole, even when the socket splits it and its header', async () => {
    const long = 'x'.repeat(70_000);
    const stream = Buffer.concat([frame(STDOUT, long), frame(STDERR, 'tail')]);
    const { text } = await demuxed([stream.subarray(0, 3), stream.subarray(3, 40_000), stream.subarray(40_000)]);
    expect(text).toBe(`${long}tail`);
  });

  it('keeps empty frames from shifting the ones after them', async () => {
    expect((await demuxed([Buffer.concat([frame(STDOUT, 'a'), frame(STDERR, ''), frame(STDOUT, 'b')])])).text).toBe('ab');
  });

  it('writes an empty file for an empty stream', async () => {
    expect((await demuxed([])).text).toBe('');
  });
});

describe('the capped log file', () => {
  it('writes everything, and no note, while the output stays under the cap', async () => {
    const { text, writer } = await demuxed([frame(STDOUT, 'line 1\nline 2\n')], 1024);
    expect(text).toBe('line 1\nline 2\n');
    expect(writer.summary()).toEqual({ bytes: 14, dropped: 0 });
  });

  it('past the cap writes one line saying how much was dropped, then the last lines from a line boundary', async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${String(i).padStart(4, '0')}\n`); // 10 bytes each
    const { text, writer } = await demuxed(
      lines.map((l) => frame(STDOUT, l)),
      2000,
      95,
    );
    const [head, note, ...rest] = text.split(/(?<=\n)(?=\[benchrouter\])|(?<=follow)\n/);
    expect(head).toBe(lines.slice(0, 200).join(''));
    // 95 bytes kept, cut to the 9 whole lines at the end; everything between is counted as dropped.
    expect(rest.join('')).toBe(lines.slice(-9).join(''));
    expect(note).toBe(`[benchrouter] output past the 2000 bytes log cap: at least ${10_000 - 2000 - 90} bytes dropped; the last 90 bytes follow`);
    expect(writer.summary().bytes).toBe(10_000);
  });

  it('keeps the file near the cap however much arrives', async () => {
    const chunk = frame(STDOUT, `${'y'.repeat(1023)}\n`);
    const { text } = await demuxed(
      Array.from({ length: 4096 }, () => chunk),
      64 * 1024,
      4096,
    ); // 4 MiB printed
    expect(text.length).toBeLessThan(64 * 1024 + 4096 + 200);
    expect(text).toContain('dropped');
  });
});

describe('DockerEngine against the real daemon', () => {
  const docker = new DockerEngine();
  const name = `br-engine-test-${process.pid}`;
  afterAll(async () => docker.remove(name));

  it('answers undefined for an image or container that does not exist, and kill/remove of one succeed', async () => {
    expect(await docker.inspectImage('benchrouter-test/no-such-image:0')).toBeUndefined();
    expect(await docker.imageExists('benchrouter/base:bookworm')).toBe(true);
    expect(await docker.containerState('br-no-such-container')).toBeUndefined();
    await expect(docker.kill('br-no-such-container')).resolves.toBeUndefined();
    await expect(docker.remove('br-no-such-container')).resolves.toBeUndefined();
  });

  it('creates and starts a container, says conflict for the same name, waits for its exit code and lists it by label', async () => {
    const body = {
      Image: 'benchrouter/base:bookworm',
      Entrypoint: ['/bin/sh'],
      Cmd: ['-c', 'exit 3'],
      Env: [],
      Labels: { 'benchrouter.engine-test': name },
      WorkingDir: '/',
      HostConfig: { NetworkMode: 'none' },
    };
    const started = await docker.createAndStart(name, body);
    expect(started).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await docker.createAndStart(name, body)).toBe('conflict');
    expect(await docker.wait(name)).toBe(3);
    expect(await docker.containerState(name)).toMatchObject({ running: false, exitCode: 3, oomKilled: false, labels: { 'benchrouter.engine-test': name } });
    expect((await docker.listContainers([`benchrouter.engine-test=${name}`])).map((c) => c.name)).toEqual([name]);
  });

  it('fails with a DockerError carrying the HTTP status and the daemon message', async () => {
    const error = await docker
      .createAndStart(`${name}-missing`, {
        Image: 'benchrouter-test/no-such-image:0',
        Entrypoint: [],
        Cmd: [],
        Env: [],
        Labels: {},
        WorkingDir: '/',
        HostConfig: {},
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DockerError);
    expect(error).toMatchObject({ operation: 'container create', statusCode: 404 });
    expect((error as DockerError).message).toContain('No such image: benchrouter-test/no-such-image:0');
  });

  it('honours DOCKER_HOST, and a daemon that does not answer there is a DockerError with no status', async () => {
    const saved = process.env.DOCKER_HOST;
    process.env.DOCKER_HOST = 'tcp://127.0.0.1:1';
    try {
      const error = await new DockerEngine().containerState('anything').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DockerError);
      expect(error).toMatchObject({ operation: 'container inspect', statusCode: null });
      expect((error as DockerError).message).toMatch(/ECONNREFUSED/);
    } finally {
      if (saved === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = saved;
    }
  });

  it('saves an image to a tar file, streamed', async () => {
    const file = path.join(scratch, 'base.tar');
    await docker.saveImage('benchrouter/base:bookworm', file);
    expect(statSync(file).size).toBeGreaterThan(10 * 1024 * 1024);
    expect(execFileSync('tar', ['-tf', file], { encoding: 'utf8' })).toContain('manifest.json');
  });
});

describe('a failed build', () => {
  const docker = new DockerEngine();
  const build = async (dockerfile: string) => {
    const dir = mkdtempSync(path.join(scratch, 'ctx-'));
    writeFileSync(path.join(dir, 'Dockerfile'), dockerfile);
    const lines: string[] = [];
    try {
      const failure = await docker.buildImage(
        tar.pack(dir),
        { tag: `benchrouter-test/build-probe:${process.pid}`, labels: {} },
        (e) => e.stream && lines.push(e.stream),
      );
      return { failure, lines };
    } catch (error) {
      return { failure: error as DockerError, lines };
    }
  };

  it("is the Dockerfile's fault when a step exits non-zero, with the step's output streamed", async () => {
    const { failure, lines } = await build('FROM benchrouter/base:bookworm\nRUN echo "compiling the world" && exit 7\n');
    expect(failure).toMatchObject({ errorDetail: { code: 7 } });
    expect(isDockerfileFault(failure!)).toBe(true);
    expect(lines.join('')).toContain('compiling the world');
  });

  it("is the Dockerfile's fault for an unknown instruction (HTTP 400) and a missing COPY source", async () => {
    const unknown = (await build('FROM benchrouter/base:bookworm\nFOO bar\n')).failure;
    expect(unknown).toBeInstanceOf(DockerError);
    expect(isDockerfileFault(unknown!)).toBe(true);
    const copy = (await build('FROM benchrouter/base:bookworm\nCOPY missing.txt /x\n')).failure;
    expect(isDockerfileFault(copy!)).toBe(true);
  });

  it("is not the Dockerfile's fault when the daemon or the network fails", () => {
    expect(isDockerfileFault({ error: 'x', errorDetail: { message: 'failed to create endpoint x on network bridge: could not find bridge docker0' } })).toBe(
      false,
    );
    expect(
      isDockerfileFault({
        error: 'x',
        errorDetail: { message: 'Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host' },
      }),
    ).toBe(false);
    expect(isDockerfileFault(new DockerError('build', 500, 'write /var/lib/docker/tmp: no space left on device'))).toBe(false);
    expect(isDockerfileFault(new DockerError('build', null, 'the Docker daemon did not answer'))).toBe(false);
  });

  it('builds a good context into an image that carries the labels', async () => {
    const dir = mkdtempSync(path.join(scratch, 'ok-'));
    writeFileSync(path.join(dir, 'Dockerfile'), 'FROM benchrouter/base:bookworm\nCOPY hello.txt /hello.txt\n');
    writeFileSync(path.join(dir, 'hello.txt'), `hello ${process.pid}\n`);
    const tag = `benchrouter-test/build-ok:${process.pid}`;
    try {
      expect(await docker.buildImage(tar.pack(dir), { tag, labels: { 'benchrouter.test': 'yes' } }, () => undefined)).toBeUndefined();
      expect((await docker.inspectImage(tag))?.labels).toMatchObject({ 'benchrouter.test': 'yes' });
    } finally {
      execFileSync('docker', ['rmi', '-f', tag], { stdio: 'ignore' });
    }
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

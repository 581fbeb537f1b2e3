// The host's Docker engine, through dockerode: one client for containers, logs, events, builds and
// image saves, reached wherever DOCKER_HOST points (unix socket, tcp, tls, ssh). Calls that must
// answer promptly carry a timeout; waiting for a container, following its logs and building never do.

import Docker from 'dockerode';
import { createWriteStream } from 'node:fs';
import { finished, pipeline } from 'node:stream/promises';
import { PassThrough, Writable, type Readable } from 'node:stream';
import { DockerLogFrames } from './docker-log-frames.js';
import type { TaskState } from './engines/engine.js';

export class DockerError extends Error {
  constructor(
    readonly operation: string,
    readonly statusCode: number | null,
    readonly detail: string,
  ) {
    super(`docker ${operation} failed (${statusCode ?? 'no answer'}): ${detail.trim().split('\n').slice(-3).join(' | ') || 'no output'}`);
    this.name = 'DockerError';
  }
}

/** A container's state is a task's, as the Docker engine reports it (engines/engine.ts). */
export type ContainerState = TaskState;

/** The Engine API's container-create body: only the fields BenchRouter sets. */
export interface ContainerCreateBody {
  Image: string;
  Entrypoint: string[];
  Cmd: string[];
  Env: string[];
  Labels: Record<string, string>;
  WorkingDir: string;
  HostConfig: Record<string, unknown>;
}

/** One message of the daemon's build stream (`docker build`'s JSON progress). */
/** The fields of a daemon event (`/events`) that BenchRouter reads. */
export interface DockerEvent {
  Action?: string;
  /** The action's name in older API versions. */
  status?: string;
  timeNano?: number;
  Actor?: { Attributes?: Record<string, string> };
}

/** What happened in a daemon event: `die`, `kill`, `oom`… */
export function eventAction(event: DockerEvent): string | undefined {
  return event.Action ?? event.status;
}

export interface BuildEvent {
  stream?: string;
  status?: string;
  error?: string;
  errorDetail?: { code?: number; message?: string };
  aux?: { ID?: string };
}

/**
 * How long a call may take before the daemon counts as not answering. Generous, because a busy
 * daemon (dozens of containers starting at once) is slow but alive; a hung one must not hang a job.
 */
const TIMEOUT_MS = { inspect: 30_000, create: 60_000, start: 60_000, kill: 30_000, remove: 120_000, list: 30_000, network: 30_000 } as const;

/** dockerode rejects with the HTTP status and the daemon's message; transport errors carry neither. */
interface DockerodeError {
  statusCode?: number;
  json?: { message?: string } | Buffer | string | null;
  message: string;
  name?: string;
}

function asDockerodeError(error: unknown): DockerodeError {
  return typeof error === 'object' && error !== null && 'message' in error ? (error as DockerodeError) : { message: String(error) };
}

/** The one failure path: every daemon refusal or silence becomes a DockerError naming the operation. */
export function dockerError(operation: string, error: unknown, timeoutMs?: number): DockerError {
  if (error instanceof DockerError) return error;
  const e = asDockerodeError(error);
  if (e.name === 'AbortError' || e.name === 'TimeoutError') {
    return new DockerError(operation, null, timeoutMs ? `the Docker daemon did not answer within ${timeoutMs / 1000}s` : 'aborted');
  }
  const json = e.json;
  const message =
    json && typeof json === 'object' && !Buffer.isBuffer(json) && json.message ? json.message : e.message.replace(/^\(HTTP code \d+\) [^-]*- /, '');
  return new DockerError(operation, e.statusCode ?? null, message);
}

export function statusOf(error: unknown): number | undefined {
  return asDockerodeError(error).statusCode;
}

export class DockerEngine {
  readonly client: Docker;

  /** With no options, dockerode reads DOCKER_HOST (and DOCKER_TLS_VERIFY, DOCKER_CERT_PATH) itself. */
  constructor(options?: Docker.DockerOptions) {
    this.client = new Docker(options);
  }

  /** Runs one call with a timeout; statuses in `tolerated` resolve as undefined instead of failing. */
  private async call<T>(operation: string, timeoutMs: number, fn: (abortSignal: AbortSignal) => Promise<T>, tolerated: number[] = []): Promise<T | undefined> {
    const abortSignal = AbortSignal.timeout(timeoutMs);
    // Raced as well as passed: dockerode hands the signal to the request for most calls, not all.
    let onAbort: () => void = () => undefined;
    const timedOut = new Promise<never>((_, reject) => abortSignal.addEventListener('abort', (onAbort = () => reject(abortSignal.reason))));
    try {
      return await Promise.race([fn(abortSignal), timedOut]);
    } catch (error) {
      const status = statusOf(error);
      if (status !== undefined && tolerated.includes(status)) return undefined;
      throw dockerError(operation, error, timeoutMs);
    } finally {
      abortSignal.removeEventListener('abort', onAbort);
    }
  }

  /** The image's id and labels; undefined when the host has no such image. */
  async inspectImage(image: string): Promise<{ id: string; labels: Record<string, string> } | undefined> {
    const inspected = await this.call('image inspect', TIMEOUT_MS.inspect, () => this.client.getImage(image).inspect(), [404]);
    return inspected && { id: inspected.Id, labels: inspected.Config?.Labels ?? {} };
  }

  async imageExists(image: string): Promise<boolean> {
    return (await this.inspectImage(image)) !== undefined;
  }

  /** Creates and starts a container; `conflict` when the name is already taken. */
  async createAndStart(name: string, body: ContainerCreateBody): Promise<{ id: string } | 'conflict'> {
    let id: string;
    try {
      const created = await this.client.createContainer({
        name,
        ...body,
        abortSignal: AbortSignal.timeout(TIMEOUT_MS.create),
      } as Docker.ContainerCreateOptions);
      id = created.id;
    } catch (error) {
      if (statusOf(error) === 409) return 'conflict';
      throw dockerError('container create', error, TIMEOUT_MS.create);
    }
    try {
      await this.client.getContainer(id).start({ abortSignal: AbortSignal.timeout(TIMEOUT_MS.start) });
    } catch (error) {
      if (statusOf(error) !== 304) {
        await this.remove(id).catch(() => undefined);
        throw dockerError('container start', error, TIMEOUT_MS.start);
      }
    }
    return { id };
  }

  /** Bytes the container wrote to its own filesystem (its writable layer); the daemon computes it, so call it sparingly. */
  async writableLayerBytes(nameOrId: string): Promise<number> {
    const c = await this.call(
      'container inspect',
      TIMEOUT_MS.inspect,
      (abortSignal) => this.client.getContainer(nameOrId).inspect({ size: true, abortSignal } as Docker.ContainerInspectOptions),
      [404],
    );
    return (c as { SizeRw?: number } | undefined)?.SizeRw ?? 0;
  }

  async containerState(nameOrId: string): Promise<ContainerState | undefined> {
    const c = await this.call('container inspect', TIMEOUT_MS.inspect, (abortSignal) => this.client.getContainer(nameOrId).inspect({ abortSignal }), [404]);
    if (!c) return undefined;
    return {
      id: c.Id,
      running: c.State.Running,
      exitCode: c.State.ExitCode,
      startedAt: c.State.StartedAt,
      finishedAt: c.State.FinishedAt,
      oomKilled: c.State.OOMKilled,
      labels: c.Config.Labels ?? {},
    };
  }

  /** Resolves with the exit code when the container stops. No timeout: a task may run for hours. */
  async wait(nameOrId: string, signal?: AbortSignal): Promise<number> {
    try {
      const result = (await this.client.getContainer(nameOrId).wait(signal ? { abortSignal: signal } : {})) as { StatusCode: number };
      return result.StatusCode;
    } catch (error) {
      if (signal?.aborted) throw error;
      throw dockerError('container wait', error);
    }
  }

  async kill(nameOrId: string): Promise<void> {
    // 404: gone already; 409: not running. Both mean "not running", which is what we want.
    await this.call('container kill', TIMEOUT_MS.kill, (abortSignal) => this.client.getContainer(nameOrId).kill({ abortSignal }), [404, 409]);
  }

  async remove(nameOrId: string): Promise<void> {
    await this.call(
      'container remove',
      TIMEOUT_MS.remove,
      (abortSignal) => this.client.getContainer(nameOrId).remove({ force: true, v: true, abortSignal }),
      [404],
    );
  }

  /** Containers with all of these labels, stopped ones too; `networkMode` is `container:<id>` for one that joined another's network. */
  async listContainers(
    labelFilters: string[],
  ): Promise<Array<{ id: string; name: string; labels: Record<string, string>; state: string; networkMode?: string }>> {
    const list =
      (await this.call('container list', TIMEOUT_MS.list, (abortSignal) =>
        this.client.listContainers({ all: true, filters: { label: labelFilters }, abortSignal }),
      )) ?? [];
    return list.map((c) => ({
      id: c.Id,
      name: (c.Names[0] ?? '').replace(/^\//, ''),
      labels: c.Labels ?? {},
      state: c.State,
      ...(c.HostConfig?.NetworkMode ? { networkMode: c.HostConfig.NetworkMode } : {}),
    }));
  }

  /** A tar archive of one path inside a container (`docker cp` out). */
  async archive(nameOrId: string, pathInContainer: string): Promise<Readable> {
    const stream = await this.call('container archive', TIMEOUT_MS.inspect, () => this.client.getContainer(nameOrId).getArchive({ path: pathInContainer }));
    if (!stream) throw new DockerError('container archive', null, `no archive of ${pathInContainer}`);
    return stream as Readable;
  }

  /**
   * What the daemon recorded of a container's end since `sinceIso`: the signals of its `kill` events, and
   * whether its `die` event is among them. The daemon keeps events in memory only: a daemon restarted
   * since the container stopped has neither.
   */
  async endEvents(nameOrId: string, sinceIso: string): Promise<{ kills: string[]; died: boolean }> {
    const since = Math.floor(Date.parse(sinceIso) / 1000);
    const until = Math.ceil(Date.now() / 1000);
    const raw = await this.call('events', TIMEOUT_MS.inspect, (abortSignal) =>
      this.client.getEvents({
        since,
        until,
        filters: { container: [nameOrId], type: ['container'], event: ['kill', 'die'] },
        abortSignal,
      } as Docker.GetEventsOptions),
    );
    const text = Buffer.isBuffer(raw) ? raw.toString() : typeof raw === 'string' ? raw : raw ? await streamText(raw as unknown as Readable) : '';
    const events = text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as DockerEvent);
    return {
      kills: events.filter((event) => eventAction(event) === 'kill').map((event) => event.Actor?.Attributes?.signal ?? 'unknown'),
      died: events.some((event) => eventAction(event) === 'die'),
    };
  }

  /** What the daemon offers: its runtimes (sysbox-runc?) and how it manages cgroups. */
  async engineInfo(): Promise<{ runtimes: string[]; cgroupDriver: string; cgroupVersion: string }> {
    const info = (await this.call('info', TIMEOUT_MS.inspect, () => this.client.info())) as
      { Runtimes?: Record<string, unknown>; CgroupDriver?: string; CgroupVersion?: string } | undefined;
    return { runtimes: Object.keys(info?.Runtimes ?? {}), cgroupDriver: info?.CgroupDriver ?? '', cgroupVersion: info?.CgroupVersion ?? '' };
  }

  /**
   * The container's stdout and stderr as Docker's multiplexed stream, timestamped, followed until the
   * container stops. Read it with `demux`. No timeout: it lasts as long as the task does.
   */
  async followLogs(nameOrId: string, signal?: AbortSignal): Promise<Readable> {
    try {
      return (await this.client
        .getContainer(nameOrId)
        .logs({ follow: true, stdout: true, stderr: true, timestamps: true, ...(signal ? { abortSignal: signal } : {}) })) as Readable;
    } catch (error) {
      throw dockerError('container logs', error);
    }
  }

  /**
   * The container's last `lines` lines, timestamped, read once (not followed). A follower that fell
   * behind the json-file driver's rotation misses the newest lines; this reads them from the live file.
   */
  async logTail(nameOrId: string, lines: number): Promise<Buffer> {
    const raw = await this.call('container logs', TIMEOUT_MS.inspect, (abortSignal) =>
      this.client.getContainer(nameOrId).logs({ follow: false, stdout: true, stderr: true, timestamps: true, tail: lines, abortSignal }),
    );
    const source = new PassThrough();
    const chunks: Buffer[] = [];
    const out = new Writable({ write: (chunk: Buffer, _encoding, done) => (chunks.push(chunk), done()) });
    this.demux(source, out);
    source.end(raw ?? Buffer.alloc(0));
    await finished(source);
    return Buffer.concat(chunks);
  }

  /**
   * Splits a multiplexed log stream into one writable (stdout and stderr interleaved, as they came),
   * one write per chunk read. Like a 'data' listener, it ignores write()'s answer: the caller pauses.
   */
  demux(stream: Readable, out: Writable): void {
    const frames = new DockerLogFrames();
    stream.on('data', (chunk: Buffer) => {
      const output = frames.push(chunk);
      if (output.length > 0) out.write(output);
    });
  }

  /**
   * The daemon's events for one container, from `sinceSeconds` (Unix time; past events are replayed)
   * on, as newline-delimited JSON. Stays open until the signal aborts.
   */
  async containerEvents(name: string, events: string[], sinceSeconds: number, signal: AbortSignal): Promise<Readable> {
    return this.events({ container: [name], event: events }, sinceSeconds, signal);
  }

  /**
   * The daemon's events matching `filters` (the Engine API's), from `sinceSeconds` (Unix time; past
   * events are replayed) or from now, as newline-delimited JSON. Stays open until the signal aborts.
   */
  async events(filters: Record<string, string[]>, sinceSeconds: number | undefined, signal: AbortSignal): Promise<Readable> {
    try {
      return (await this.client.getEvents({
        ...(sinceSeconds !== undefined ? { since: sinceSeconds } : {}),
        filters,
        abortSignal: signal,
      } as Docker.GetEventsOptions)) as Readable;
    } catch (error) {
      throw dockerError('events', error);
    }
  }

  /**
   * Builds `context` (a tar stream of the build context) with the classic builder, calling onEvent
   * for each progress message. Resolves with the event that reported failure, if any: a failing
   * step arrives in the stream of a successful HTTP answer, not as an HTTP error.
   */
  async buildImage(
    context: Readable,
    options: { tag: string; labels: Record<string, string>; signal?: AbortSignal },
    onEvent: (event: BuildEvent) => void,
  ): Promise<BuildEvent | undefined> {
    let stream: Readable;
    try {
      // version '1': the classic builder (as DOCKER_BUILDKIT=0); BuildKit needs a session this host does not serve.
      stream = (await this.client.buildImage(context, {
        t: options.tag,
        labels: options.labels,
        forcerm: true,
        version: '1',
        ...(options.signal ? { abortSignal: options.signal } : {}),
      } as Docker.ImageBuildOptions)) as Readable;
    } catch (error) {
      throw dockerError('build', error);
    }
    return new Promise((resolve, reject) => {
      let failure: BuildEvent | undefined;
      this.client.modem.followProgress(
        stream,
        (error: Error | null) => (error ? reject(dockerError('build', error)) : resolve(failure)),
        (event: BuildEvent) => {
          if (event.error || event.errorDetail) failure ??= event;
          onEvent(event);
        },
      );
    });
  }

  /** Gives `image` (a name or id) the further name `reference` (`repo[:tag]`, tag `latest` when absent), moving it from any image that had it. */
  async tagImage(image: string, reference: string): Promise<void> {
    const slash = reference.lastIndexOf('/');
    const colon = reference.lastIndexOf(':');
    const [repo, tag] = colon > slash ? [reference.slice(0, colon), reference.slice(colon + 1)] : [reference, 'latest'];
    await this.call('image tag', TIMEOUT_MS.inspect, () => this.client.getImage(image).tag({ repo, tag }));
  }

  /** Writes `docker image save` of one image to `file`, streamed: no image is held in memory. */
  async saveImage(image: string, file: string): Promise<void> {
    try {
      const stream = (await this.client.getImage(image).get()) as Readable;
      await pipeline(stream, createWriteStream(file));
    } catch (error) {
      throw dockerError(`image save ${image}`, error);
    }
  }

  /** The network's id, driver options and IPv4 gateway, creating it with `options` when missing; a concurrent creator's network is fine too. */
  async ensureNetwork(
    name: string,
    options: Omit<Docker.NetworkCreateOptions, 'Name'>,
  ): Promise<{ id: string; options: Record<string, string>; gateway?: string }> {
    const find = async () => {
      const found = (await this.call('network inspect', TIMEOUT_MS.network, () => this.client.getNetwork(name).inspect(), [404])) as
        { Id: string; Options?: Record<string, string> | null; IPAM?: { Config?: Array<{ Gateway?: string }> | null } } | undefined;
      if (!found) return undefined;
      const gateway = found.IPAM?.Config?.map((c) => c.Gateway).find((g) => g && !g.includes(':'));
      return { id: found.Id, options: found.Options ?? {}, ...(gateway ? { gateway } : {}) };
    };
    const existing = await find();
    if (existing) return existing;
    try {
      await this.client.createNetwork({
        Name: name,
        CheckDuplicate: true,
        ...options,
        abortSignal: AbortSignal.timeout(TIMEOUT_MS.network),
      } as Docker.NetworkCreateOptions);
    } catch (error) {
      // 409: created by another worker between our inspect and create; theirs is the same network.
      if (statusOf(error) !== 409) throw dockerError(`network create ${name}`, error, TIMEOUT_MS.network);
    }
    const created = await find();
    if (!created) throw new DockerError(`network create ${name}`, null, 'the network was created but cannot be inspected');
    return created;
  }
}

/** A finite stream read whole (the events of a closed time window). */
async function streamText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString();
}

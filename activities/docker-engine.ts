// The host's Docker engine. Container operations go straight to the Engine API over its unix
// socket (no process per call: a job makes several, and they add up at high concurrency); image
// builds and saves go through the `docker` CLI, which already does the context tarring and streaming.

import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import http from 'node:http';

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

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

export interface ContainerState {
  id: string;
  running: boolean;
  exitCode: number;
  startedAt: string;
  finishedAt: string;
  oomKilled: boolean;
  labels: Record<string, string>;
}

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

function socketPathFromEnv(): string {
  const host = process.env.DOCKER_HOST;
  if (host?.startsWith('unix://')) return host.slice('unix://'.length);
  return '/var/run/docker.sock';
}

export class DockerEngine {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  constructor(
    private readonly socketPath = socketPathFromEnv(),
    private readonly binary = process.env.BENCHROUTER_DOCKER_BIN ?? 'docker',
  ) {}

  /** One Engine API call. Resolves with status and body; never throws on HTTP status. */
  api(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ status: number; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = http.request(
        {
          socketPath: this.socketPath,
          path,
          method,
          agent: this.agent,
          signal,
          headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', (error) => reject(signal?.aborted ? error : new DockerError(`${method} ${path}`, null, `the Docker daemon did not answer on ${this.socketPath}: ${error.message}`)));
      req.end(payload);
    });
  }

  private async apiJson<T>(method: string, path: string, body?: unknown, okStatuses: number[] = [200, 201, 204]): Promise<T> {
    const res = await this.api(method, path, body);
    if (!okStatuses.includes(res.status)) throw new DockerError(`${method} ${path}`, res.status, messageOf(res.body));
    return (res.body.length ? JSON.parse(res.body.toString()) : undefined) as T;
  }

  /** The image's id and labels; undefined when the host has no such image. */
  async inspectImage(image: string): Promise<{ id: string; labels: Record<string, string> } | undefined> {
    const res = await this.api('GET', `/images/${encodeURIComponent(image)}/json`);
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new DockerError('image inspect', res.status, messageOf(res.body));
    const inspected = JSON.parse(res.body.toString()) as { Id: string; Config?: { Labels?: Record<string, string> | null } };
    return { id: inspected.Id, labels: inspected.Config?.Labels ?? {} };
  }

  async imageExists(image: string): Promise<boolean> {
    return (await this.inspectImage(image)) !== undefined;
  }

  /** Creates and starts a container; `conflict` when the name is already taken. */
  async createAndStart(name: string, body: ContainerCreateBody): Promise<{ id: string } | 'conflict'> {
    const created = await this.api('POST', `/containers/create?name=${encodeURIComponent(name)}`, body);
    if (created.status === 409) return 'conflict';
    if (created.status !== 201) throw new DockerError('container create', created.status, messageOf(created.body));
    const { Id: id } = JSON.parse(created.body.toString()) as { Id: string };
    const started = await this.api('POST', `/containers/${id}/start`);
    if (started.status !== 204 && started.status !== 304) {
      await this.remove(id);
      throw new DockerError('container start', started.status, messageOf(started.body));
    }
    return { id };
  }

  async containerState(nameOrId: string): Promise<ContainerState | undefined> {
    const res = await this.api('GET', `/containers/${encodeURIComponent(nameOrId)}/json`);
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new DockerError('container inspect', res.status, messageOf(res.body));
    const c = JSON.parse(res.body.toString()) as {
      Id: string;
      State: { Running: boolean; ExitCode: number; StartedAt: string; FinishedAt: string; OOMKilled: boolean };
      Config: { Labels: Record<string, string> | null };
    };
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

  /** Resolves with the exit code when the container stops. */
  async wait(nameOrId: string, signal?: AbortSignal): Promise<number> {
    const res = await this.api('POST', `/containers/${encodeURIComponent(nameOrId)}/wait`, undefined, signal);
    if (res.status !== 200) throw new DockerError('container wait', res.status, messageOf(res.body));
    return (JSON.parse(res.body.toString()) as { StatusCode: number }).StatusCode;
  }

  async kill(nameOrId: string): Promise<void> {
    const res = await this.api('POST', `/containers/${encodeURIComponent(nameOrId)}/kill`);
    // 404: gone already; 409: not running. Both mean "not running", which is what we want.
    if (![204, 404, 409].includes(res.status)) throw new DockerError('container kill', res.status, messageOf(res.body));
  }

  async remove(nameOrId: string): Promise<void> {
    const res = await this.api('DELETE', `/containers/${encodeURIComponent(nameOrId)}?force=1&v=1`);
    if (![204, 404].includes(res.status)) throw new DockerError('container remove', res.status, messageOf(res.body));
  }

  /** Writes stdout and stderr, interleaved and timestamped, to `file`. */
  async saveLogs(nameOrId: string, file: string): Promise<void> {
    const res = await this.api('GET', `/containers/${encodeURIComponent(nameOrId)}/logs?stdout=1&stderr=1&timestamps=1`);
    if (res.status !== 200) throw new DockerError('container logs', res.status, messageOf(res.body));
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(file);
      out.on('error', reject);
      out.end(demultiplex(res.body), () => resolve());
    });
  }

  async listContainers(labelFilters: string[]): Promise<Array<{ id: string; name: string; labels: Record<string, string>; state: string }>> {
    const filters = encodeURIComponent(JSON.stringify({ label: labelFilters }));
    const list = await this.apiJson<Array<{ Id: string; Names: string[]; Labels: Record<string, string>; State: string }>>('GET', `/containers/json?all=1&filters=${filters}`);
    return list.map((c) => ({ id: c.Id, name: (c.Names[0] ?? '').replace(/^\//, ''), labels: c.Labels ?? {}, state: c.State }));
  }

  /**
   * The signals of the `kill` events the daemon recorded for a container since `sinceIso`. The daemon
   * keeps events in memory only: a restarted daemon has none from before its start.
   */
  async killSignals(nameOrId: string, sinceIso: string): Promise<string[]> {
    const since = (Date.parse(sinceIso) / 1000).toFixed(3);
    const until = (Date.now() / 1000).toFixed(3);
    const filters = encodeURIComponent(JSON.stringify({ container: [nameOrId], type: ['container'], event: ['kill'] }));
    const res = await this.api('GET', `/events?since=${since}&until=${until}&filters=${filters}`);
    if (res.status !== 200) throw new DockerError('events', res.status, messageOf(res.body));
    return res.body
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { Actor?: { Attributes?: { signal?: string } } }).Actor?.Attributes?.signal ?? 'unknown');
  }

  async runtimes(): Promise<string[]> {
    const info = await this.apiJson<{ Runtimes?: Record<string, unknown> }>('GET', '/info');
    return Object.keys(info.Runtimes ?? {});
  }

  /** Runs the docker CLI (builds, saves, one-off probes). With stdoutFile both streams go there. */
  exec(args: string[], options: { env?: NodeJS.ProcessEnv; signal?: AbortSignal; stdoutFile?: string } = {}): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, { env: options.env ?? process.env, signal: options.signal, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const file = options.stdoutFile ? createWriteStream(options.stdoutFile) : undefined;
      child.stdout.on('data', (d: Buffer) => (file ? file.write(d) : (stdout += d.toString())));
      child.stderr.on('data', (d: Buffer) => {
        file?.write(d);
        stderr = (stderr + d.toString()).slice(-64_000);
      });
      child.on('error', reject);
      child.on('close', (exitCode) => {
        if (!file) return resolve({ exitCode, stdout, stderr });
        file.end(() => resolve({ exitCode, stdout, stderr }));
      });
    });
  }

  async run(args: string[], options: Parameters<DockerEngine['exec']>[1] = {}): Promise<string> {
    const result = await this.exec(args, options);
    if (result.exitCode !== 0) throw new DockerError(args.slice(0, 2).join(' '), result.exitCode, result.stderr);
    return result.stdout.trim();
  }
}

function messageOf(body: Buffer): string {
  try {
    return (JSON.parse(body.toString()) as { message?: string }).message ?? body.toString();
  } catch {
    return body.toString();
  }
}

/** Docker's log stream without a TTY: frames of [stream, 0, 0, 0, size (4 bytes BE)] + payload. */
export function demultiplex(buffer: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const size = buffer.readUInt32BE(offset + 4);
    parts.push(buffer.subarray(offset + 8, offset + 8 + size));
    offset += 8 + size;
  }
  return Buffer.concat(parts);
}

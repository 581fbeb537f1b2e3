// The host's Docker engine, driven through the `docker` CLI. Everything BenchRouter asks of Docker
// goes through this one class, so tests and other engines can stand in behind the same methods.

import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';

export class DockerError extends Error {
  constructor(
    readonly args: string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`docker ${args[0] ?? ''} failed (exit ${exitCode ?? 'signal'}): ${stderr.trim().split('\n').slice(-3).join(' | ') || 'no output'}`);
    this.name = 'DockerError';
  }
  /** The daemon did not answer: an infrastructure fault worth retrying, not a benchmark outcome. */
  get daemonUnreachable(): boolean {
    return /Cannot connect to the Docker daemon|connection refused|Is the docker daemon running/i.test(this.stderr);
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
}

export class DockerCli {
  constructor(private readonly binary = process.env.BENCHROUTER_DOCKER_BIN ?? 'docker') {}

  exec(args: string[], options: { env?: NodeJS.ProcessEnv; signal?: AbortSignal; stdoutFile?: string } = {}): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, { env: options.env ?? process.env, signal: options.signal, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      // With stdoutFile, both streams go to the file, interleaved as they come (a log, not data).
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

  async run(args: string[], options: Parameters<DockerCli['exec']>[1] = {}): Promise<string> {
    const result = await this.exec(args, options);
    if (result.exitCode !== 0) throw new DockerError(args, result.exitCode, result.stderr);
    return result.stdout.trim();
  }

  async imageExists(image: string): Promise<boolean> {
    const result = await this.exec(['image', 'inspect', '--format', '{{.Id}}', image]);
    if (result.exitCode === 0) return true;
    if (/No such image/i.test(result.stderr)) return false;
    throw new DockerError(['image', 'inspect', image], result.exitCode, result.stderr);
  }

  async containerState(nameOrId: string): Promise<ContainerState | undefined> {
    const format = '{{.Id}}|{{.State.Running}}|{{.State.ExitCode}}|{{.State.StartedAt}}|{{.State.FinishedAt}}|{{.State.OOMKilled}}';
    const result = await this.exec(['container', 'inspect', '--format', format, nameOrId]);
    if (result.exitCode !== 0) {
      if (/No such (container|object)/i.test(result.stderr)) return undefined;
      throw new DockerError(['container', 'inspect', nameOrId], result.exitCode, result.stderr);
    }
    const [id = '', running, exitCode, startedAt = '', finishedAt = '', oomKilled] = result.stdout.trim().split('|');
    return { id, running: running === 'true', exitCode: Number(exitCode), startedAt, finishedAt, oomKilled: oomKilled === 'true' };
  }

  /** Resolves when the container stops; the exit code docker reports. */
  async wait(nameOrId: string, signal?: AbortSignal): Promise<number> {
    return Number(await this.run(['container', 'wait', nameOrId], { signal }));
  }

  async kill(nameOrId: string): Promise<void> {
    const result = await this.exec(['container', 'kill', nameOrId]);
    if (result.exitCode !== 0 && !/No such container|is not running/i.test(result.stderr)) {
      throw new DockerError(['container', 'kill', nameOrId], result.exitCode, result.stderr);
    }
  }

  async remove(nameOrId: string): Promise<void> {
    const result = await this.exec(['container', 'rm', '--force', '--volumes', nameOrId]);
    if (result.exitCode !== 0 && !/No such container/i.test(result.stderr)) {
      throw new DockerError(['container', 'rm', nameOrId], result.exitCode, result.stderr);
    }
  }

  async saveLogs(nameOrId: string, file: string): Promise<void> {
    await this.run(['container', 'logs', '--timestamps', nameOrId], { stdoutFile: file });
  }

  async listContainers(labelFilter: string): Promise<Array<{ id: string; name: string; labels: string }>> {
    const out = await this.run(['container', 'ls', '--all', '--no-trunc', '--filter', `label=${labelFilter}`, '--format', '{{.ID}}\t{{.Names}}\t{{.Labels}}']);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [id = '', name = '', labels = ''] = line.split('\t');
        return { id, name, labels };
      });
  }
}

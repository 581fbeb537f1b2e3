// A Docker daemon of a test's own, to stop and start without touching the machine's shared one: its
// own data root, exec root, socket and containerd, in a network namespace of its own (no bridge, no
// iptables) so that nothing it does reaches the host's interfaces.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

export interface PrivateDockerDaemon {
  /** `unix:///…/docker.sock`, for DOCKER_HOST. */
  host: string;
  /** The environment that points the docker CLI and BenchRouter's engine at this daemon. */
  env: Record<string, string>;
  start(): Promise<void>;
  /** SIGTERM, as `systemctl stop docker` does; resolves once the daemon has exited. */
  stop(): Promise<void>;
  docker(args: string[]): string;
  /** Removes every container, stops the daemon, and deletes its directories and namespace. */
  destroy(): Promise<void>;
}

/** Why a private daemon cannot run here, or undefined when it can (the checks are cheap and synchronous). */
export function privateDaemonUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'a private dockerd needs root';
  for (const tool of ['dockerd', 'ip', 'nsenter']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed`;
    }
  }
  return undefined;
}

export function privateDockerDaemon(root: string, { liveRestore }: { liveRestore: boolean }): PrivateDockerDaemon {
  const netns = `br-test-${randomBytes(3).toString('hex')}`;
  const socket = path.join(root, 'docker.sock');
  const host = `unix://${socket}`;
  const env = { DOCKER_HOST: host };
  let child: ChildProcess | undefined;
  let log = '';
  const docker = (args: string[]) => execFileSync('docker', args, { encoding: 'utf8', env: { ...process.env, ...env } });
  const answers = () => {
    try {
      docker(['version', '--format', '{{.Server.Version}}']);
      return true;
    } catch {
      return false;
    }
  };
  return {
    host,
    env,
    docker,
    async start() {
      if (!existsSync(`/run/netns/${netns}`)) {
        execFileSync('ip', ['netns', 'add', netns]);
        execFileSync('nsenter', [`--net=/run/netns/${netns}`, 'ip', 'link', 'set', 'lo', 'up']);
      }
      mkdirSync(root, { recursive: true });
      // nsenter --net, not `ip netns exec`: the latter also makes a new mount namespace per start, and
      // a restarted daemon must see the mounts of the containers the previous one left running.
      child = spawn(
        'nsenter',
        [
          `--net=/run/netns/${netns}`,
          'dockerd',
          '--data-root',
          path.join(root, 'data'),
          '--exec-root',
          path.join(root, 'exec'),
          '--pidfile',
          path.join(root, 'dockerd.pid'),
          '--host',
          host,
          '--bridge=none',
          '--iptables=false',
          '--ip-masq=false',
          ...(liveRestore ? ['--live-restore'] : []),
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-20_000)));
      const deadline = Date.now() + 60_000;
      while (!answers()) {
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`the private dockerd at ${socket} did not start: ${log.split('\n').slice(-5).join(' | ')}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
    async destroy() {
      if (child && child.exitCode === null && child.signalCode === null) {
        const ids = docker(['ps', '-aq']).split('\n').filter(Boolean);
        try {
          if (ids.length) docker(['rm', '-f', ...ids]);
        } catch {
          // "failed to remove root filesystem ... device or resource busy": a mount of the container's
          // still held for a moment. Its files go with the data root below, after the lazy unmounts.
        }
        await this.stop();
      }
      // The daemon makes its data root and its namespace file mount points; they go before the files.
      for (const mount of mountsUnder(root)) execFileSync('umount', ['-l', mount], { stdio: 'ignore' });
      rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
      if (existsSync(`/run/netns/${netns}`)) execFileSync('ip', ['netns', 'delete', netns]);
    },
  };
}

function mountsUnder(root: string): string[] {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((mount) => mount === root || mount.startsWith(`${root}/`))
    .sort()
    .reverse();
}

// How this host gives a `docker: true` task its own Docker daemon, detected rather than assumed:
// Sysbox when the daemon offers it, else --privileged, else (where the capability bounding set
// lacks some capability, so privileged cannot start) every capability the daemon can grant with
// seccomp, AppArmor and systempaths unconfined. Detected once per worker process.

import { readFileSync } from 'node:fs';
import type { DockerCli } from './docker-cli.js';

export type DindMode = 'sysbox' | 'privileged' | 'capabilities';

export interface DindRuntime {
  mode: DindMode;
  /** `docker run` flags that make an inner dockerd possible in this mode. */
  runArgs: string[];
}

/** Linux capability numbers (include/uapi/linux/capability.h), for naming what the host lacks. */
const CAPABILITY_NAMES = [
  'CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'SETPCAP',
  'LINUX_IMMUTABLE', 'NET_BIND_SERVICE', 'NET_BROADCAST', 'NET_ADMIN', 'NET_RAW', 'IPC_LOCK', 'IPC_OWNER',
  'SYS_MODULE', 'SYS_RAWIO', 'SYS_CHROOT', 'SYS_PTRACE', 'SYS_PACCT', 'SYS_ADMIN', 'SYS_BOOT', 'SYS_NICE',
  'SYS_RESOURCE', 'SYS_TIME', 'SYS_TTY_CONFIG', 'MKNOD', 'LEASE', 'AUDIT_WRITE', 'AUDIT_CONTROL', 'SETFCAP',
  'MAC_OVERRIDE', 'MAC_ADMIN', 'SYSLOG', 'WAKE_ALARM', 'BLOCK_SUSPEND', 'AUDIT_READ', 'PERFMON', 'BPF', 'CHECKPOINT_RESTORE',
] as const;

/** Capabilities missing from a `CapBnd:` hex mask, among those docker knows by name. */
export function missingCapabilities(capBndHex: string): string[] {
  const mask = BigInt(`0x${capBndHex.trim()}`);
  return CAPABILITY_NAMES.filter((_, bit) => (mask & (1n << BigInt(bit))) === 0n);
}

function boundingSetOf(pid: number | 'self'): string | undefined {
  try {
    return /^CapBnd:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

const UNCONFINED = ['--security-opt', 'seccomp=unconfined', '--security-opt', 'apparmor=unconfined', '--security-opt', 'systempaths=unconfined'];

let detected: Promise<DindRuntime> | undefined;

export function detectDindRuntime(docker: DockerCli, probeImage: string): Promise<DindRuntime> {
  detected ??= detect(docker, probeImage).catch((error) => {
    detected = undefined; // a daemon hiccup must not pin a wrong answer for the process's life
    throw error;
  });
  return detected;
}

async function detect(docker: DockerCli, probeImage: string): Promise<DindRuntime> {
  const runtimes = await docker.run(['info', '--format', '{{json .Runtimes}}']);
  if (runtimes.includes('sysbox-runc')) return { mode: 'sysbox', runArgs: ['--runtime', 'sysbox-runc'] };

  const privileged = ['--privileged', '--cgroupns', 'private'];
  const tryRun = (flags: string[]) => docker.exec(['run', '--rm', '--network', 'none', ...flags, '--entrypoint', 'true', probeImage]);
  const first = await tryRun(privileged);
  if (first.exitCode === 0) return { mode: 'privileged', runArgs: privileged };
  if (!/unable to apply caps|operation not permitted/i.test(first.stderr)) {
    throw new Error(`cannot start a privileged container to detect the DinD runtime: ${first.stderr.trim()}`);
  }

  // Drop exactly what the daemon's bounding set lacks (this worker shares the host's set).
  const dockerdPid = pidOfDockerd();
  const mask = (Number.isFinite(dockerdPid) ? boundingSetOf(dockerdPid) : undefined) ?? boundingSetOf('self') ?? 'ffffffffff';
  const drops = missingCapabilities(mask).flatMap((cap) => ['--cap-drop', cap]);
  const capabilities = ['--cap-add', 'ALL', ...drops, ...UNCONFINED, '--cgroupns', 'private'];
  const second = await tryRun(capabilities);
  if (second.exitCode !== 0) throw new Error(`no way to run a Docker-in-Docker container on this host: privileged failed (${first.stderr.trim()}); capabilities mode failed (${second.stderr.trim()})`);
  return { mode: 'capabilities', runArgs: capabilities };
}

function pidOfDockerd(): number {
  try {
    return Number(readFileSync('/var/run/docker.pid', 'utf8').trim());
  } catch {
    return NaN;
  }
}

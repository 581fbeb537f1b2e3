// How this host gives a `docker: true` task its own Docker daemon (its DinD mode), detected rather
// than assumed: Sysbox when the daemon offers it, else --privileged, else (where the capability
// bounding set lacks some capability, so privileged cannot start) every capability the daemon can
// grant with seccomp, AppArmor and systempaths unconfined. Detected once per worker process.

import { readFileSync } from 'node:fs';
import type { DockerEngine } from '../docker-engine.js';

export type DindMode = 'sysbox' | 'privileged' | 'capabilities';

/** The detected mode and what a container needs to run in it. */
export interface DetectedDindMode {
  mode: DindMode;
  /** Engine API HostConfig fields that make an inner dockerd possible in this mode. */
  hostConfig: Record<string, unknown>;
}

/** Linux capability numbers (include/uapi/linux/capability.h), for naming what the host lacks. */
const CAPABILITY_NAMES = [
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'LEASE',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'SETFCAP',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'SYSLOG',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
  'AUDIT_READ',
  'PERFMON',
  'BPF',
  'CHECKPOINT_RESTORE',
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

/** What `--security-opt seccomp=unconfined apparmor=unconfined systempaths=unconfined` sends the API. */
const UNCONFINED = { SecurityOpt: ['seccomp=unconfined', 'apparmor=unconfined'], MaskedPaths: [], ReadonlyPaths: [] };

let detected: Promise<DetectedDindMode> | undefined;

export function detectDindMode(docker: DockerEngine, probeImage: string): Promise<DetectedDindMode> {
  detected ??= detect(docker, probeImage).catch((error) => {
    detected = undefined; // a daemon hiccup must not pin a wrong answer for the process's life
    throw error;
  });
  return detected;
}

/** Starts `true` in a throwaway container with these HostConfig fields; the daemon's refusal, if any. */
async function tryStart(docker: DockerEngine, image: string, hostConfig: Record<string, unknown>): Promise<string | undefined> {
  const name = `br-dind-probe-${process.pid}-${Date.now()}`;
  try {
    const started = await docker.createAndStart(name, {
      Image: image,
      Entrypoint: ['true'],
      Cmd: [],
      Env: [],
      Labels: {},
      WorkingDir: '/',
      HostConfig: { ...hostConfig, NetworkMode: 'none' },
    });
    if (started === 'conflict') return 'probe container name in use';
    await docker.wait(started.id);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await docker.remove(name).catch(() => undefined);
  }
}

async function detect(docker: DockerEngine, probeImage: string): Promise<DetectedDindMode> {
  if ((await docker.runtimes()).includes('sysbox-runc')) return { mode: 'sysbox', hostConfig: { Runtime: 'sysbox-runc' } };

  const privileged = { Privileged: true, CgroupnsMode: 'private' };
  const refusal = await tryStart(docker, probeImage, privileged);
  if (!refusal) return { mode: 'privileged', hostConfig: privileged };
  if (!/unable to apply caps|operation not permitted/i.test(refusal)) {
    throw new Error(`cannot start a privileged container to detect the DinD runtime: ${refusal}`);
  }

  // Drop exactly what the daemon's bounding set lacks (this worker shares the host's set).
  const dockerdPid = pidOfDockerd();
  const mask = (Number.isFinite(dockerdPid) ? boundingSetOf(dockerdPid) : undefined) ?? boundingSetOf('self') ?? '1ffffffffff';
  const capabilities = { CapAdd: ['ALL'], CapDrop: missingCapabilities(mask), ...UNCONFINED, CgroupnsMode: 'private' };
  const second = await tryStart(docker, probeImage, capabilities);
  if (second) throw new Error(`no way to run a Docker-in-Docker container on this host: privileged failed (${refusal}); capabilities mode failed (${second})`);
  return { mode: 'capabilities', hostConfig: capabilities };
}

function pidOfDockerd(): number {
  try {
    return Number(readFileSync('/var/run/docker.pid', 'utf8').trim());
  } catch {
    return NaN;
  }
}

// How this host gives a `docker: true` task its own Docker daemon (its DinD mode), detected rather
// than assumed: Sysbox when the daemon offers it, else --privileged, else (where the capability
// bounding set lacks some capability, so privileged cannot start) every capability the daemon can
// grant with seccomp, AppArmor and systempaths unconfined. Detected once per worker process.

import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { DockerEngine } from '../../docker-engine.js';

export type DindMode = 'sysbox' | 'privileged' | 'capabilities';

/** The detected mode and what a container needs to run in it. */
export interface DetectedDindMode {
  mode: DindMode;
  /** Engine API HostConfig fields that make an inner dockerd possible in this mode. */
  hostConfig: Record<string, unknown>;
  /** Why the host's block devices are not denied to the task (empty when they are, or under Sysbox). */
  devicesOpen?: string;
}

/**
 * The host cgroup that privileged and capabilities-mode DinD containers are put under. With every
 * capability, a task can re-mount its devices cgroup and allow itself every device (then read the
 * host's disks, or the loop device of the shared image store); a cgroup v1 child can never allow what
 * its parent denies, and the parent is outside the task's cgroup namespace.
 */
export const DIND_CGROUP_PARENT = 'benchrouter-dind';
/** Block devices (read and write; mknod stays, inner runtimes set it up) and /dev/mem, /dev/kmem, /dev/port. */
export const DENIED_DEVICES = ['b *:* rw', 'c 1:1 rw', 'c 1:2 rw', 'c 1:4 rw'];

/**
 * Makes the parent cgroup (cgroup v1, cgroupfs driver, the engine on this machine) and the HostConfig that
 * uses it; otherwise says why devices stay open. Idempotent: rules already denied are denied again.
 */
export function deviceGuard(
  engine: { cgroupDriver: string; cgroupVersion: string },
  cgroupRoot = '/sys/fs/cgroup',
  dockerHost = process.env.DOCKER_HOST,
): { hostConfig: Record<string, unknown> } | { devicesOpen: string } {
  if (dockerHost && !dockerHost.startsWith('unix://'))
    return { devicesOpen: `the Docker engine is remote (DOCKER_HOST=${dockerHost}): its cgroups are not this machine's` };
  if (engine.cgroupVersion !== '1') return { devicesOpen: `cgroup v${engine.cgroupVersion || '?'}: only Sysbox denies a DinD task the host's devices there` };
  if (engine.cgroupDriver !== 'cgroupfs') return { devicesOpen: `the engine's cgroup driver is ${engine.cgroupDriver}, not cgroupfs` };
  const dir = path.join(cgroupRoot, 'devices', DIND_CGROUP_PARENT);
  try {
    if (!existsSync(path.join(cgroupRoot, 'devices'))) return { devicesOpen: `no devices cgroup hierarchy at ${cgroupRoot}/devices` };
    mkdirSync(dir, { recursive: true });
    for (const rule of DENIED_DEVICES) appendFileSync(path.join(dir, 'devices.deny'), `${rule}\n`);
  } catch (error) {
    return { devicesOpen: `cannot set up ${dir}: ${(error as Error).message}` };
  }
  return { hostConfig: { CgroupParent: `/${DIND_CGROUP_PARENT}` } };
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
  const engine = await docker.engineInfo();
  if (engine.runtimes.includes('sysbox-runc')) return { mode: 'sysbox', hostConfig: { Runtime: 'sysbox-runc' } };
  const guard = deviceGuard(engine);
  const guarded = 'hostConfig' in guard ? guard.hostConfig : {};
  const devicesOpen = 'devicesOpen' in guard ? { devicesOpen: guard.devicesOpen } : {};

  const privileged = { Privileged: true, CgroupnsMode: 'private', ...guarded };
  const refusal = await tryStart(docker, probeImage, privileged);
  if (!refusal) return { mode: 'privileged', hostConfig: privileged, ...devicesOpen };
  if (!/unable to apply caps|operation not permitted/i.test(refusal)) {
    throw new Error(`cannot start a privileged container to detect the DinD runtime: ${refusal}`);
  }

  // Drop exactly what the daemon's bounding set lacks (this worker shares the host's set).
  const dockerdPid = pidOfDockerd();
  const mask = (Number.isFinite(dockerdPid) ? boundingSetOf(dockerdPid) : undefined) ?? boundingSetOf('self') ?? '1ffffffffff';
  const capabilities = { CapAdd: ['ALL'], CapDrop: missingCapabilities(mask), ...UNCONFINED, CgroupnsMode: 'private', ...guarded };
  const second = await tryStart(docker, probeImage, capabilities);
  if (second) throw new Error(`no way to run a Docker-in-Docker container on this host: privileged failed (${refusal}); capabilities mode failed (${second})`);
  return { mode: 'capabilities', hostConfig: capabilities, ...devicesOpen };
}

function pidOfDockerd(): number {
  try {
    return Number(readFileSync('/var/run/docker.pid', 'utf8').trim());
  } catch {
    return NaN;
  }
}

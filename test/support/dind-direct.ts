// A DinD image run directly, as a user with Docker would run it, with a daemon of its own: the HostConfig this
// host's DinD mode needs (the same detection the worker makes) as `docker run` flags. The fidelity tests' way to
// run a harness that needs Docker without BenchRouter.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DIND_ENTRYPOINT } from '../../activities/container-spec.js';
import { DockerEngine } from '../../activities/docker-engine.js';
import { detectDindMode } from '../../activities/engines/docker/dind-detect.js';

/** The HostConfig this host's DinD mode needs, as `docker run` flags. */
export async function dindFlags(): Promise<string[]> {
  const { hostConfig } = await detectDindMode(new DockerEngine(), 'benchrouter/dind:bookworm');
  const c = hostConfig as Record<string, unknown>;
  return [
    ...(c.Privileged ? ['--privileged'] : []),
    ...((c.CapAdd as string[] | undefined) ?? []).flatMap((cap) => ['--cap-add', cap]),
    ...((c.CapDrop as string[] | undefined) ?? []).flatMap((cap) => ['--cap-drop', cap]),
    ...((c.SecurityOpt as string[] | undefined) ?? []).flatMap((opt) => ['--security-opt', opt]),
    ...(Array.isArray(c.MaskedPaths) ? ['--security-opt', 'systempaths=unconfined'] : []),
    ...(c.CgroupnsMode ? ['--cgroupns', String(c.CgroupnsMode)] : []),
    ...(c.CgroupParent ? ['--cgroup-parent', String(c.CgroupParent)] : []),
    ...(c.Runtime ? ['--runtime', String(c.Runtime)] : []),
  ];
}

/**
 * `sh -c <script>` in a DinD image through the DinD entrypoint: its daemon started, the image archives in `preload`
 * loaded, its storage in a scratch directory removed afterwards. The host is `host.docker.internal` from inside.
 * Its stdout.
 */
export async function runWithOwnDaemon(
  image: string,
  script: string,
  options: { preload: string; env?: Record<string, string>; volumes?: string[] },
): Promise<string> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'br-dind-direct-'));
  try {
    const { stdout } = await promisify(execFile)(
      'docker',
      [
        'run',
        '--rm',
        ...(await dindFlags()),
        '--add-host',
        'host.docker.internal:host-gateway',
        '-v',
        `${root}:/var/lib/docker`,
        '-v',
        `${options.preload}:/app/preload:ro`,
        ...(options.volumes ?? []).flatMap((v) => ['-v', v]),
        ...Object.entries(options.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
        '--entrypoint',
        DIND_ENTRYPOINT,
        image,
        'sh',
        '-c',
        script,
      ],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    return stdout;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// The device guard of DinD tasks: where it can deny the host's devices (cgroup v1, cgroupfs, a local
// engine) it writes the rules into the parent cgroup; elsewhere it says why it cannot.

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DENIED_DEVICES, DIND_CGROUP_PARENT, deviceGuard } from '../../activities/engines/docker/dind-detect.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'br-cgroup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('deviceGuard', () => {
  it('on cgroup v1 with cgroupfs, denies block devices and /dev/mem, kmem, port in the parent cgroup it names', () => {
    mkdirSync(path.join(root, 'devices'));
    const guard = deviceGuard({ cgroupVersion: '1', cgroupDriver: 'cgroupfs' }, root, undefined);
    expect(guard).toEqual({ hostConfig: { CgroupParent: `/${DIND_CGROUP_PARENT}` } });
    expect(
      readFileSync(path.join(root, 'devices', DIND_CGROUP_PARENT, 'devices.deny'), 'utf8')
        .trim()
        .split('\n'),
    ).toEqual(DENIED_DEVICES);
    expect(DENIED_DEVICES).toContain('b *:* rw');
  });

  it('says why devices stay open elsewhere: cgroup v2, the systemd driver, a remote engine, no devices hierarchy', () => {
    expect(deviceGuard({ cgroupVersion: '2', cgroupDriver: 'systemd' }, root, undefined)).toEqual({
      devicesOpen: expect.stringMatching(/cgroup v2: only Sysbox/),
    });
    expect(deviceGuard({ cgroupVersion: '1', cgroupDriver: 'systemd' }, root, undefined)).toEqual({ devicesOpen: expect.stringMatching(/driver is systemd/) });
    expect(deviceGuard({ cgroupVersion: '1', cgroupDriver: 'cgroupfs' }, root, 'tcp://10.0.0.5:2376')).toEqual({
      devicesOpen: expect.stringMatching(/remote/),
    });
    const empty = mkdtempSync(path.join(os.tmpdir(), 'br-cgroup-empty-'));
    expect(deviceGuard({ cgroupVersion: '1', cgroupDriver: 'cgroupfs' }, empty, undefined)).toEqual({
      devicesOpen: expect.stringMatching(/no devices cgroup hierarchy/),
    });
    rmSync(empty, { recursive: true });
  });
});

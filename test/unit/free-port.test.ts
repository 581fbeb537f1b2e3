// freePort's ports lie below the kernel's ephemeral range, where outgoing connections and listen(0) never
// land, and are free when handed out.

import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, freePortRange } from '../../embedded/embedded-services.js';

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => resolve(server));
  });
}

const RANGE_FILE = '/proc/sys/net/ipv4/ip_local_port_range';

describe('freePort', () => {
  it('draws from outside the ephemeral range, below it where there is room', () => {
    const [bottom, top] = freePortRange();
    expect(top - bottom).toBeGreaterThanOrEqual(3_999);
    if (existsSync(RANGE_FILE)) {
      const [low, high] = readFileSync(RANGE_FILE, 'utf8').trim().split(/\s+/).map(Number);
      expect(top < low! || bottom > high!).toBe(true);
      if (low! >= 1024 + 12_000) expect([bottom, top]).toEqual([low! - 12_000, low! - 1]);
    }
  });

  it('hands out distinct ports outside the ephemeral range that a server can then listen on', async () => {
    const [bottom, top] = freePortRange();
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(bottom);
      expect(port).toBeLessThanOrEqual(top);
    }
    // 20 draws from 12,000 ports: one repeat is possible (p ≈ 1.6%), five are not.
    const servers = await Promise.all([...new Set(ports)].map(listen));
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    expect(new Set(ports).size).toBeGreaterThan(15);
  });
});

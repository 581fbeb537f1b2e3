// freePort's ports lie below the kernel's ephemeral range, where outgoing connections and listen(0) never
// land, and are free when handed out.

import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../embedded/embedded-services.js';

const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => resolve(server));
  });
}

describe('freePort', () => {
  it('hands out distinct ports below the ephemeral range that a server can then listen on', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(1024);
      expect(port).toBeLessThan(ephemeralStart);
    }
    // 20 draws from 12,000 ports: one repeat is possible (p ≈ 1.6%), five are not.
    const servers = await Promise.all([...new Set(ports)].map(listen));
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    expect(new Set(ports).size).toBeGreaterThan(15);
  });
});

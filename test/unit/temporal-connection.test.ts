// The Temporal connection settings: which environment variables turn TLS on, and errors that name
// the variable and the file when they are wrong.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { temporalConnectionOptions, temporalTlsFrom } from '../../config/temporal-connection.js';
import { speaksTls } from '../../config/tls-probe.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

const dir = mkdtempSync(path.join(os.tmpdir(), 'br-tls-settings-'));
const pem = (name: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, `-----BEGIN ${name}-----\n`);
  return file;
};
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('temporal connection options', () => {
  it('are a plain address when no TLS variable is set', () => {
    expect(temporalConnectionOptions('127.0.0.1:7233', temporalTlsFrom({}))).toEqual({ address: '127.0.0.1:7233' });
  });

  it('carry the client certificate pair, the CA and the server name the temporal CLI variables name', () => {
    const env = { TEMPORAL_TLS_CERT: pem('cert'), TEMPORAL_TLS_KEY: pem('key'), TEMPORAL_TLS_CA: pem('ca'), TEMPORAL_TLS_SERVER_NAME: 'temporal' };
    const options = temporalConnectionOptions('cluster:7233', temporalTlsFrom(env));
    expect(options.tls?.serverNameOverride).toBe('temporal');
    expect(Buffer.from(options.tls!.clientCertPair!.crt).toString()).toContain('BEGIN cert');
    expect(Buffer.from(options.tls!.clientCertPair!.key).toString()).toContain('BEGIN key');
    expect(Buffer.from(options.tls!.serverRootCACertificate!).toString()).toContain('BEGIN ca');
  });

  it('turn TLS on for an API key, as Temporal Cloud needs', () => {
    expect(temporalConnectionOptions('ns.tmprl.cloud:7233', temporalTlsFrom({ TEMPORAL_API_KEY: 'k' }))).toEqual({
      address: 'ns.tmprl.cloud:7233',
      tls: {},
      apiKey: 'k',
    });
  });

  it('refuse a certificate without its key, naming the missing variable', () => {
    expect(() => temporalTlsFrom({ TEMPORAL_TLS_CERT: '/c.pem' })).toThrow('TEMPORAL_TLS_KEY: expected a file path because TEMPORAL_TLS_CERT is set');
  });

  it('name the variable and the file when a file cannot be read', () => {
    expect(() => temporalConnectionOptions('x:7233', temporalTlsFrom({ TEMPORAL_TLS_CA: '/nonexistent/ca.pem' }))).toThrow(
      'TEMPORAL_TLS_CA: cannot read /nonexistent/ca.pem (ENOENT); expected a PEM file',
    );
  });
});

describe('speaksTls, which tells a TLS-only frontend from a plain one when a connection times out', () => {
  const listen = async (server: net.Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  };

  it('says yes to a server that asks for a client certificate (mTLS), as the cluster frontend does', async () => {
    const certs = path.join(dir, 'certs');
    execFileSync(path.join(repoRoot, 'cluster', 'make-certs.sh'), [certs], { stdio: 'ignore' });
    const server = tls.createServer({
      cert: readFileSync(path.join(certs, 'server.pem')),
      key: readFileSync(path.join(certs, 'server-key.pem')),
      ca: readFileSync(path.join(certs, 'ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
    });
    server.on('tlsClientError', () => undefined);
    try {
      expect(await speaksTls(await listen(server))).toBe(true);
    } finally {
      server.close();
    }
  });

  it('says no to a plain server that hangs up on a TLS hello, and to a closed port', async () => {
    const server = net.createServer((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    try {
      expect(await speaksTls(await listen(server))).toBe(false);
    } finally {
      server.close();
    }
    const closed = net.createServer();
    const address = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    expect(await speaksTls(address)).toBe(false);
  });
});

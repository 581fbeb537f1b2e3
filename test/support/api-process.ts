// A real `br serve` process for API and browser tests: the harness's environment, a tokens file with
// a full and a read-only token, a free port; and small clients for its JSON routes and SSE stream.

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { addToken } from '../../api/api-tokens.js';
import { freePort } from '../../embedded/embedded-services.js';
import { repoRoot } from './harness.js';

export interface ApiProcess {
  url: string;
  fullToken: string;
  readToken: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startApiProcess(env: Record<string, string>, home: string): Promise<ApiProcess> {
  const tokensFile = path.join(home, 'api-tokens.json');
  const fullToken = addToken(tokensFile, 'test-full', false);
  const readToken = addToken(tokensFile, 'test-reader', true);
  const port = await freePort();
  const child: ChildProcess = spawn(path.join(repoRoot, 'br'), ['serve', '--port', String(port), '--tokens', tokensFile], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`br serve did not start within 90 s: ${output}`)), 90_000);
    const check = () => {
      if (!output.includes('listening on')) return;
      clearTimeout(timer);
      resolve();
    };
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`br serve exited with ${code}: ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    fullToken,
    readToken,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

export interface ApiAnswer<T = unknown> {
  status: number;
  body: T;
}

export async function callApi<T = Record<string, unknown>>(
  api: ApiProcess,
  method: string,
  route: string,
  options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiAnswer<T>> {
  const token = options.token === undefined ? api.fullToken : options.token;
  const response = await fetch(`${api.url}${route}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // text routes (logs, SVG)
  }
  return { status: response.status, body: body as T };
}

export interface ServerEvent {
  event: string;
  data: unknown;
}

/** Reads a run's SSE stream to its end (the server closes it after `result` or `end`). */
export async function readEvents(api: ApiProcess, runId: string): Promise<ServerEvent[]> {
  const response = await fetch(`${api.url}/runs/${encodeURIComponent(runId)}/events`, { headers: { authorization: `Bearer ${api.fullToken}` } });
  if (response.status !== 200) throw new Error(`events of ${runId}: HTTP ${response.status} ${await response.text()}`);
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [eventLine = '', dataLine = ''] = block.split('\n');
      return { event: eventLine.slice('event: '.length), data: JSON.parse(dataLine.slice('data: '.length)) as unknown };
    });
}

// A model that answers every chat request with one fixed reply and keeps the requests: a test runs a
// benchmark against it once to learn the exact prompts, then writes a replay answers file for them.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CaptureModel {
  url: string;
  /** Each chat request's messages, in arrival order. */
  requests: unknown[][];
  close(): Promise<void>;
}

/** delayMs: how long each answer takes, so that a test can act while a benchmark is mid-run. */
export async function startCaptureModel(reply: string, options: { host?: string; delayMs?: number } = {}): Promise<CaptureModel> {
  const requests: unknown[][] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const parsed = body ? (JSON.parse(body) as { messages?: unknown[] }) : {};
      if (Array.isArray(parsed.messages)) requests.push(parsed.messages);
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'capture',
            object: 'chat.completion',
            created: 0,
            model: 'capture',
            choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
            usage,
          }),
        );
      }, options.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

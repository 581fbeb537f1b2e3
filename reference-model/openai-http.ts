// The HTTP plumbing both test models share (the reference model and the replay model): OpenAI-style
// JSON errors, bounded request bodies, JSON and server-sent-event responses.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type JsonObject = Record<string, unknown>;

const MAX_BODY_BYTES = 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

export function messageText(message: unknown, index: number): string {
  if (typeof message !== 'object' || message === null) {
    throw new HttpError(400, `messages[${index}]: expected an object`, 'invalid_request_error', 'invalid_value');
  }
  const content = (message as JsonObject)['content'];
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content)) {
    return content
      .filter((part): part is { type: 'text'; text: string } => part?.type === 'text' && typeof part.text === 'string')
      .map((part) => part.text)
      .join('\n');
  }
  throw new HttpError(400, `messages[${index}].content: expected a string or an array of parts`, 'invalid_request_error', 'invalid_value');
}

export function wantsStreamUsage(body: JsonObject): boolean {
  const options = body['stream_options'];
  return typeof options === 'object' && options !== null && (options as JsonObject)['include_usage'] === true;
}

export function parseJsonObject(text: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`, 'invalid_request_error', 'invalid_json');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'request body: expected a JSON object', 'invalid_request_error', 'invalid_json');
  }
  return value as JsonObject;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        // Keep reading (and discarding) so the error response reaches the client.
        reject(new HttpError(413, `request body exceeds ${MAX_BODY_BYTES} bytes`, 'invalid_request_error', 'body_too_large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!tooLarge) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// Responses

/** Splits a reply into up to 3 pieces at word boundaries, so streaming clients see real deltas. */
export function splitForStreaming(text: string): string[] {
  const words = text.split(/(?=\s)/u);
  const pieceCount = Math.min(3, words.length);
  return Array.from({ length: pieceCount }, (_, piece) =>
    words.slice(Math.floor((piece * words.length) / pieceCount), Math.floor(((piece + 1) * words.length) / pieceCount)).join(''),
  );
}

export function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendEventStream(res: ServerResponse, events: unknown[]): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.end(events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('') + 'data: [DONE]\n\n');
}

export function sendError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.status, { error: { message: error.message, type: error.type, param: null, code: error.code } });
}

/** A test model listening: its OpenAI base URL and how to stop it. */
export interface ListeningModel {
  /** `http://<host>:<port>/v1`; a wildcard address is shown as loopback, an IPv6 one in brackets. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on `host:port` (0: any free port); close() also drops kept-alive connections, after `beforeClose`. */
export async function listenAsModel(server: Server, port: number, host: string, beforeClose: () => void = () => undefined): Promise<ListeningModel> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${bound}/v1`,
    port: bound,
    close: () =>
      new Promise<void>((resolve, reject) => {
        beforeClose();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

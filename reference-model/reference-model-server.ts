// A deterministic OpenAI-compatible HTTP server backed by `referenceAnswer`, for integration tests,
// the demo and perf runs. Faults are injected through the model name: `fail429x<K>`, `delay<MS>`; a
// `thinking<N>` model thinks N words in `<think>…</think>` before answering (reference-answer.ts).

import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  HttpError,
  listenAsModel,
  messageText,
  parseJsonObject,
  readBody,
  sendError,
  sendEventStream,
  sendJson,
  splitForStreaming,
  wantsStreamUsage,
  type JsonObject,
  type ListeningModel,
} from './openai-http.js';
import { countTokens, fnv1a32, isSampled, parseAccuracy, referenceAnswer, thinkingAnswer } from './reference-answer.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: { authorization?: string };
  /** The parsed JSON body; undefined for bodiless requests and for bodies that failed to parse. */
  body: unknown;
  /** Milliseconds since the epoch when the request was received. */
  time: number;
  /** The usage the server answered with (successful completions only), to check metering against. */
  usage?: Usage;
}

export interface ReferenceModelServer extends ListeningModel {
  /** Every request received, in arrival order (empty when started with `recordRequests: false`). */
  requests: RecordedRequest[];
  /**
   * What `GET /v1/models` lists from now on, first entry first: a training run's server swapping in a
   * new checkpoint (scheduled evaluation names its runs by the first id).
   */
  serveModels(ids: readonly string[]): void;
}

export interface ReferenceModelOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Keep every request in `requests` (default true). Perf runs turn it off to keep memory flat. */
  recordRequests?: boolean;
  /** The ids `GET /v1/models` lists (default REFERENCE_MODEL_NAMES); any `reference-acc<N>` name answers. */
  servedModels?: readonly string[];
}

export const REFERENCE_MODEL_NAMES = ['reference', 'reference-acc80', 'reference-acc50'] as const;

const EMBEDDING_DIMENSIONS = 16;

export async function startReferenceModel(opts: ReferenceModelOptions = {}): Promise<ReferenceModelServer> {
  const host = opts.host ?? '127.0.0.1';
  const recordRequests = opts.recordRequests ?? true;
  const requests: RecordedRequest[] = [];
  // Chat requests seen per exact model name, for `fail429x<K>`.
  const chatRequestsByModel = new Map<string, number>();
  const pendingDelays = new Set<NodeJS.Timeout>();
  let completionCounter = 0;
  // How often each prompt was asked of a sampled model: the k-th asking is draw k (reference-answer.ts).
  const asked = new Map<string, number>();
  const drawFor = (model: string, prompt: string): number => {
    if (!isSampled(model)) return 0;
    const key = `${model}\0${prompt}`;
    const draw = asked.get(key) ?? 0;
    asked.set(key, draw + 1);
    return draw;
  };
  let modelList = modelListOf(opts.servedModels ?? REFERENCE_MODEL_NAMES);

  const server = createServer({ keepAlive: true }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof HttpError) {
        sendError(res, error);
      } else {
        sendError(res, new HttpError(500, `internal error: ${String(error)}`, 'server_error'));
      }
    });
  });
  // Load generators hold connections open between bursts; don't make them reconnect.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const record: RecordedRequest = {
      method,
      path,
      headers: req.headers.authorization === undefined ? {} : { authorization: req.headers.authorization },
      body: undefined,
      time: Date.now(),
    };
    if (recordRequests) requests.push(record);

    if (path === '/v1/models') {
      req.resume();
      if (method !== 'GET') throw methodNotAllowed(path, 'GET', method);
      sendJson(res, 200, modelList);
      return;
    }
    // OpenAI's retrieve-model route: the reference model answers any name whose accuracy it can read.
    if (path.startsWith('/v1/models/') && method === 'GET') {
      req.resume();
      const id = decodeURIComponent(path.slice('/v1/models/'.length));
      try {
        parseAccuracy(id);
      } catch (error) {
        throw new HttpError(404, (error as Error).message, 'invalid_request_error', 'model_not_found');
      }
      sendJson(res, 200, { id, object: 'model', created: 0, owned_by: 'benchrouter' });
      return;
    }
    const respond = POST_ROUTES[path];
    if (respond === undefined) {
      req.resume();
      throw new HttpError(404, `unknown path: ${method} ${path}`, 'invalid_request_error', 'not_found');
    }
    if (method !== 'POST') {
      req.resume();
      throw methodNotAllowed(path, 'POST', method);
    }

    const body = parseJsonObject(await readBody(req));
    record.body = body;
    const model = requireString(body, 'model');
    try {
      parseAccuracy(model);
    } catch (error) {
      throw new HttpError(400, (error as Error).message, 'invalid_request_error', 'model_not_found');
    }

    await delayFor(model);

    if (path === '/v1/chat/completions') {
      const failures = Number(/fail429x(\d+)/.exec(model)?.[1] ?? 0);
      if (failures > 0) {
        const seen = (chatRequestsByModel.get(model) ?? 0) + 1;
        chatRequestsByModel.set(model, seen);
        if (seen <= failures) {
          res.setHeader('Retry-After', '0');
          throw new HttpError(429, `rate limit exceeded (injected by ${model}: request ${seen} of ${failures} failing)`, 'requests', 'rate_limit_exceeded');
        }
      }
    }

    completionCounter += 1;
    const usage = respond(res, body, model, completionCounter, drawFor);
    if (usage) record.usage = usage;
  }

  async function delayFor(model: string): Promise<void> {
    const delayMs = Number(/delay(\d+)/.exec(model)?.[1] ?? 0);
    if (delayMs <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        pendingDelays.delete(timer);
        resolve();
      }, delayMs);
      pendingDelays.add(timer);
    });
  }

  const listening = await listenAsModel(server, opts.port ?? 0, host, () => {
    for (const timer of pendingDelays) clearTimeout(timer);
    pendingDelays.clear();
  });
  return {
    ...listening,
    requests,
    serveModels: (ids) => {
      modelList = modelListOf(ids);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Routes

type Respond = (res: ServerResponse, body: JsonObject, model: string, counter: number, drawFor: (model: string, prompt: string) => number) => Usage | void;

function modelListOf(ids: readonly string[]) {
  return { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: 0, owned_by: 'benchrouter' })) };
}

const POST_ROUTES: Record<string, Respond | undefined> = {
  '/v1/chat/completions': respondChat,
  '/v1/completions': respondCompletion,
  '/v1/embeddings': respondEmbeddings,
};

function methodNotAllowed(path: string, expected: string, got: string): HttpError {
  return new HttpError(405, `${path} expects ${expected}, got ${got}`, 'invalid_request_error', 'method_not_allowed');
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Only for model names containing `cost`: $0.01 per 1,000 prompt tokens, $0.02 per 1,000 completion tokens. */
  cost?: number;
  /** Only for `thinking` models: the completion tokens spent thinking. */
  completion_tokens_details?: { reasoning_tokens: number };
}

function usageOf(prompt: string, answers: string[], model: string): Usage {
  const promptTokens = countTokens(prompt);
  const completionTokens = answers.reduce((sum, answer) => sum + countTokens(answer), 0);
  const usage: Usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  // Some upstreams (OpenRouter, for one) report what a call cost; `cost` models do too.
  if (model.includes('cost')) usage.cost = (promptTokens * 1 + completionTokens * 2) / 100_000;
  return usage;
}

function respondChat(res: ServerResponse, body: JsonObject, model: string, counter: number, drawFor: (model: string, prompt: string) => number): Usage {
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new HttpError(400, 'messages: expected a non-empty array', 'invalid_request_error', 'invalid_value');
  }
  const contents = messages.map((message: unknown, index) => messageText(message, index));
  let lastUserText = '';
  messages.forEach((message: unknown, index) => {
    if ((message as JsonObject)['role'] === 'user') lastUserText = contents[index]!;
  });
  const reference = referenceAnswer(model, lastUserText, drawFor(model, lastUserText));
  const thinking = thinkingAnswer(model, reference, typeof body['max_tokens'] === 'number' ? body['max_tokens'] : undefined);
  const answer = thinking?.text ?? reference;
  const finish = thinking?.finish ?? 'stop';
  const usage = usageOf(contents.join('\n'), [answer], model);
  if (thinking) usage.completion_tokens_details = { reasoning_tokens: thinking.reasoningTokens };
  const id = `chatcmpl-ref-${counter}`;

  if (body['stream'] !== true) {
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: 0,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: answer }, logprobs: null, finish_reason: finish }],
      usage,
    });
    return usage;
  }

  const includeUsage = wantsStreamUsage(body);
  const chunk = (choices: unknown[], extra: JsonObject = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices,
    ...(includeUsage ? { usage: null } : {}),
    ...extra,
  });
  const events: unknown[] = [chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }])];
  for (const piece of splitForStreaming(answer)) {
    events.push(chunk([{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }]));
  }
  events.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]));
  if (includeUsage) events.push(chunk([], { usage }));
  sendEventStream(res, events);
  return usage;
}

function respondCompletion(res: ServerResponse, body: JsonObject, model: string, counter: number, drawFor: (model: string, prompt: string) => number): Usage {
  const prompts = promptList(body['prompt']);
  const answers = prompts.map((prompt) => referenceAnswer(model, prompt, drawFor(model, prompt)));
  const usage = usageOf(prompts.join('\n'), answers, model);
  const id = `cmpl-ref-${counter}`;

  if (body['stream'] !== true) {
    sendJson(res, 200, {
      id,
      object: 'text_completion',
      created: 0,
      model,
      choices: answers.map((text, index) => ({ index, text, logprobs: null, finish_reason: 'stop' })),
      usage,
    });
    return usage;
  }

  const includeUsage = wantsStreamUsage(body);
  const chunk = (choices: unknown[], extra: JsonObject = {}) => ({
    id,
    object: 'text_completion',
    created: 0,
    model,
    choices,
    ...(includeUsage ? { usage: null } : {}),
    ...extra,
  });
  const events: unknown[] = [];
  answers.forEach((answer, index) => {
    for (const piece of splitForStreaming(answer)) {
      events.push(chunk([{ index, text: piece, logprobs: null, finish_reason: null }]));
    }
    events.push(chunk([{ index, text: '', logprobs: null, finish_reason: 'stop' }]));
  });
  if (includeUsage) events.push(chunk([], { usage }));
  sendEventStream(res, events);
  return usage;
}

function respondEmbeddings(res: ServerResponse, body: JsonObject, model: string): void {
  const input = body['input'];
  const texts =
    typeof input === 'string'
      ? [input]
      : Array.isArray(input) && input.length > 0 && input.every((item) => typeof item === 'string')
        ? (input as string[])
        : undefined;
  if (texts === undefined) {
    throw new HttpError(400, 'input: expected a string or a non-empty array of strings', 'invalid_request_error', 'invalid_value');
  }
  // The official SDKs ask for base64 by default: little-endian float32s.
  const base64 = body['encoding_format'] === 'base64';
  const promptTokens = texts.reduce((sum, text) => sum + countTokens(text), 0);
  sendJson(res, 200, {
    object: 'list',
    data: texts.map((text, index) => {
      const vector = embed(text);
      return {
        object: 'embedding',
        index,
        embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
      };
    }),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}

/** A deterministic unit vector: one FNV-1a hash per dimension, mapped to [-1, 1], then normalized. */
export function embed(text: string): number[] {
  const raw = Array.from({ length: EMBEDDING_DIMENSIONS }, (_, dimension) => fnv1a32(`${dimension}:${text}`) / 0x7fffffff - 1);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((value) => value / norm);
}

// ---------------------------------------------------------------------------------------------
// Request parsing

function promptList(prompt: unknown): string[] {
  if (typeof prompt === 'string') return [prompt];
  if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((item) => typeof item === 'string')) return prompt as string[];
  throw new HttpError(400, 'prompt: expected a string or a non-empty array of strings', 'invalid_request_error', 'invalid_value');
}

function requireString(body: JsonObject, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new HttpError(400, `${field}: expected a non-empty string`, 'invalid_request_error', 'invalid_value');
  }
  return value;
}

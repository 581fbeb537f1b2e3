// The replay model: an OpenAI-compatible server that answers every request from a file of canned
// completions (text or tool calls, plain or streamed), keyed by a stable hash of the request. With
// answers known to be right for some instances, a real benchmark's expected score is known exactly.
// An unknown request is an error naming its key and the answers file, and can be logged to a file of
// misses from which the answers file is written.

import { setTimeout as sleep } from 'node:timers/promises';
import { appendFileSync } from 'node:fs';
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
import { countTokens } from './reference-answer.js';
import { findChatAnswer, loadAnswers, type ReplayAnswer } from './replay-answers.js';
import { messagesKey, promptKey } from './replay-key.js';

export interface ReplayModelOptions {
  answersFile: string;
  port?: number;
  host?: string;
  /** Each unknown request is appended here as `{"key", "messages"|"prompt"}`, ready to be answered. */
  missesFile?: string;
  /** Each answer waits this long first, as a real model takes time (default 0). */
  delayMs?: number;
}

export interface ReplayModelServer extends ListeningModel {
  /** Requests answered and requests refused as unknown, since start. */
  counts: { answered: number; unknown: number };
}

export async function startReplayModel(options: ReplayModelOptions): Promise<ReplayModelServer> {
  const answers = loadAnswers(options.answersFile);
  const counts = { answered: 0, unknown: 0 };

  const find = (key: string, request: JsonObject): ReplayAnswer => {
    const answer = Array.isArray(request.messages) ? findChatAnswer(answers, key, request.messages) : answers.byKey.get(key);
    if (answer) {
      counts.answered += 1;
      return answer;
    }
    counts.unknown += 1;
    if (options.missesFile) appendFileSync(options.missesFile, `${JSON.stringify({ key, ...request })}\n`);
    throw new HttpError(
      404,
      `no answer for request ${key} in ${options.answersFile}: add a line with "key": "${key}" (or the request's messages) and its answer`,
      'invalid_request_error',
      'unknown_request',
    );
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0]!.replace(/\/+$/, '');
    if (req.method === 'GET' && path === '/v1/models') {
      sendJson(res, 200, { object: 'list', data: [{ id: 'replay', object: 'model', created: 0, owned_by: 'benchrouter' }] });
      return;
    }
    // OpenAI's retrieve-model route: canned answers are keyed by request, whatever model is named.
    if (req.method === 'GET' && path.startsWith('/v1/models/')) {
      sendJson(res, 200, { id: decodeURIComponent(path.slice('/v1/models/'.length)), object: 'model', created: 0, owned_by: 'benchrouter' });
      return;
    }
    if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/completions')) {
      throw new HttpError(
        404,
        `${req.method} ${path}: the replay model serves POST /v1/chat/completions, POST /v1/completions and GET /v1/models`,
        'invalid_request_error',
        'unknown_route',
      );
    }
    const body = parseJsonObject(await readBody(req));
    if (options.delayMs) await sleep(options.delayMs);
    const model = typeof body.model === 'string' ? body.model : 'replay';
    if (path === '/v1/completions') {
      if (typeof body.prompt !== 'string')
        throw new HttpError(400, 'prompt: the replay model expects one prompt string', 'invalid_request_error', 'invalid_value');
      respondCompletion(res, body, model, find(promptKey(body.prompt), { prompt: body.prompt }));
      return;
    }
    const messages = body.messages;
    if (!Array.isArray(messages) || messages.length === 0)
      throw new HttpError(400, 'messages: expected a non-empty array', 'invalid_request_error', 'invalid_value');
    const key = messagesKey(messages);
    respondChat(res, body, model, key, find(key, { messages }), messages.map((m, i) => messageText(m, i)).join('\n'));
  };

  const server = createServer({ keepAlive: true }, (req, res) => {
    handle(req, res).catch((error: unknown) =>
      sendError(res, error instanceof HttpError ? error : new HttpError(500, `internal error: ${String(error)}`, 'server_error')),
    );
  });
  return { ...(await listenAsModel(server, options.port ?? 0, options.host ?? '127.0.0.1')), counts };
}

function usageOf(answer: ReplayAnswer, promptText: string) {
  const completion = (answer.content ?? '') + answer.toolCalls.map((call) => `${call.name} ${call.arguments}`).join('\n');
  const prompt_tokens = answer.usage?.prompt_tokens ?? countTokens(promptText);
  const completion_tokens = answer.usage?.completion_tokens ?? countTokens(completion);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function respondChat(res: ServerResponse, body: JsonObject, model: string, key: string, answer: ReplayAnswer, promptText: string): void {
  const id = `chatcmpl-replay-${key.slice(0, 16)}`;
  // Ids are derived from the request, so a harness that sends them back in the next turn hashes the same.
  const toolCalls = answer.toolCalls.map((call, index) => ({
    id: call.id ?? `call_${key.slice(0, 12)}_${index}`,
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments },
  }));
  const finishReason = answer.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
  const usage = usageOf(answer, promptText);
  if (body.stream !== true) {
    const message = { role: 'assistant', content: answer.content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: 0,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      usage,
    });
    return;
  }
  const includeUsage = wantsStreamUsage(body);
  const chunk = (delta: JsonObject, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const events: unknown[] = [chunk({ role: 'assistant', content: '' }, null)];
  if (answer.content) for (const piece of splitForStreaming(answer.content)) events.push(chunk({ content: piece }, null));
  toolCalls.forEach((call, index) => {
    events.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, null));
    for (const piece of splitForStreaming(call.function.arguments)) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null));
  });
  events.push(chunk({}, finishReason));
  if (includeUsage) events.push({ id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage });
  sendEventStream(res, events);
}

function respondCompletion(res: ServerResponse, body: JsonObject, model: string, answer: ReplayAnswer): void {
  const text = answer.content ?? '';
  const usage = usageOf(answer, body.prompt as string);
  const id = 'cmpl-replay';
  const finishReason = answer.finishReason ?? 'stop';
  if (body.stream !== true) {
    sendJson(res, 200, { id, object: 'text_completion', created: 0, model, choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason }], usage });
    return;
  }
  const events: unknown[] = splitForStreaming(text).map((piece) => ({
    id,
    object: 'text_completion',
    created: 0,
    model,
    choices: [{ index: 0, text: piece, logprobs: null, finish_reason: null }],
  }));
  events.push({ id, object: 'text_completion', created: 0, model, choices: [{ index: 0, text: '', logprobs: null, finish_reason: finishReason }] });
  if (wantsStreamUsage(body)) events.push({ id, object: 'text_completion', created: 0, model, choices: [], usage });
  sendEventStream(res, events);
}

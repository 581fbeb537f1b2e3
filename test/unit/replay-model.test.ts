// The replay model answers from a file keyed by a stable hash of the request, streams text and tool
// calls the way OpenAI does, and names the key and the file for a request it has no answer for.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../contract/problems.js';
import { findChatAnswer, parseAnswers } from '../../reference-model/replay-answers.js';
import { messagesKey, promptKey } from '../../reference-model/replay-key.js';
import { startReplayModel, type ReplayModelServer } from '../../reference-model/replay-model-server.js';

const question = [{ role: 'user', content: 'What is 2+2?' }];
const weather = [
  { role: 'system', content: 'You call tools.' },
  { role: 'user', content: 'Weather in Paris? 🌧' },
];

describe('replay keys', () => {
  it('hash the same conversation the same whatever the key order, spacing of tool arguments or empty contents', () => {
    const a = [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x": 1, "y": [2]}' } }] }];
    const b = [{ tool_calls: [{ function: { arguments: '{"y":[2],"x":1}', name: 'f' }, id: 'c1' }], content: '', role: 'assistant' }];
    expect(messagesKey(a)).toBe(messagesKey(b));
  });

  it('tell different contents, roles and prompts apart', () => {
    expect(messagesKey(question)).not.toBe(messagesKey([{ role: 'user', content: 'What is 2+3?' }]));
    expect(messagesKey(question)).not.toBe(messagesKey([{ role: 'system', content: 'What is 2+2?' }]));
    expect(promptKey('a')).not.toBe(promptKey('b'));
    expect(messagesKey(question)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('answers file', () => {
  it('reports every bad line with its number, all at once', () => {
    const text = [
      JSON.stringify({ messages: question, content: '4' }),
      '{not json',
      JSON.stringify({ messages: question, content: 'again' }),
      JSON.stringify({ prompt: 'p' }),
      JSON.stringify({ key: 'abc', content: 'x' }),
    ].join('\n');
    let error: unknown;
    try {
      parseAnswers(text, 'answers.jsonl');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    const lines = (error as InputError).problems.map((p) => `${p.field}: ${p.message}`);
    expect(lines[0]).toMatch(/^line 2: not valid JSON/);
    expect(lines[1]).toBe(`line 3: answers the same request as line 1 (key ${messagesKey(question)})`);
    expect(lines[2]).toBe('line 4: expected "content" or "tool_calls": the answer itself');
    expect(lines[3]).toBe('line 5 key: expected a 64-character sha256 hex key');
    expect(lines).toHaveLength(4);
  });

  it('refuses a scripted line without its turn, and two for the same match and turn', () => {
    const text = [
      JSON.stringify({ match: 'Task: copy', turn: 0, content: 'a' }),
      JSON.stringify({ match: 'Task: copy', content: 'b' }),
      JSON.stringify({ match: 'Task: copy', turn: 0, content: 'c' }),
      JSON.stringify({ match: 'Task: copy', messages: question, turn: 1, content: 'd' }),
    ].join('\n');
    expect(() => parseAnswers(text, 'answers.jsonl')).toThrow(InputError);
    try {
      parseAnswers(text, 'answers.jsonl');
    } catch (error) {
      expect((error as InputError).problems.map((p) => `${p.field}: ${p.message}`)).toEqual([
        'line 2: expected "match" and "turn" together: the text the first user message contains, and how many answers came before',
        'line 3: answers the same match and turn as line 1',
        'line 4: expected exactly one of "key", "messages", "prompt" or "match" to say which request this answers',
      ]);
    }
  });

  it('answers a scripted conversation by its first user message and turn, a keyed answer first', () => {
    const first = { role: 'user', content: 'Task: copy a.txt to b.txt\nroot@4f2a:/app#' };
    const answers = parseAnswers(
      [
        JSON.stringify({ match: 'copy a.txt', turn: 0, content: 'cp a.txt b.txt' }),
        JSON.stringify({ match: 'copy a.txt', turn: 1, content: 'done' }),
        JSON.stringify({ messages: [{ role: 'user', content: 'Task: copy a.txt to b.txt\nroot@keyed:/app#' }], content: 'keyed' }),
      ].join('\n'),
      'answers.jsonl',
    );
    const find = (messages: unknown[]) => findChatAnswer(answers, messagesKey(messages), messages)?.content;
    expect(find([first])).toBe('cp a.txt b.txt');
    // Another container's prompt, the same task: the same script.
    expect(find([{ ...first, content: first.content.replace('4f2a', '9c1e') }])).toBe('cp a.txt b.txt');
    expect(find([{ role: 'system', content: 's' }, first, { role: 'assistant', content: 'x' }, { role: 'user', content: 'ok?' }])).toBe('done');
    expect(find([first, { role: 'assistant', content: 'x' }, { role: 'user', content: 'y' }, { role: 'assistant', content: 'z' }])).toBeUndefined();
    expect(find([{ role: 'user', content: 'Task: copy a.txt to b.txt\nroot@keyed:/app#' }])).toBe('keyed');
    expect(find([{ role: 'user', content: 'Task: something else' }])).toBeUndefined();
  });
});

describe('replay model server', () => {
  let dir: string;
  let server: ReplayModelServer;
  let answersFile: string;
  let missesFile: string;
  const post = (route: string, body: unknown) =>
    fetch(`${server.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'br-replay-'));
    answersFile = path.join(dir, 'answers.jsonl');
    missesFile = path.join(dir, 'misses.jsonl');
    writeFileSync(
      answersFile,
      [
        JSON.stringify({ messages: question, content: 'The answer is 4.' }),
        JSON.stringify({ messages: weather, content: null, tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris', unit: '°C' } } }] }),
        JSON.stringify({ prompt: 'Once upon', content: ' a time', usage: { prompt_tokens: 7, completion_tokens: 3 } }),
      ].join('\n'),
    );
    server = await startReplayModel({ answersFile, missesFile });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a known chat request with its canned content and token usage', async () => {
    const res = await post('/chat/completions', { model: 'm', messages: question, temperature: 0 });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      choices: Array<{ message: { content: string }; finish_reason: string }>;
      usage: { prompt_tokens: number; completion_tokens: number };
    };
    expect(body.choices[0]!.message.content).toBe('The answer is 4.');
    expect(body.choices[0]!.finish_reason).toBe('stop');
    expect(body.usage).toEqual({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
  });

  it('streams a tool call whose reassembled arguments equal the canned ones byte for byte', async () => {
    const res = await post('/chat/completions', { model: 'm', messages: weather, stream: true, stream_options: { include_usage: true } });
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
      .map(
        (e) =>
          JSON.parse(e.slice(6)) as {
            choices: Array<{ delta: { tool_calls?: Array<{ id?: string; function: { name?: string; arguments?: string } }> }; finish_reason: string | null }>;
            usage: unknown;
          },
      );
    const calls = events.flatMap((e) => e.choices.flatMap((c) => c.delta.tool_calls ?? []));
    expect(calls[0]!.function.name).toBe('get_weather');
    expect(calls[0]!.id).toMatch(/^call_[0-9a-f]{12}_0$/);
    expect(calls.map((c) => c.function.arguments ?? '').join('')).toBe(JSON.stringify({ city: 'Paris', unit: '°C' }));
    expect(events.find((e) => e.choices[0]?.finish_reason)?.choices[0]!.finish_reason).toBe('tool_calls');
    expect(events.at(-1)!.usage).toMatchObject({ prompt_tokens: expect.any(Number) as number });
  });

  it('answers a completion by its prompt, with the usage the file gives', async () => {
    const body = (await (await post('/completions', { model: 'm', prompt: 'Once upon' })).json()) as { choices: Array<{ text: string }>; usage: unknown };
    expect(body.choices[0]!.text).toBe(' a time');
    expect(body.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
  });

  it('refuses an unknown request with a 404 naming its key and the answers file, and logs it as a miss', async () => {
    const unknown = [{ role: 'user', content: 'Something else' }];
    const res = await post('/chat/completions', { model: 'm', messages: unknown });
    expect(res.status).toBe(404);
    const { error } = (await res.json()) as { error: { message: string; code: string } };
    expect(error.code).toBe('unknown_request');
    expect(error.message).toContain(messagesKey(unknown));
    expect(error.message).toContain(answersFile);
    expect(
      readFileSync(missesFile, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([{ key: messagesKey(unknown), messages: unknown }]);
    expect(server.counts).toMatchObject({ unknown: 1 });
  });
});

// The API's rate limit per token (@fastify/rate-limit in api/api-server.ts), through Fastify's inject on
// a route that reads only the filesystem (a job's log), so no Temporal is needed; and its setting.

import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiServer } from '../../api/api-server.js';
import { addToken, tokenVerifier } from '../../api/api-tokens.js';
import { DEFAULT_API_RATE_LIMIT, settingsFrom } from '../../config/settings.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-api-rate-'));
const tokensFile = path.join(scratch, 'api-tokens.json');
const first = addToken(tokensFile, 'first', true);
const second = addToken(tokensFile, 'second', true);
let app: FastifyInstance;

/** A job log that does not exist: 404, decided without Temporal, after the limit is counted. */
const logOf = (token: string) => app.inject({ method: 'GET', url: '/runs/br-1/jobs/br-1.000-t/log', headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  const settings = settingsFrom({ BENCHROUTER_HOME: scratch, TEMPORAL_ADDRESS: '127.0.0.1:9', BENCHROUTER_API_RATE_LIMIT: '3' }, os.homedir());
  app = await buildApiServer({ client: {} as Client, settings, verifyToken: tokenVerifier(tokensFile) });
});

afterAll(async () => {
  await app?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the API rate limit', () => {
  it('answers a token over its requests per minute with 429, Retry-After and the JSON error, and leaves other tokens alone', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await logOf(first);
      expect(answer.statusCode).toBe(404);
      expect(answer.headers['x-ratelimit-remaining']).toBe(String(2 - i));
    }
    const over = await logOf(first);
    expect(over.statusCode).toBe(429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(59);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(over.headers['x-ratelimit-limit']).toBe('3');
    expect(over.json()).toEqual({
      error: {
        code: 'TOO_MANY_REQUESTS',
        message: `token "first" made more than 3 requests in a minute; retry in ${over.headers['retry-after']} s (the Retry-After header)`,
      },
    });
    expect((await logOf(second)).statusCode).toBe(404);
  });

  it('does not count requests refused for a missing token against any token', async () => {
    const anonymous = await app.inject({ method: 'GET', url: '/runs' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('reads its setting from BENCHROUTER_API_RATE_LIMIT, 600 by default, and refuses a value that is not a whole number', () => {
    expect(settingsFrom({}, '/home/u').apiRateLimit).toBe(DEFAULT_API_RATE_LIMIT);
    expect(DEFAULT_API_RATE_LIMIT).toBe(600);
    expect(settingsFrom({ BENCHROUTER_API_RATE_LIMIT: '0' }, '/home/u').apiRateLimit).toBe(0);
    expect(() => settingsFrom({ BENCHROUTER_API_RATE_LIMIT: '10/s' }, '/home/u')).toThrow(
      'BENCHROUTER_API_RATE_LIMIT: expected a whole number of requests per minute per token (0: no limit), got "10/s"',
    );
  });
});

describe('the API without a rate limit', () => {
  it('sends no rate-limit headers when the limit is 0', async () => {
    const settings = settingsFrom({ BENCHROUTER_HOME: scratch, TEMPORAL_ADDRESS: '127.0.0.1:9', BENCHROUTER_API_RATE_LIMIT: '0' }, os.homedir());
    const open = await buildApiServer({ client: {} as Client, settings, verifyToken: tokenVerifier(tokensFile) });
    try {
      for (let i = 0; i < 5; i++) {
        const answer = await open.inject({ method: 'GET', url: '/runs/br-1/jobs/br-1.000-t/log', headers: { authorization: `Bearer ${first}` } });
        expect(answer.statusCode).toBe(404);
        expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await open.close();
    }
  });
});

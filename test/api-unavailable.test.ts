// The API when Temporal cannot be reached: 503 with the JSON error shape, not a 500. A real server
// (in-process) and a real client whose connection points at a port nothing listens on; the client's own
// retries of UNAVAILABLE take about 20 s, hence an integration test rather than a unit one.

import { Client, Connection } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApiServer } from '../api/api-server.js';
import { addToken, tokenVerifier } from '../api/api-tokens.js';
import { freePort } from '../embedded/embedded-services.js';
import { settingsFrom } from '../config/settings.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-api-unavailable-'));
let client: Client;
let token: string;
let app: Awaited<ReturnType<typeof buildApiServer>>;

beforeAll(async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const settings = settingsFrom({ BENCHROUTER_HOME: scratch, TEMPORAL_ADDRESS: address }, scratch);
  client = new Client({ connection: Connection.lazy({ address, connectTimeout: '1s' }) });
  const tokens = path.join(scratch, 'tokens.json');
  token = addToken(tokens, 't', false);
  app = await buildApiServer({ client, settings, verifyToken: tokenVerifier(tokens) });
});

afterAll(async () => {
  await app.close();
  rmSync(scratch, { recursive: true, force: true });
});

it('answers 503 UNAVAILABLE when Temporal cannot be reached', async () => {
  const answer = await app.inject({ method: 'GET', url: '/runs', headers: { authorization: `Bearer ${token}` } });
  expect(answer.statusCode).toBe(503);
  expect(answer.json()).toMatchObject({ error: { code: 'UNAVAILABLE' } });
});

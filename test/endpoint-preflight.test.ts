// An endpoint that cannot serve a run fails it in seconds, before anything starts: nothing listening, a model
// the server does not list, a key it refuses; the judge's and the user simulator's the same way. `br run` exits 2
// naming the endpoint and what it answered; `--no-preflight` submits as before. Real dev server and worker; the
// endpoints are small servers of this file's own.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExists, runHandle } from '../client/runs.js';
import { br, repoRoot, startHarness, type Harness } from './support/harness.js';

const arithDir = path.join(repoRoot, 'benchmarks', 'arith');
let h: Harness;
/** Lists one model, "served-one", and knows no other; refuses any key but "right-key". */
let strict: Server;
let strictUrl: string;

beforeAll(async () => {
  h = await startHarness('preflight');
  strict = createServer((req, res) => {
    if (req.headers.authorization !== undefined && req.headers.authorization !== 'Bearer right-key') {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error": {"message": "Incorrect API key provided"}}');
      return;
    }
    if (req.url === '/v1/models') res.writeHead(200, { 'content-type': 'application/json' }).end('{"object": "list", "data": [{"id": "served-one"}]}');
    else res.writeHead(404).end('{"error": {"message": "not found"}}');
  });
  await new Promise<void>((resolve) => strict.listen(0, '127.0.0.1', resolve));
  strictUrl = `http://127.0.0.1:${(strict.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => strict?.close(resolve));
});

/** Runs `h.run` and says how long it took to be refused, and with what. */
async function refused(options: Parameters<Harness['run']>[1]): Promise<{ seconds: number; message: string }> {
  const started = Date.now();
  const error = await h.run(arithDir, options).then(
    () => new Error('the run was started'),
    (e: unknown) => e as Error,
  );
  return { seconds: (Date.now() - started) / 1000, message: error.message };
}

describe('the preflight of a run', () => {
  it('refuses in seconds an endpoint nothing listens on, naming it and what its worker saw', async () => {
    const { seconds, message } = await refused({ endpoint: 'http://127.0.0.1:1/v1' });
    expect(seconds).toBeLessThan(10);
    expect(message).toBe(
      'endpoint: http://127.0.0.1:1/v1 (the model "reference"): GET http://127.0.0.1:1/v1/models from worker host host-preflight failed: ECONNREFUSED; the run was not started (--no-preflight skips this check)',
    );
  });

  it('refuses a model the endpoint does not list (nor know by its retrieve route), naming those it lists', async () => {
    const { seconds, message } = await refused({ endpoint: strictUrl, model: 'nope' });
    expect(seconds).toBeLessThan(10);
    expect(message).toContain(`${strictUrl} (the model "nope"): does not serve model "nope": GET ${strictUrl}/models lists "served-one"`);
  });

  it('refuses a key the endpoint refuses, naming the variable it came from', async () => {
    process.env.BR_PREFLIGHT_WRONG = 'wrong-key';
    const { seconds, message } = await refused({ endpoint: strictUrl, model: 'served-one', apiKeyEnv: 'BR_PREFLIGHT_WRONG' });
    expect(seconds).toBeLessThan(10);
    expect(message).toContain(
      `GET ${strictUrl}/models refused the key (HTTP 401: {"error": {"message": "Incorrect API key provided"}}) read from $BR_PREFLIGHT_WRONG`,
    );
  });

  it("checks the user simulator's and the judge's endpoints as the model's, and lets a model the server lists pass", async () => {
    process.env.BR_PREFLIGHT_RIGHT = 'right-key';
    const { message } = await refused({
      endpoint: strictUrl,
      model: 'served-one',
      apiKeyEnv: 'BR_PREFLIGHT_RIGHT',
      userModel: 'served-one',
      userEndpoint: 'http://127.0.0.1:1/v1',
      judgeModel: 'judge-x',
      judgeEndpoint: strictUrl,
      judgeApiKeyEnv: 'BR_PREFLIGHT_RIGHT',
    });
    expect(message.split('\n')).toEqual([
      expect.stringMatching(/^judgeEndpoint: .*\(the judge "judge-x"\): does not serve model "judge-x"/),
      expect.stringMatching(/^userEndpoint: http:\/\/127\.0\.0\.1:1\/v1 \(the user simulator "served-one"\): GET .* failed: ECONNREFUSED/),
    ]);
  });

  it('br run exits 2 and starts nothing; --no-preflight submits as before, and its jobs fail on the dead endpoint', async () => {
    const out = await br(['run', arithDir, '--model', 'reference', '--endpoint', 'http://127.0.0.1:1/v1', '--tasks', 'addition'], h.env);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('endpoint: http://127.0.0.1:1/v1 (the model "reference"): GET http://127.0.0.1:1/v1/models');
    expect(out.stderr).not.toMatch(/run br-\S+: \d+ jobs/);
    const unchecked = await br(
      ['run', arithDir, '--model', 'reference', '--endpoint', 'http://127.0.0.1:1/v1', '--tasks', 'addition', '--no-preflight', '--json'],
      h.env,
    );
    expect(unchecked.code).toBe(4);
    const run = JSON.parse(unchecked.stdout) as { runId: string; jobs: Array<{ status: string; message: string }> };
    expect(run.jobs[0]).toMatchObject({ status: 'FAILED' });
    expect(await runExists(runHandle(h.client, run.runId))).toBe(true);
  }, 180_000);
});

// The Python client's own tests (clients/python/tests), run against a real `br serve`, worker, dev
// server and Docker engine, with the replay model answering arith: `npm test` covers them.

import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplayModel, type ReplayModelServer } from '../reference-model/replay-model-server.js';
import { startApiProcess, type ApiProcess } from './support/api-process.js';
import { replayAnswers } from './support/benchmark-image.js';
import { repoRoot, startHarness, type Harness } from './support/harness.js';

let h: Harness;
let api: ApiProcess;
let replay: ReplayModelServer;

beforeAll(async () => {
  h = await startHarness('pyclient');
  api = await startApiProcess(h.env, h.home);
  replay = await startReplayModel({ answersFile: replayAnswers('arith.jsonl') });
});

afterAll(async () => {
  await api?.stop();
  await replay?.close();
  await h?.close();
});

describe('clients/python', () => {
  it('passes its unittest suite against the real API server', { timeout: 600_000 }, async () => {
    const run = await promisify(execFile)('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-v'], {
      cwd: path.join(repoRoot, 'clients', 'python'),
      env: {
        ...process.env,
        BENCHROUTER_TEST_API_URL: api.url,
        BENCHROUTER_TEST_API_TOKEN: api.fullToken,
        BENCHROUTER_TEST_ENDPOINT: replay.url,
        BENCHROUTER_TEST_ANSWERS: replayAnswers('arith.jsonl'),
      },
      timeout: 540_000,
    }).catch((error: { stdout?: string; stderr?: string; message: string }) => ({
      stdout: error.stdout ?? '',
      stderr: `${error.message}\n${error.stderr ?? ''}`,
    }));
    expect(run.stderr, `${run.stderr}\n--- br serve:\n${api.output()}`).toMatch(/Ran 4 tests in [\d.]+s\n\nOK\n$/);
    expect(run.stderr).not.toContain('skipped');
  });
});

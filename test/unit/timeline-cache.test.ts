// A finished run's calls over time (api/chart-routes.ts callsOf) are read from its transcripts once and kept
// for later views of its page; a read that failed is not kept, so the next view asks again.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApiContext } from '../../api/api-context.js';
import { callsOf } from '../../api/chart-routes.js';
import { createRunReads } from '../../api/run-routes.js';
import type { Settings } from '../../config/settings.js';
import { jobFile } from '../../runs/job-artifacts.js';
import type { JobResult, RunResult } from '../../runs/run-spec.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'br-timeline-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const line = (seq: number, at: string) =>
  JSON.stringify({ seq, at, path: '/v1/chat/completions', status: 200, latency_ms: 5, usage: { prompt_tokens: 7, completion_tokens: 3 } });
const contextOf = (client: unknown): ApiContext => ({
  client: client as ApiContext['client'],
  settings: { artifactsRoot: root } as Settings,
  reads: createRunReads(),
});
const resultOf = (runId: string, jobs: Array<Partial<JobResult>>) => ({ runId, jobs }) as unknown as RunResult;

describe("a finished run's timeline calls", () => {
  it('are read from the transcripts once, then kept', async () => {
    const file = jobFile(root, { runId: 'run-a', jobId: 'run-a/add' }, 'transcript');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${line(1, '2026-12-02T10:00:00.000Z')}\n${line(2, '2026-12-02T10:00:01.000Z')}\n`);
    const context = contextOf(undefined);
    const result = resultOf('run-a', [{ jobId: 'run-a/add' }]);
    const first = await callsOf(context, result);
    expect(first).toEqual([
      { at: '2026-12-02T10:00:00.000Z', tokens: 10 },
      { at: '2026-12-02T10:00:01.000Z', tokens: 10 },
    ]);
    rmSync(file);
    expect(await callsOf(context, result)).toBe(first);
  });

  it('are read again when a host could not be asked for its transcript', async () => {
    let asked = 0;
    const unreachable = {
      get workflow() {
        asked += 1;
        throw new Error('connection refused');
      },
    };
    const context = contextOf(unreachable);
    const result = resultOf('run-b', [{ jobId: 'run-b/add', host: 'elsewhere' }]);
    expect(await callsOf(context, result)).toEqual([]);
    expect(await callsOf(context, result)).toEqual([]);
    expect(asked).toBe(2);
  });
});

// The pure pieces of scheduled checkpoint evaluation: names and intervals checked with messages that
// name the flag, the checkpoint key that makes run ids, a template filled in for one checkpoint, and
// the score-against-checkpoint board built from a schedule's runs.

import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { checkpointKey, servedCheckpoint } from '../../activities/served-checkpoint.js';
import { startReferenceModel } from '../../reference-model/reference-model-server.js';
import { runsQuery } from '../../client/runs.js';
import { checkScheduleName, formatEvery, parseEvery } from '../../client/schedules.js';
import { checkpointBoard } from '../../runs/checkpoint-board.js';
import { runOptions } from '../../runs/run-options.js';
import type { RunSpec } from '../../runs/run-spec.js';
import { checkpointRunId, CHECKPOINT_PLACEHOLDER, instantiateTarget, scheduleRunPrefix } from '../../runs/schedule-spec.js';

const template = (benchmark: string): RunSpec => ({
  runId: 'br-20260101-000000-aaaaaa',
  benchmark: { name: benchmark, dir: `/b/${benchmark}`, digest: 'd1' },
  tasks: [],
  options: runOptions({ model: CHECKPOINT_PLACEHOLDER, endpoint: 'http://trainer:8000/v1', apiKeyEnv: 'TRAINER_KEY' }),
  resolved: { prices: {} },
  cacheFrom: [],
  submittedAt: '2026-01-01T00:00:00.000Z',
});

describe('parseEvery', () => {
  it('reads seconds, minutes, hours and days, and a bare number as minutes', () => {
    expect(['45s', '15m', '2h', '1d', '30', ' 5 m '].map((t) => parseEvery(t, '--every'))).toEqual([45, 900, 7200, 86400, 1800, 300]);
  });

  it('shows an interval in its largest whole unit', () => {
    expect([86400, 7200, 900, 90, 1, 3600 * 36].map(formatEvery)).toEqual(['1d', '2h', '15m', '90s', '1s', '36h']);
  });

  it('refuses zero, fractions and unknown units, naming the flag', () => {
    for (const text of ['0', '0s', '1.5m', '5w', '', 'soon'])
      expect(() => parseEvery(text, '--every')).toThrow(
        `--every: expected an interval such as 30s, 15m, 2h or 1d (a bare number is minutes), at least 1s, got ${JSON.stringify(text)}`,
      );
  });
});

describe('checkScheduleName', () => {
  it('accepts lowercase names and refuses what would break ids', () => {
    expect(checkScheduleName('nightly-7b_rl', '<name>')).toBe('nightly-7b_rl');
    for (const name of ['Nightly', 'a@b', 'a.b', '-x', '', 'x'.repeat(64)])
      expect(() => checkScheduleName(name, '<name>')).toThrow(
        `<name>: expected 1-63 lowercase letters, digits, "-" or "_", starting with a letter or digit, got ${JSON.stringify(name)}`,
      );
  });
});

describe('checkpointKey', () => {
  it('keeps ids and paths safe, and tells apart ids that slug alike', () => {
    expect(checkpointKey('reference-acc80')).toBe('reference-acc80-88a7899f');
    expect(checkpointKey('/ckpts/step_1000')).toMatch(/^ckpts-step_1000-[0-9a-f]{8}$/);
    expect(checkpointKey('a/b')).not.toBe(checkpointKey('a.b'));
    expect(checkpointKey('a/b').slice(0, 2)).toBe(checkpointKey('a.b').slice(0, 2));
    expect(checkpointKey('///')).toMatch(/^[0-9a-f]{8}$/);
    expect(checkpointKey('x'.repeat(200))).toHaveLength(60 + 1 + 8);
  });
});

describe('servedCheckpoint', () => {
  it("reads the first model id the endpoint lists, with the key from the schedule's variable", async () => {
    const model = await startReferenceModel({ servedModels: ['step-2000', 'base'] });
    process.env.BR_UNIT_SCHEDULE_KEY = 'sk-unit';
    try {
      expect(await servedCheckpoint({ endpoint: `${model.url}/`, apiKeyEnv: 'BR_UNIT_SCHEDULE_KEY' }, 'host-a')).toEqual({
        checkpoint: 'step-2000',
        key: checkpointKey('step-2000'),
      });
      model.serveModels(['step-3000']);
      expect((await servedCheckpoint({ endpoint: model.url }, 'host-a')).checkpoint).toBe('step-3000');
      expect(model.requests.map((r) => [r.path, r.headers.authorization])).toEqual([
        ['/v1/models', 'Bearer sk-unit'],
        ['/v1/models', undefined],
      ]);
    } finally {
      delete process.env.BR_UNIT_SCHEDULE_KEY;
      await model.close();
    }
  });

  it('fails naming the variable a worker lacks, and the URL of a list without a model', async () => {
    await expect(servedCheckpoint({ endpoint: 'http://127.0.0.1:9/v1', apiKeyEnv: 'BR_UNIT_NOT_SET' }, 'host-a')).rejects.toMatchObject({
      type: 'MissingSecret',
      nonRetryable: true,
      message: 'the schedule reads its API key from $BR_UNIT_NOT_SET, which is not set on worker host host-a',
    });
    const empty = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"object": "list", "data": []}'));
    await new Promise<void>((resolve) => empty.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(empty.address() as { port: number }).port}/v1`;
    try {
      await expect(servedCheckpoint({ endpoint: url }, 'host-a')).rejects.toMatchObject({
        type: 'BadModelList',
        nonRetryable: true,
        message: `GET ${url}/models: data: expected at least one model in "data"`,
      });
    } finally {
      await new Promise((resolve) => empty.close(resolve));
    }
  });
});

describe('instantiateTarget', () => {
  it("makes a run template into the checkpoint's run: its id, the checkpoint as model, the firing's time", () => {
    const runId = checkpointRunId('nightly', 'step-1000-0a1b2c3d');
    expect(runId).toBe('br-schedule-nightly@step-1000-0a1b2c3d');
    expect(runId.startsWith(scheduleRunPrefix('nightly'))).toBe(true);
    expect(instantiateTarget({ kind: 'run', run: template('arith') }, runId, 'step-1000', '2026-11-30T18:00:00.000Z')).toEqual({
      kind: 'run',
      run: {
        ...template('arith'),
        runId,
        options: { ...template('arith').options, model: 'step-1000' },
        submittedAt: '2026-11-30T18:00:00.000Z',
      },
    });
  });

  it("gives a suite's runs ids under the suite's, numbering a benchmark that appears twice", () => {
    const suite = { suiteId: '', suite: 'lite', model: CHECKPOINT_PLACEHOLDER, runs: [template('arith'), template('bfcl'), template('arith')], parallel: 2 };
    const filled = instantiateTarget({ kind: 'suite', suite }, 'br-schedule-rl@s1-00000000', 's1', '2026-11-30T18:00:00.000Z');
    if (filled.kind !== 'suite') throw new Error('expected a suite');
    expect(filled.suite.suiteId).toBe('br-schedule-rl@s1-00000000');
    expect(filled.suite.model).toBe('s1');
    expect(filled.suite.runs.map((r) => [r.runId, r.options.model])).toEqual([
      ['br-schedule-rl@s1-00000000.arith', 's1'],
      ['br-schedule-rl@s1-00000000.bfcl', 's1'],
      ['br-schedule-rl@s1-00000000.arith-2', 's1'],
    ]);
  });
});

describe('checkpointBoard', () => {
  it('lays runs out one row per checkpoint in the order they were found, one cell per benchmark', () => {
    const board = checkpointBoard([
      { runId: 'p@s2.arith', status: 'RUNNING', benchmark: 'arith', model: 's2', startTime: '2026-11-30T18:10:00.000Z' },
      { runId: 'p@s1.bfcl', status: 'PARTIAL', benchmark: 'bfcl', model: 's1', startTime: '2026-11-30T18:00:05.000Z', score: 0.5 },
      { runId: 'p@s1.arith', status: 'COMPLETED', benchmark: 'arith', model: 's1', startTime: '2026-11-30T18:00:00.000Z', score: 0.8 },
    ]);
    expect(board).toEqual({
      benchmarks: ['arith', 'bfcl'],
      rows: [
        {
          checkpoint: 's1',
          foundAt: '2026-11-30T18:00:00.000Z',
          cells: { arith: { runId: 'p@s1.arith', status: 'COMPLETED', score: 0.8 }, bfcl: { runId: 'p@s1.bfcl', status: 'PARTIAL', score: 0.5 } },
        },
        { checkpoint: 's2', foundAt: '2026-11-30T18:10:00.000Z', cells: { arith: { runId: 'p@s2.arith', status: 'RUNNING' } } },
      ],
    });
  });

  it("lists a schedule's runs by their id prefix, quoted", () => {
    expect(runsQuery({ idPrefix: "br-schedule-it's@" })).toBe(
      "WorkflowType = 'runWorkflow' AND ExecutionStatus != 'ContinuedAsNew' AND WorkflowId STARTS_WITH 'br-schedule-it\\'s@'",
    );
  });
});

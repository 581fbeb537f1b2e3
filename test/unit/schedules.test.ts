// The pure pieces of scheduled checkpoint evaluation: names and intervals checked with messages that
// name the flag, the checkpoint key that makes run ids, a template filled in for one checkpoint, and
// the score-against-checkpoint board built from a schedule's runs.

import { describe, expect, it } from 'vitest';
import { checkpointKey } from '../../activities/served-checkpoint.js';
import { runsQuery } from '../../client/runs.js';
import { checkScheduleName, formatEvery, parseEvery } from '../../client/schedules.js';
import { checkpointBoard } from '../../runs/checkpoint-board.js';
import { DEFAULT_GATEWAY, DEFAULT_RUN_OPTIONS, type RunSpec } from '../../runs/run-spec.js';
import { checkpointRunId, CHECKPOINT_PLACEHOLDER, instantiateTarget, scheduleRunPrefix } from '../../runs/schedule-spec.js';

const template = (benchmark: string): RunSpec => ({
  runId: 'br-20260101-000000-aaaaaa',
  benchmark: { name: benchmark, dir: `/b/${benchmark}`, digest: 'd1' },
  tasks: [],
  model: { name: CHECKPOINT_PLACEHOLDER, endpoint: 'http://trainer:8000/v1', apiKeyEnv: 'TRAINER_KEY' },
  options: DEFAULT_RUN_OPTIONS,
  gateway: DEFAULT_GATEWAY,
  generation: { set: {} },
  prices: {},
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
        model: { name: 'step-1000', endpoint: 'http://trainer:8000/v1', apiKeyEnv: 'TRAINER_KEY' },
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
    expect(filled.suite.runs.map((r) => [r.runId, r.model.name])).toEqual([
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

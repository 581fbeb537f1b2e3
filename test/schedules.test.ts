// Scheduled evaluation of checkpoints, through the real `br schedule` against the real dev server,
// worker, Docker engine and the reference model, whose served model id the test changes as a
// trainer's server would: two checkpoints make two runs, a repeated checkpoint makes none, a paused
// schedule fires nothing, a deleted one is gone. The API key reaches the endpoint, never history.

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSchedule, scheduleBoard } from '../client/schedules.js';
import { expectedArithScore } from '../reference-model/expected-score.js';
import { scheduleIdOf, scheduleRunPrefix, type CheckpointOutcome } from '../runs/schedule-spec.js';
import { br, repoRoot, startHarness, type Harness } from './support/harness.js';
import { historyText } from './support/history-text.js';
import { waitFor } from './support/processes.js';

const arithDir = path.join(repoRoot, 'benchmarks', 'arith');
/** Each test waits for whole runs and spawns `br` often: minutes on a 2-core machine shared by other suites. */
const LONG = 420_000;
const KEY_VAR = 'BR_TEST_SCHEDULE_KEY';
const KEY = `sk-schedule-${randomBytes(8).toString('hex')}`;
let h: Harness;

beforeAll(async () => {
  process.env[KEY_VAR] = KEY;
  h = await startHarness('schedules');
});

afterAll(async () => {
  await h?.close();
  delete process.env[KEY_VAR];
});

/** The firings' checkpoint workflows, oldest first, as the schedule remembers them. */
async function firings(name: string): Promise<string[]> {
  const description = await h.client.schedule.getHandle(scheduleIdOf(name)).describe();
  return description.info.recentActions.map((a) => a.action.workflow.workflowId);
}

/** Triggers the schedule through `br` and waits for that firing's outcome. */
async function trigger(name: string): Promise<CheckpointOutcome> {
  const before = (await firings(name)).length;
  const result = await br(['schedule', 'trigger', name], h.env);
  expect(result.stderr).toBe(`schedule ${name} triggered\n`);
  expect(result.code).toBe(0);
  let ids: string[] = [];
  await waitFor(`firing ${before + 1} of ${name}`, async () => (ids = await firings(name)).length > before, 120_000);
  return h.client.workflow.getHandle(ids.at(-1)!).result() as Promise<CheckpointOutcome>;
}

describe('br schedule', () => {
  const name = `ckpt-${randomBytes(3).toString('hex')}`;

  it(
    'evaluates two checkpoints once each, naming each run by the checkpoint the endpoint served',
    async () => {
      const created = await br(
        ['schedule', 'create', name, 'arith', '--endpoint', h.model.url, '--api-key-env', KEY_VAR, '--concurrency', '2', '--json'],
        h.env,
      );
      expect(created.code).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ name, target: 'arith', endpoint: h.model.url, everySeconds: null, paused: false, recentFirings: [] });

      h.model.serveModels(['reference-acc80']);
      const first = await trigger(name);
      const acc80 = expectedArithScore(arithDir, 'reference-acc80').overall;
      expect(first).toEqual({ checkpoint: 'reference-acc80', runId: first.runId, started: true, status: 'COMPLETED', overall: acc80 });
      expect(first.runId).toMatch(new RegExp(`^${scheduleRunPrefix(name)}reference-acc80-[0-9a-f]{8}$`));

      // The same checkpoint again: the run id is the same, Temporal refuses it, nothing starts.
      const again = await trigger(name);
      expect(again).toEqual({ checkpoint: 'reference-acc80', runId: first.runId, started: false });

      h.model.serveModels(['reference-acc50', 'reference-acc80']);
      const second = await trigger(name);
      const acc50 = expectedArithScore(arithDir, 'reference-acc50').overall;
      expect(second).toEqual({ checkpoint: 'reference-acc50', runId: second.runId, started: true, status: 'COMPLETED', overall: acc50 });
      expect(second.runId).not.toBe(first.runId);

      // Visibility may lag the run's last search-attribute update by a moment.
      await waitFor('both scores in visibility', async () => (await scheduleBoard(h.client, name)).rows.every((r) => r.cells.arith?.score !== undefined));
      expect(await scheduleBoard(h.client, name)).toEqual({
        benchmarks: ['arith'],
        rows: [
          { checkpoint: 'reference-acc80', foundAt: expect.any(String), cells: { arith: { runId: first.runId, status: 'COMPLETED', score: acc80 } } },
          { checkpoint: 'reference-acc50', foundAt: expect.any(String), cells: { arith: { runId: second.runId, status: 'COMPLETED', score: acc50 } } },
        ],
      });
      const shown = await br(['schedule', 'show', name, '--format', 'csv'], h.env);
      expect(shown.code).toBe(0);
      expect(
        shown.stdout.split(/\r?\n/).map((line) =>
          line
            .split(',')
            .filter((_, i) => i !== 1)
            .join(','),
        ),
      ).toEqual(['CHECKPOINT,arith,arith RUN', `reference-acc80,${acc80},${first.runId}`, `reference-acc50,${acc50},${second.runId}`, '']);
    },
    LONG,
  );

  it(
    'sends the API key to the endpoint and keeps it out of every history',
    async () => {
      const modelLists = h.model.requests.filter((r) => r.path === '/v1/models');
      expect(modelLists.length).toBe(3);
      expect(modelLists.map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`, `Bearer ${KEY}`]);
      for (const id of [...(await firings(name)), ...(await scheduleBoard(h.client, name)).rows.map((r) => r.cells.arith!.runId)]) {
        const history = historyText(id);
        expect(history).toContain(KEY_VAR);
        expect(history).not.toContain(KEY);
      }
    },
    LONG,
  );

  it(
    'fires on its interval only while unpaused, and is gone once deleted',
    async () => {
      const tick = `tick-${randomBytes(3).toString('hex')}`;
      h.model.serveModels(['reference-acc80']);
      const created = await br(['schedule', 'create', tick, 'arith', '--endpoint', h.model.url, '--every', '2s', '--paused', '--tasks', 'addition'], h.env);
      expect(created.stderr).toBe(`schedule ${tick}: arith against the checkpoint ${h.model.url} serves, every 2s (paused)\n`);
      expect(created.code).toBe(0);
      await new Promise((r) => setTimeout(r, 6_000));
      expect(await firings(tick)).toEqual([]);

      expect((await br(['schedule', 'unpause', tick], h.env)).code).toBe(0);
      await waitFor('the first interval run to finish', async () => (await scheduleBoard(h.client, tick)).rows[0]?.cells.arith?.score !== undefined, 120_000);
      const paused = await br(['schedule', 'pause', tick], h.env);
      expect(paused.stderr).toBe(`schedule ${tick} paused\n`);
      const firedBefore = (await firings(tick)).length;
      expect(firedBefore).toBeGreaterThanOrEqual(1);
      // A new checkpoint while paused: nothing fires, so nothing evaluates it.
      h.model.serveModels(['reference-acc50']);
      await new Promise((r) => setTimeout(r, 6_000));
      expect((await firings(tick)).length).toBe(firedBefore);
      const board = await scheduleBoard(h.client, tick);
      expect(board.rows.map((r) => [r.checkpoint, r.cells.arith!.score])).toEqual([
        ['reference-acc80', expectedArithScore(arithDir, 'reference-acc80').perTask.addition],
      ]);
      const listed = JSON.parse((await br(['schedule', 'list', '--json'], h.env)).stdout) as Array<{ name: string; paused: boolean; everySeconds: number }>;
      expect(listed.find((s) => s.name === tick)).toMatchObject({ paused: true, everySeconds: 2 });
      // A trigger fires a paused schedule all the same: that is what it is for.
      const triggered = await trigger(tick);
      expect(triggered).toEqual({
        checkpoint: 'reference-acc50',
        runId: triggered.runId,
        started: true,
        status: 'COMPLETED',
        overall: expectedArithScore(arithDir, 'reference-acc50').perTask.addition,
      });
      expect((await describeSchedule(h.client, tick)).paused).toBe(true);

      const deleted = await br(['schedule', 'delete', tick], h.env);
      expect(deleted.stderr).toBe(`schedule ${tick} deleted\n`);
      const after = JSON.parse((await br(['schedule', 'list', '--json'], h.env)).stdout) as Array<{ name: string }>;
      expect(after.map((s) => s.name)).toContain(name);
      expect(after.map((s) => s.name)).not.toContain(tick);
      await expect(describeSchedule(h.client, tick)).rejects.toThrow(`no schedule named "${tick}"`);
      const gone = await br(['schedule', 'trigger', tick], h.env);
      expect(gone.code).toBe(2);
      expect(gone.stderr).toBe(`schedule: no schedule named "${tick}" (br schedule list shows them)\n`);
      // Its runs stay: runs are ordinary runs.
      expect((await scheduleBoard(h.client, tick)).rows.map((r) => r.checkpoint)).toEqual(['reference-acc80', 'reference-acc50']);
    },
    LONG,
  );

  it(
    'evaluates a suite per checkpoint: the suite and its runs are named by schedule and checkpoint',
    async () => {
      const suiteName = `suite-${randomBytes(3).toString('hex')}`;
      h.model.serveModels(['reference-acc80']);
      const created = await br(['schedule', 'create', suiteName, '--suite', 'demo', '--endpoint', h.model.url], h.env);
      expect(created.stderr).toBe(`schedule ${suiteName}: suite:demo against the checkpoint ${h.model.url} serves, when triggered\n`);
      const outcome = await trigger(suiteName);
      expect(outcome).toEqual({ checkpoint: 'reference-acc80', runId: outcome.runId, started: true, status: 'COMPLETED' });
      expect(outcome.runId).toMatch(new RegExp(`^${scheduleRunPrefix(suiteName)}reference-acc80-[0-9a-f]{8}$`));
      await waitFor('the suite run in visibility', async () => (await scheduleBoard(h.client, suiteName)).rows[0]?.cells.arith?.score !== undefined);
      expect((await scheduleBoard(h.client, suiteName)).rows).toEqual([
        {
          checkpoint: 'reference-acc80',
          foundAt: expect.any(String),
          cells: { arith: { runId: `${outcome.runId}.arith`, status: 'COMPLETED', score: expectedArithScore(arithDir, 'reference-acc80').overall } },
        },
      ]);
      expect(await trigger(suiteName)).toEqual({ checkpoint: 'reference-acc80', runId: outcome.runId, started: false });
    },
    LONG,
  );

  it(
    'refuses bad input naming the flag and the problem',
    async () => {
      const cases: Array<[string[], string]> = [
        [
          ['schedule', 'create', 'Bad!', 'arith', '--endpoint', h.model.url],
          '<name>: expected 1-63 lowercase letters, digits, "-" or "_", starting with a letter or digit, got "Bad!"\n',
        ],
        [
          ['schedule', 'create', 'x', 'arith', '--endpoint', h.model.url, '--every', '0'],
          '--every: expected an interval such as 30s, 15m, 2h or 1d (a bare number is minutes), at least 1s, got "0"\n',
        ],
        [
          ['schedule', 'create', 'x', 'arith', '--endpoint', h.model.url, '--every', '5 weeks'],
          '--every: expected an interval such as 30s, 15m, 2h or 1d (a bare number is minutes), at least 1s, got "5 weeks"\n',
        ],
        [
          ['schedule', 'create', 'x', 'arith', '--endpoint', 'ftp://x'],
          '--endpoint: expected an http(s) URL, the OpenAI-compatible base (usually ending in /v1), got "ftp://x"\n',
        ],
        [
          ['schedule', 'create', 'x', '--endpoint', h.model.url],
          'br schedule create: expected a benchmark (a directory or a built-in name) or --suite <name>\n',
        ],
        [
          ['schedule', 'create', name, 'arith', '--endpoint', h.model.url],
          `name: a schedule named "${name}" exists already (br schedule delete ${name} first)\n`,
        ],
      ];
      for (const [args, stderr] of cases) {
        const result = await br(args, h.env);
        expect({ args, stderr: result.stderr, code: result.code }).toEqual({ args, stderr, code: 2 });
      }
      const noEndpoint = await br(['schedule', 'create', 'x', 'arith'], h.env);
      expect(noEndpoint.code).toBe(2);
      expect(noEndpoint.stderr).toContain("error: required option '--endpoint <url>' not specified");
    },
    LONG,
  );
});

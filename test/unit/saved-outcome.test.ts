// The saved outcome of a job's finished container (activities/run-job-on-host.ts): a later attempt of
// the same job workflow harvests it instead of starting the container again; anything else is not read.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSavedOutcome } from '../../activities/run-job-on-host.js';
import type { ContainerOutcome } from '../../activities/run-task-container.js';
import { JOB_FILES } from '../../runs/job-artifacts.js';

const outcome: ContainerOutcome = {
  kind: 'exited',
  exitCode: 0,
  oomKilled: false,
  oomKills: 0,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: '2026-01-01T00:00:01.500Z',
  lastLogLine: 'done',
  reattached: false,
  runtime: 'simple',
};

let jobDir: string;
beforeEach(() => (jobDir = mkdtempSync(path.join(os.tmpdir(), 'br-saved-outcome-'))));
afterEach(() => rmSync(jobDir, { recursive: true, force: true }));

const save = (text: string) => writeFileSync(path.join(jobDir, JOB_FILES.containerOutcome), text);

describe('readSavedOutcome', () => {
  it('gives back what an earlier attempt of the same job workflow saved', () => {
    save(JSON.stringify({ workflowRunId: 'run-1', image: 'img:1', imageBuilt: true, outcome }));
    expect(readSavedOutcome(jobDir, 'run-1')).toEqual({ workflowRunId: 'run-1', image: 'img:1', imageBuilt: true, outcome });
  });

  it('ignores an outcome another execution saved, so a fresh job starts its container', () => {
    save(JSON.stringify({ workflowRunId: 'run-0', image: 'img:1', imageBuilt: false, outcome }));
    expect(readSavedOutcome(jobDir, 'run-1')).toBeUndefined();
  });

  it('is undefined when nothing was saved, or what was saved is not an outcome', () => {
    expect(readSavedOutcome(jobDir, 'run-1')).toBeUndefined();
    save('{"workflowRunId": "run-1", "image": "img:1"');
    expect(readSavedOutcome(jobDir, 'run-1')).toBeUndefined();
    save(JSON.stringify({ workflowRunId: 'run-1', image: 'img:1', imageBuilt: false, outcome: { exitCode: 0 } }));
    expect(readSavedOutcome(jobDir, 'run-1')).toBeUndefined();
  });
});

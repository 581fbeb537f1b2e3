// Pure run aggregation (status, score, progress, exit codes), settings from the environment, and
// the benchmark directory digest pinned in each run.

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { directoryDigest } from '../../contract/benchmark-digest.js';
import { exitCodeOf } from '../../cli/exit-codes.js';
import { meanOverall, runStatus, stateOfStatus, summarizeProgress } from '../../runs/run-outcome.js';
import type { JobResult, JobStatus, RunProgress } from '../../runs/run-spec.js';
import { runWebUiLink, settingsFrom } from '../../config/settings.js';

function job(status: JobStatus, overall?: number): JobResult {
  return {
    jobId: `run-1.${status}-${overall ?? 'none'}`,
    task: 'a',
    status,
    ...(overall === undefined ? {} : { result: { overall, raw_metrics: {} } }),
    timings: { queuedAt: '2025-01-01T00:00:00.000Z', finishedAt: '2025-01-01T00:00:01.000Z', containerSeconds: 1 },
  };
}

describe('runStatus', () => {
  it('is COMPLETED when every job succeeded', () => {
    expect(runStatus([job('SUCCEEDED', 1), job('SUCCEEDED', 0)], false)).toBe('COMPLETED');
  });

  it('is PARTIAL when some jobs succeeded and others failed or timed out', () => {
    expect(runStatus([job('SUCCEEDED', 1), job('FAILED')], false)).toBe('PARTIAL');
    expect(runStatus([job('TIMED_OUT'), job('SUCCEEDED', 1)], false)).toBe('PARTIAL');
  });

  it('is FAILED when no job succeeded', () => {
    expect(runStatus([job('FAILED'), job('TIMED_OUT'), job('CANCELLED')], false)).toBe('FAILED');
  });

  it('is FAILED, not COMPLETED, for a run with no jobs', () => {
    expect(runStatus([], false)).toBe('FAILED');
  });

  it('is CANCELLED when the run was cancelled, whatever its jobs did', () => {
    expect(runStatus([job('SUCCEEDED', 1), job('SUCCEEDED', 1)], true)).toBe('CANCELLED');
    expect(runStatus([], true)).toBe('CANCELLED');
  });
});

describe('meanOverall', () => {
  it('averages only the succeeded jobs, so a failure does not count as zero', () => {
    expect(meanOverall([job('SUCCEEDED', 0.5), job('FAILED'), job('SUCCEEDED', 1), job('TIMED_OUT')])).toBe(0.75);
  });

  it('ignores a result attached to a job that did not succeed', () => {
    expect(meanOverall([job('SUCCEEDED', 0.2), job('FAILED', 1)])).toBe(0.2);
  });

  it('is null when no job succeeded', () => {
    expect(meanOverall([job('FAILED'), job('CANCELLED')])).toBeNull();
    expect(meanOverall([])).toBeNull();
  });
});

describe('progress', () => {
  it('maps each job status to its progress state', () => {
    expect(stateOfStatus('SUCCEEDED')).toBe('succeeded');
    expect(stateOfStatus('FAILED')).toBe('failed');
    expect(stateOfStatus('TIMED_OUT')).toBe('timed_out');
    expect(stateOfStatus('CANCELLED')).toBe('cancelled');
  });

  it('counts the jobs in each state', () => {
    const states = ['pending', 'pending', 'running', 'succeeded', 'succeeded', 'succeeded', 'failed', 'timed_out', 'cancelled'] as const;
    const jobs: RunProgress['jobs'] = states.map((state, i) => ({ jobId: `j${i}`, task: `t${i}`, state }));
    expect(summarizeProgress(jobs)).toEqual({ total: 9, pending: 2, running: 1, succeeded: 3, failed: 1, timedOut: 1, cancelled: 1, jobs });
  });
});

describe('exit codes', () => {
  it('are 0, 3, 4 and 5 for COMPLETED, PARTIAL, FAILED and CANCELLED', () => {
    expect(exitCodeOf('COMPLETED')).toBe(0);
    expect(exitCodeOf('PARTIAL')).toBe(3);
    expect(exitCodeOf('FAILED')).toBe(4);
    expect(exitCodeOf('CANCELLED')).toBe(5);
  });
});

describe('settingsFrom', () => {
  it('uses an embedded dev server on 127.0.0.1:7233 and ~/.benchrouter when nothing is configured', () => {
    expect(settingsFrom({}, '/home/ada')).toMatchObject({
      home: '/home/ada/.benchrouter',
      temporalAddress: '127.0.0.1:7233',
      temporalNamespace: 'default',
      embedded: true,
      webUiUrl: 'http://localhost:8233',
      sharedQueue: 'benchrouter',
      artifactsRoot: '/home/ada/.benchrouter/artifacts',
      locksDir: '/home/ada/.benchrouter/locks',
      buildLogsDir: '/home/ada/.benchrouter/builds',
    });
  });

  it('treats an empty TEMPORAL_ADDRESS as unset', () => {
    expect(settingsFrom({ TEMPORAL_ADDRESS: '' }, '/home/ada')).toMatchObject({ embedded: true, temporalAddress: '127.0.0.1:7233' });
  });

  it('talks to a configured TEMPORAL_ADDRESS and does not embed a server', () => {
    const settings = settingsFrom(
      {
        TEMPORAL_ADDRESS: 'temporal.internal:7233',
        TEMPORAL_NAMESPACE: 'evals',
        BENCHROUTER_HOME: '/srv/br',
        BENCHROUTER_WEB_UI: 'https://ui.example.com/',
        BENCHROUTER_TASK_QUEUE: 'gpu-pool',
        BENCHROUTER_ARTIFACTS: '/data/artifacts',
      },
      '/home/ada',
    );
    expect(settings).toMatchObject({
      home: '/srv/br',
      temporalAddress: 'temporal.internal:7233',
      temporalNamespace: 'evals',
      embedded: false,
      webUiUrl: 'https://ui.example.com',
      sharedQueue: 'gpu-pool',
      artifactsRoot: '/data/artifacts',
      locksDir: '/srv/br/locks',
      buildLogsDir: '/srv/br/builds',
    });
  });

  it('reads the dataset directory from BENCHROUTER_DATASET_DIR, and has none when it is unset or empty', () => {
    expect(settingsFrom({ BENCHROUTER_DATASET_DIR: '/srv/modelscope' }, '/home/ada').datasetDir).toBe('/srv/modelscope');
    expect(settingsFrom({}, '/home/ada')).not.toHaveProperty('datasetDir');
    expect(settingsFrom({ BENCHROUTER_DATASET_DIR: '' }, '/home/ada')).not.toHaveProperty('datasetDir');
  });

  it('links a run to its workflow page in the Web UI, escaping the ids', () => {
    const settings = settingsFrom({ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_NAMESPACE: 'team a', BENCHROUTER_WEB_UI: 'https://ui.example.com/' }, '/home/ada');
    expect(runWebUiLink(settings, 'arith-2025/01')).toBe('https://ui.example.com/namespaces/team%20a/workflows/arith-2025%2F01');
    expect(runWebUiLink(settingsFrom({}, '/h'), 'r1')).toBe('http://localhost:8233/namespaces/default/workflows/r1');
    // A cluster's UI, where scripts/cluster.sh publishes it, rather than the embedded server's port.
    expect(settingsFrom({ TEMPORAL_ADDRESS: 'temporal.internal:7233' }, '/h').webUiUrl).toBe('http://temporal.internal:8080');
  });
});

describe('directoryDigest', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'br-digest-'));
    mkdirSync(path.join(dir, 'tasks', 'a'), { recursive: true });
    writeFileSync(path.join(dir, 'benchmark.yaml'), 'name: x\n');
    writeFileSync(path.join(dir, 'tasks', 'a', 'run.sh'), 'echo hi\n', { mode: 0o644 });
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('is the same for an unchanged directory, even after rewriting a file with the same content', () => {
    const before = directoryDigest(dir);
    writeFileSync(path.join(dir, 'benchmark.yaml'), 'name: x\n');
    expect(directoryDigest(dir)).toBe(before);
    expect(before).toMatch(/^[0-9a-f]{64}$/);
  });

  it("changes when a file's content changes", () => {
    const before = directoryDigest(dir);
    writeFileSync(path.join(dir, 'tasks', 'a', 'run.sh'), 'echo bye\n');
    expect(directoryDigest(dir)).not.toBe(before);
  });

  it('changes when a file is added', () => {
    const before = directoryDigest(dir);
    writeFileSync(path.join(dir, 'tasks', 'a', 'extra.txt'), '');
    expect(directoryDigest(dir)).not.toBe(before);
  });

  it('changes when a file is renamed with the same content', () => {
    const before = directoryDigest(dir);
    rmSync(path.join(dir, 'benchmark.yaml'));
    writeFileSync(path.join(dir, 'benchmark.yml'), 'name: x\n');
    expect(directoryDigest(dir)).not.toBe(before);
  });

  it('changes when the executable bit changes, and changes back when it is cleared', () => {
    const before = directoryDigest(dir);
    chmodSync(path.join(dir, 'tasks', 'a', 'run.sh'), 0o755);
    const executable = directoryDigest(dir);
    expect(executable).not.toBe(before);
    chmodSync(path.join(dir, 'tasks', 'a', 'run.sh'), 0o644);
    expect(directoryDigest(dir)).toBe(before);
  });

  it('ignores permission changes other than the executable bit', () => {
    const before = directoryDigest(dir);
    chmodSync(path.join(dir, 'tasks', 'a', 'run.sh'), 0o600);
    expect(directoryDigest(dir)).toBe(before);
  });
});

describe('pass@k', () => {
  it('is the unbiased estimate 1 - C(n-c, k) / C(n, k), hand-computed for n = 3', async () => {
    const { passAtK } = await import('../../runs/run-outcome.js');
    expect(passAtK(3, 1, 1)).toBeCloseTo(1 / 3, 12);
    expect(passAtK(3, 1, 2)).toBeCloseTo(2 / 3, 12);
    expect(passAtK(3, 1, 3)).toBe(1);
    expect(passAtK(3, 0, 3)).toBe(0);
    expect(passAtK(3, 3, 1)).toBe(1);
  });

  it('averages over the instances every repeat has, and needs two repeats', async () => {
    const { passAtKOfRepeats } = await import('../../runs/run-outcome.js');
    const repeat = (scores: Record<string, number>) => new Map(Object.entries(scores));
    // Instance a passes once in 3, b always, c never; d is missing from the last repeat and is left out.
    const estimate = passAtKOfRepeats([repeat({ a: 1, b: 1, c: 0, d: 1 }), repeat({ a: 0, b: 1, c: 0, d: 1 }), repeat({ a: 0, b: 1, c: 0 })]);
    expect(estimate!['pass@1']).toBeCloseTo((1 / 3 + 1 + 0) / 3, 12);
    expect(estimate!['pass@2']).toBeCloseTo((2 / 3 + 1 + 0) / 3, 12);
    expect(estimate!['pass@3']).toBeCloseTo((1 + 1 + 0) / 3, 12);
    expect(passAtKOfRepeats([repeat({ a: 1 })])).toBeUndefined();
  });

  it("gives from hosts' counts, added up, what the repeats read on one machine give", async () => {
    const { mergeRepeatCounts, passAtKOfCounts, passAtKOfRepeats } = await import('../../runs/run-outcome.js');
    const repeat = (scores: Record<string, number>) => new Map(Object.entries(scores));
    const repeats = [repeat({ a: 1, b: 1, c: 0, d: 1 }), repeat({ a: 0, b: 1, c: 0, d: 1 }), repeat({ a: 0, b: 1, c: 0 })];
    // Host 1 ran repeats 0 and 2, host 2 ran repeat 1.
    const host1 = { jobsRead: 2, jobsUnread: 0, instances: { a: [2, 1], b: [2, 2], c: [2, 0], d: [1, 1] } as Record<string, [number, number]> };
    const host2 = { jobsRead: 1, jobsUnread: 0, instances: { a: [1, 0], b: [1, 1], c: [1, 0], d: [1, 1] } as Record<string, [number, number]> };
    expect(passAtKOfCounts(mergeRepeatCounts([host1, host2]), 3)).toEqual(passAtKOfRepeats(repeats));
  });

  it('gives no pass@k from counts when a repeat was unread or a host did not answer', async () => {
    const { mergeRepeatCounts, passAtKOfCounts } = await import('../../runs/run-outcome.js');
    const read = { jobsRead: 2, jobsUnread: 0, instances: { a: [2, 1] } as Record<string, [number, number]> };
    expect(passAtKOfCounts(mergeRepeatCounts([read, undefined]), 3)).toBeUndefined();
    expect(passAtKOfCounts(mergeRepeatCounts([read, { jobsRead: 0, jobsUnread: 1, instances: {} }]), 3)).toBeUndefined();
    expect(passAtKOfCounts(mergeRepeatCounts([read]), 2)).toEqual({ 'pass@1': 0.5, 'pass@2': 1 });
  });
});

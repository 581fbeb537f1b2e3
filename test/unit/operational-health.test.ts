// The pure parts of operational health: the texts of health findings and of Ctrl-C, br doctor's
// verdicts and exit code, the results table's DETAIL cut to the terminal, and a stop that escalates.

import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { logTailSince, processRuns, stopProcess } from '../../embedded/background-process.js';
import { doctorExitCode, runDoctor, type Check, type DoctorDeps } from '../../workers/doctor.js';
import { stalledQueueFinding, workflowTaskFinding } from '../../client/run-health.js';
import { settingsFrom } from '../../config/settings.js';
import { renderChecks } from '../../cli/commands/doctor.js';
import { cutTo, detailWidth, failureLine } from '../../cli/failure-detail.js';
import { healthLine, interruptLine } from '../../cli/health-watch.js';
import { renderRunResult } from '../../cli/run-text.js';
import type { RunResult } from '../../runs/run-spec.js';

const poller = (identity: string) => ({ identity });

describe('health findings', () => {
  it('a queue with waiting tasks and no poller is stalled after a few seconds, not at once', () => {
    expect(stalledQueueFinding('q', 'workflow', { pollers: [], backlogCount: 2, backlogAgeMs: 1_000 }, 'br doctor')).toBeUndefined();
    const finding = stalledQueueFinding('q', 'workflow', { pollers: [], backlogCount: 2, backlogAgeMs: 4_000 }, 'br doctor');
    expect(finding?.message).toBe('2 workflow task(s) have waited for 4 s on queue "q": no worker polls it');
  });

  it('a queue polled by a worker that takes nothing names that worker once tasks wait over 10 s', () => {
    const state = { pollers: [poller('br-worker@box:42')], backlogCount: 1, backlogAgeMs: 5_000 };
    expect(stalledQueueFinding('q', 'activity', state, 'br doctor')).toBeUndefined();
    const finding = stalledQueueFinding('q', 'activity', { ...state, backlogAgeMs: 12_000 }, 'br doctor');
    expect(finding?.message).toContain('(br-worker@box:42), none taking tasks');
    expect(finding?.key).toBe('stalled:activity:q');
  });

  it('a workflow task on its first attempt is fine; retried, it is a finding naming the worker that took it', () => {
    expect(workflowTaskFinding('r', 'run r', { pendingWorkflowTask: { attempt: 1 } })).toBeUndefined();
    const finding = workflowTaskFinding('r', 'run r', { pendingWorkflowTask: { attempt: 3 } }, 'br-worker@box:42');
    expect(finding?.message).toContain("run r's workflow task has failed or timed out 2 time(s): the worker br-worker@box:42 took it last");
  });

  it('a finding reads on its own line with the command that shows more', () => {
    expect(healthLine({ key: 'k', message: 'the queue stalls', hint: 'br doctor' })).toBe('health: the queue stalls; more: br doctor');
  });

  it('Ctrl-C says the run goes on, and for br cancel that the cancellation stands', () => {
    expect(interruptLine('br-1', false)).toContain('run br-1 keeps running (not cancelled)');
    expect(interruptLine('br-1', true)).toContain('the cancellation of br-1 stays requested');
    expect(interruptLine('suite-1', false, true)).toContain('suite suite-1 and its runs keep running (not cancelled)');
  });
});

describe('br doctor', () => {
  const check = (level: Check['level']): Check => ({ name: level, level, detail: '' });

  it('exits 0 only when nothing warns or fails', () => {
    expect(doctorExitCode([check('ok'), check('info')])).toBe(0);
    expect(doctorExitCode([check('ok'), check('warn')])).toBe(1);
    expect(doctorExitCode([check('fail')])).toBe(1);
  });

  const home = mkdtempSync(path.join(os.tmpdir(), 'br-doctor-'));
  const deps = (over: Partial<DoctorDeps>): DoctorDeps => ({
    settings: settingsFrom({ BENCHROUTER_HOME: home }, os.homedir()),
    hostId: 'box',
    docker: {
      info: async () => ({ version: '27.0', apiVersion: '1.46', rootDir: home, storageDriver: 'overlay2' }),
      imageLabels: async () => ({ 'benchrouter.ca.digest': 'abc' }),
    },
    connect: async () => undefined,
    gatewayListening: async () => false,
    backgroundWorkerPid: () => undefined,
    requiredImages: ['benchrouter/base:bookworm'],
    extraCaFiles: [],
    hostCaDigest: 'abc',
    ...over,
  });

  it('says Docker and Temporal are unreachable, with what to do, and fails', async () => {
    const checks = await runDoctor(
      deps({ docker: { info: async () => Promise.reject(new Error('connect ENOENT /var/run/docker.sock')), imageLabels: async () => undefined } }),
    );
    expect(checks.find((c) => c.name === 'docker engine')).toMatchObject({ level: 'fail', detail: 'not reachable: connect ENOENT /var/run/docker.sock' });
    expect(checks.find((c) => c.name === 'temporal')).toMatchObject({ level: 'fail', fix: '`br up` starts the embedded server' });
    expect(renderChecks(checks)).toMatch(/2 failed, 0 warning\(s\)\n$/);
  });

  it('warns when the gateway port is held by something that is not the embedded worker', async () => {
    const checks = await runDoctor(deps({ gatewayListening: async () => true }));
    expect(checks.find((c) => c.name === 'model gateway')).toMatchObject({ level: 'warn' });
    expect(checks.find((c) => c.name === 'model gateway')?.detail).toContain('not by the embedded worker');
  });

  it('warns when the base image trusts other CAs than the host', async () => {
    const checks = await runDoctor(deps({ hostCaDigest: 'def', extraCaFiles: ['/x/proxy.crt'] }));
    expect(checks.find((c) => c.name === 'CA trust for builds')).toMatchObject({
      level: 'warn',
      fix: 'rebuild it: scripts/build-base-image.sh (one small layer)',
    });
    expect(checks.find((c) => c.name === 'image benchrouter/base:bookworm')).toMatchObject({ level: 'ok' });
  });
});

describe('the DETAIL of a failed job', () => {
  const nonZero = { reason: 'NON_ZERO_EXIT' as const, message: 'command exited with code 1; last log line: ValueError: the dataset has no split "test"' };

  it('for a non-zero exit is the exit code and the last log line', () => {
    expect(failureLine(nonZero)).toBe('exit 1: ValueError: the dataset has no split "test"');
  });

  it('otherwise is the first non-empty line of the message', () => {
    expect(failureLine({ reason: 'BAD_RESULT', message: '\nresult.json: not valid JSON\nmore' })).toBe('result.json: not valid JSON');
    expect(failureLine({})).toBe('');
  });

  it('is cut to what the terminal leaves, marked with an ellipsis', () => {
    expect(cutTo('abcdefgh', 5)).toBe('abcd…');
    expect(cutTo('abc', 5)).toBe('abc');
    expect(detailWidth([10, 6], 80)).toBe(80 - 12 - 8);
    expect(detailWidth([70], 80)).toBe(24);
  });

  it('keeps every line of the results table within the terminal width', () => {
    const job = (task: string, message: string) => ({
      jobId: `r.${task}`,
      task,
      status: 'FAILED' as const,
      reason: 'NON_ZERO_EXIT' as const,
      message,
      timings: { containerSeconds: 1.5, startedAt: 'x' },
    });
    const run = {
      runId: 'r',
      benchmark: 'b',
      model: 'm',
      status: 'FAILED',
      overall: null,
      jobs: [job('a', `command exited with code 2; last log line: ${'x'.repeat(300)}`), job('bb', nonZero.message)],
    } as unknown as RunResult;
    const table = renderRunResult(run, undefined, 80)
      .split('\n')
      .filter((l) => l.startsWith('a ') || l.startsWith('bb '));
    expect(table).toHaveLength(2);
    for (const line of table) expect(line.length).toBeLessThanOrEqual(80);
    expect(table[0]).toContain('exit 2: xxx');
    expect(table[0]!.endsWith('…')).toBe(true);
  });
});

describe('stopping a background process', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'br-stop-'));

  it('escalates to SIGKILL when SIGTERM is ignored, says so, and removes the pid file only once it is gone', async () => {
    const child = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); console.log('up')"], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    await new Promise((r) => child.stdout!.once('data', r));
    const pidFile = path.join(dir, 'stubborn.pid');
    writeFileSync(pidFile, String(child.pid));
    const said: string[] = [];
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
    expect(await stopProcess('stubborn', pidFile, (l) => said.push(l), { graceMs: 500 })).toBe('killed');
    expect(await exited).toBe('SIGKILL');
    expect(said.at(-1)).toBe(`stubborn (pid ${child.pid}) did not stop within 1 s of SIGTERM: killed it with SIGKILL`);
    expect(existsSync(pidFile)).toBe(false);
  });

  it('reports a pid file whose process is gone as stale, not as a stop', async () => {
    const child = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => child.once('exit', r));
    const pidFile = path.join(dir, 'gone.pid');
    writeFileSync(pidFile, String(child.pid));
    const said: string[] = [];
    expect(processRuns(child.pid!)).toBe(false);
    expect(await stopProcess('gone', pidFile, (l) => said.push(l))).toBe('not-running');
    expect(said).toEqual([`gone: ${pidFile} named pid ${child.pid}, which is not running (stale): removed it`]);
    expect(existsSync(pidFile)).toBe(false);
  });
});

describe("a failed start's log", () => {
  it('shows only what this start wrote, its last non-empty lines', () => {
    const log = path.join(mkdtempSync(path.join(os.tmpdir(), 'br-log-')), 'worker.log');
    writeFileSync(log, 'an old start\nits error\n');
    const from = statSync(log).size;
    appendFileSync(log, 'model gateway on 0.0.0.0:1\n\nbr: the model gateway cannot listen\n');
    expect(logTailSince(log, from)).toBe('model gateway on 0.0.0.0:1\nbr: the model gateway cannot listen');
    expect(logTailSince(log, from, 1)).toBe('br: the model gateway cannot listen');
  });
});

// The commands that read a run's artifacts on this host (br artifacts, br logs, br records), through
// the real commander program against artifact directories written in a temp root.

import { Command, CommanderError } from 'commander';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerArtifactsCommand } from '../../cli/commands/artifacts.js';
import { registerRecordsCommand } from '../../cli/commands/records.js';
import { registerLogsCommand } from '../../cli/commands/logs.js';
import type { ArtifactCommandDeps, RemoteArtifactAccess } from '../../cli/run-artifacts.js';
import { RemoteArtifactError } from '../../client/remote-artifacts.js';
import { InputError } from '../../contract/problems.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'br-artifacts-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const runId = 'br-20260101-000000-abcdef';
const addition = `${runId}.000-addition`;
const multiplication = `${runId}.001-multiplication`;
const division = `${runId}.002-division`;

function put(relative: string, content: string): void {
  const file = path.join(root, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

const record = (index: number, score: number | boolean, prediction: string) =>
  JSON.stringify({ index, prompt: `q${index}`, prediction, ground_truth: String(index), score, prompt_tokens: 5, completion_tokens: 1, cost: null });

// addition: three good records and two bad lines; multiplication: one record; division: no records.jsonl.
put(`${runId}/${addition}/results/result.json`, '{"overall": 0.5}');
const additionRecords = [
  record(0, 1, 'zero'),
  record(1, 0, 'one, "uno"'),
  '{broken',
  record(2, true, 'two'),
  JSON.stringify({ index: 3, score: 'high' }),
  '',
].join('\n');
put(`${runId}/${addition}/results/records.jsonl`, additionRecords);
put(`${runId}/${addition}/normalized.json`, '{"overall":0.5,"raw_metrics":{}}'); // 32 bytes
put(`${runId}/${addition}/container.log`, 'x'.repeat(2048));
put(`${runId}/${multiplication}/results/result.json`, '{"overall": 1}');
put(`${runId}/${multiplication}/results/records.jsonl`, `${record(0, 0.25, 'four')}\n`);
put(`${runId}/${division}/container.log`, 'boom\n');
put(`${runId}/gateway-cache/ab/cd.json`, '{}');

function registerArtifactCommands(program: Command, deps: ArtifactCommandDeps): void {
  registerArtifactsCommand(program, deps);
  registerRecordsCommand(program, deps);
  registerLogsCommand(program, deps);
}

async function br(...args: string[]): Promise<{ stdout: string; stderr: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const program = new Command('br').exitOverride().configureOutput({ writeOut: (t) => out.push(t), writeErr: (t) => err.push(t) });
  registerArtifactCommands(program, { artifactsRoot: () => root, stdout: (t) => void out.push(t), stderr: (line) => void err.push(line) });
  await program.parseAsync(['node', 'br', ...args]);
  return { stdout: out.join(''), stderr: err };
}

async function helpOf(command: string): Promise<string> {
  const out: string[] = [];
  const program = new Command('br').exitOverride().configureOutput({ writeOut: (t) => out.push(t), writeErr: () => undefined });
  registerArtifactCommands(program, { artifactsRoot: () => root });
  const error = await program.parseAsync(['node', 'br', command, '--help']).catch((e: unknown) => e);
  expect((error as CommanderError).code).toBe('commander.helpDisplayed');
  return out.join('');
}

describe('br artifacts', () => {
  it("lists every job's files with their paths and sizes, and the gateway cache apart", async () => {
    const { stdout } = await br('artifacts', runId);
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(`run ${runId}: 3 jobs under ${path.join(root, runId)}`);
    expect(lines.find((l) => l.includes('container.log') && l.startsWith('000-addition'))).toMatch(/2\.0 KiB +\S+container\.log$/);
    expect(stdout).toContain(path.join(root, runId, addition, 'results', 'records.jsonl'));
    expect(stdout).toContain(path.join(root, runId, division, 'container.log'));
    expect(stdout).not.toMatch(/^gateway-cache/m);
    expect(stdout).toContain(`gateway cache: ${path.join(root, runId, 'gateway-cache')} (1 file, 2 B)`);
  });

  it('prints one job, named by its task, as JSON with exact byte counts', async () => {
    const { stdout } = await br('artifacts', runId, 'addition', '--json');
    const listing = JSON.parse(stdout);
    expect(listing.jobs).toHaveLength(1);
    expect(listing.jobs[0].jobId).toBe(addition);
    expect(listing.jobs[0].files).toEqual([
      { name: 'container.log', path: path.join(root, runId, addition, 'container.log'), bytes: 2048 },
      { name: 'normalized.json', path: path.join(root, runId, addition, 'normalized.json'), bytes: 32 },
      { name: 'results/records.jsonl', path: path.join(root, runId, addition, 'results', 'records.jsonl'), bytes: Buffer.byteLength(additionRecords) },
      { name: 'results/result.json', path: path.join(root, runId, addition, 'results', 'result.json'), bytes: 16 },
    ]);
  });

  it('is bad input (exit 2) naming the artifact root when the run has no artifacts on this host', async () => {
    const error = await br('artifacts', 'br-nowhere').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe(
      `${path.join(root, 'br-nowhere')}: no artifacts of run br-nowhere on this host: artifacts stay on the host that ran each job, unless BENCHROUTER_ARTIFACTS points every host at a shared mount`,
    );
  });

  it('names the jobs it has when the job asked for is not one of them', async () => {
    const error = await br('artifacts', runId, 'subtraction').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toContain(
      'no job "subtraction" in run br-20260101-000000-abcdef (have 000-addition, 001-multiplication, 002-division)',
    );
  });

  it('shows an example in --help', async () => {
    const help = await helpOf('artifacts');
    expect(help).toContain('Usage: br artifacts [options] <run> [job]');
    expect(help).toContain('Example:\n  $ br artifacts br-20261129-120000-a1b2c3\n');
  });
});

describe('br logs', () => {
  it("prints each job's kept log tail, and says so for a job that has none", async () => {
    put(`${runId}/${division}/container-tail.log`, 'boom\n');
    const { stdout } = await br('logs', runId);
    expect(stdout).toBe(
      `== 000-addition\n(no container-tail.log: the job has not finished on this host)\n== 001-multiplication\n(no container-tail.log: the job has not finished on this host)\n== 002-division\nboom\n`,
    );
    expect((await br('logs', runId, 'division')).stdout).toBe('boom\n');
  });
});

describe('br records', () => {
  it('streams every valid record as a JSON line with its job, and reports bad lines with job and line number', async () => {
    const { stdout, stderr } = await br('records', runId, '--json');
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.job, l.index, l.score])).toEqual([
      [addition, 0, 1],
      [addition, 1, 0],
      [addition, 2, 1],
      [multiplication, 0, 0.25],
    ]);
    expect(lines[1]).toMatchObject({ prediction: 'one, "uno"', prompt: 'q1', ground_truth: '1', prompt_tokens: 5, cost: null });
    expect(stderr).toEqual([
      `${addition}/results/records.jsonl: line 3: not valid JSON`,
      `${addition}/results/records.jsonl: line 5: score: expected a number in [0, 1] or a boolean, got "high"`,
      `run ${runId}: 4 records from 2 jobs, 2 bad lines skipped; 1 job wrote no records.jsonl`,
    ]);
  });

  it("prints one job's records as a table of index, score, prediction and ground truth", async () => {
    const { stdout, stderr } = await br('records', runId, '--job', '001-multiplication');
    expect(stdout).toBe('INDEX  SCORE   PREDICTION  GROUND_TRUTH\n0      0.2500  four        0\n');
    expect(stderr).toEqual([`run ${runId}: 1 record from 1 job, 0 bad lines skipped`]);
  });

  it('adds a job column when several jobs are shown', async () => {
    const { stdout } = await br('records', runId);
    expect(stdout.split('\n')[0]).toBe('JOB                 INDEX  SCORE   PREDICTION  GROUND_TRUTH');
    expect(stdout).toContain('000-addition        1      0       one, "uno"  1');
  });

  it('reports a records.jsonl that links to a host file as refused, and prints nothing of the file', async () => {
    const linkedRun = 'br-20260101-000000-111111';
    const job = `${linkedRun}.000-links`;
    const hostFile = path.join(root, 'host-records.jsonl');
    writeFileSync(hostFile, `${JSON.stringify({ index: 'HOST-ONLY', score: 1 })}\n`);
    mkdirSync(path.join(root, linkedRun, job, 'results'), { recursive: true });
    symlinkSync(hostFile, path.join(root, linkedRun, job, 'results', 'records.jsonl'));
    const { stdout, stderr } = await br('records', linkedRun, '--json');
    expect(stdout).toBe('');
    expect(stderr).toEqual([
      `${job}/results/records.jsonl: records.jsonl is a symbolic link; links are not followed; not read`,
      `run ${linkedRun}: 0 records from 1 job, 1 bad line skipped`,
    ]);
  });

  it('is bad input when no selected job wrote records.jsonl', async () => {
    const error = await br('records', runId, '--job', 'division').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe(
      `${path.join(root, runId)}: no job matching "division" of run ${runId} wrote results/records.jsonl (1 job looked at)`,
    );
  });

  it('shows an example and the bad-line rule in --help', async () => {
    const help = await helpOf('records');
    expect(help).toContain('Example:\n  $ br records br-20261129-120000-a1b2c3 --job addition');
    expect(help).toContain('--json');
    expect(help).toContain('never printed as records');
  });
});

describe('a run whose jobs ran on other hosts too', () => {
  // Temporal (faked here; test/remote-artifacts.test.ts has the real one) knows four jobs: one with a
  // directory here, one carried over from an earlier run whose directory is here under that run, and
  // two on host-b, of which one left a records.jsonl that host-b refuses to serve (a link).
  const mixedRun = 'br-20260102-000000-222222';
  const earlier = 'br-20260101-000000-333333';
  const here = `${mixedRun}.000-here`;
  const carried = `${earlier}.001-carried`;
  const remoteOk = `${mixedRun}.002-remote`;
  const remoteLinked = `${mixedRun}.003-linked`;
  put(`${mixedRun}/${here}/container-tail.log`, 'here tail\n');
  put(`${mixedRun}/${here}/results/records.jsonl`, `${record(0, 1, 'h')}\n`);
  put(`${earlier}/${carried}/container-tail.log`, 'carried tail\n');
  const onHostB: Record<string, Record<string, string>> = {
    [remoteOk]: { 'container-tail.log': 'remote tail\n', 'results/records.jsonl': `${record(5, 0, 'r')}\n${record(6, 1, 'r')}\n` },
    [remoteLinked]: {},
  };
  const asked: string[] = [];
  const remote: RemoteArtifactAccess = {
    jobsOf: async (id) =>
      id === mixedRun
        ? [
            { jobId: here, host: 'host-a' },
            { jobId: carried, host: 'host-a', carriedFrom: earlier },
            { jobId: remoteOk, host: 'host-b' },
            { jobId: remoteLinked, host: 'host-b' },
          ]
        : undefined,
    list: async (job) => Object.entries(onHostB[job.jobId] ?? {}).map(([file, text]) => ({ file, bytes: Buffer.byteLength(text) })),
    read: async (job, file) => {
      asked.push(`${job.host}:${job.runId}/${job.jobId}/${file}`);
      if (job.jobId === remoteLinked && file === 'results/records.jsonl')
        throw new RemoteArtifactError(
          `artifacts of job ${job.jobId} (run ${job.runId}) on host host-b: file: expected a regular file (a symbolic link)`,
          'BadArtifactRequest',
        );
      const text = onHostB[job.jobId]?.[file];
      return text === undefined ? undefined : Buffer.from(text);
    },
  };
  const withRemote = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const program = new Command('br').exitOverride();
    registerArtifactCommands(program, {
      artifactsRoot: () => root,
      stdout: (t) => void out.push(t),
      stderr: (line) => void err.push(line),
      remote: async () => remote,
    });
    await program.parseAsync(['node', 'br', ...args]);
    return { stdout: out.join(''), stderr: err };
  };

  it('br logs reads the local and carried jobs from disk and the others from their host', async () => {
    asked.length = 0;
    expect((await withRemote('logs', mixedRun)).stdout).toBe(
      // In job order, whichever run a job came from (a retry's carried one keeps its original run's id).
      `== 000-here\nhere tail\n== ${earlier}.001-carried\ncarried tail\n== 002-remote\nremote tail\n== 003-linked\n(no container-tail.log: the job has not finished on host host-b)\n`,
    );
    expect(asked).toEqual([`host-b:${mixedRun}/${remoteOk}/container-tail.log`, `host-b:${mixedRun}/${remoteLinked}/container-tail.log`]);
  });

  it('br records reads every job with records, wherever it is, and reports a refused remote file as a bad line', async () => {
    const { stdout, stderr } = await withRemote('records', mixedRun, '--json');
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { job: string; index: number; score: number });
    expect(lines.map((l) => [l.job, l.index, l.score])).toEqual([
      [here, 0, 1],
      [remoteOk, 5, 0],
      [remoteOk, 6, 1],
    ]);
    expect(stderr).toEqual([
      `${remoteLinked}/results/records.jsonl: artifacts of job ${remoteLinked} (run ${mixedRun}) on host host-b: file: expected a regular file (a symbolic link); not read`,
      `run ${mixedRun}: 3 records from 3 jobs, 1 bad line skipped; 1 job wrote no records.jsonl`,
    ]);
  });

  it('br artifacts gives a remote job its host instead of a directory and paths', async () => {
    const listing = JSON.parse((await withRemote('artifacts', mixedRun, 'remote', '--json')).stdout) as { jobs: unknown[] };
    expect(listing.jobs).toEqual([
      {
        jobId: remoteOk,
        dir: null,
        host: 'host-b',
        files: [
          { name: 'container-tail.log', path: null, bytes: 12 },
          { name: 'results/records.jsonl', path: null, bytes: Buffer.byteLength(onHostB[remoteOk]!['results/records.jsonl']!) },
        ],
      },
    ]);
    const table = (await withRemote('artifacts', mixedRun, 'remote')).stdout;
    expect(table.split('\n')[0]).toBe(`run ${mixedRun}: 1 job under ${path.join(root, mixedRun)} (1 of them on other hosts, listed through Temporal)`);
    expect(table).toContain('(on host host-b)');
  });

  it('is bad input naming both places looked when neither this host nor Temporal knows the run', async () => {
    const error = await withRemote('logs', 'br-unknown').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe(
      `${path.join(root, 'br-unknown')}: no artifacts of run br-unknown on this host, and Temporal names no other host that ran a job of it (an unknown run, or none of its jobs finished yet)`,
    );
  });
});

// Reading a job's artifacts for a client on another machine (activities/read-job-artifact.ts): a task
// controls its results/ directory, so a link there (as the file or as a folder on the way) or a FIFO
// is refused by name and never read or waited on. Real files, links and FIFOs in a temp directory.

import { ApplicationFailure } from '@temporalio/common';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { listJobArtifacts, readJobArtifact } from '../../activities/read-job-artifact.js';

const artifactsRoot = mkdtempSync(path.join(os.tmpdir(), 'br-read-artifact-'));
const hostFile = path.join(artifactsRoot, 'host-secret.txt');
writeFileSync(hostFile, 'OPENAI_API_KEY=marker-5c1e\n');
afterAll(() => rmSync(artifactsRoot, { recursive: true, force: true }));

let n = 0;
let ref: { runId: string; jobId: string };
let results: string;
beforeEach(() => {
  ref = { runId: 'br-run', jobId: `job-${n++}` };
  results = path.join(artifactsRoot, ref.runId, ref.jobId, 'results');
  mkdirSync(results, { recursive: true });
});

function failureOf(read: () => unknown): ApplicationFailure {
  try {
    read();
  } catch (error) {
    if (error instanceof ApplicationFailure) return error;
    throw error;
  }
  throw new Error('expected the read to be refused, and it returned');
}

const text = (page: { base64: string }) => Buffer.from(page.base64, 'base64').toString('utf8');

describe('readJobArtifact', () => {
  it('reads a regular file page by page from the offset asked for', () => {
    writeFileSync(path.join(results, 'result.json'), '{"overall": 0.5}');
    const page = readJobArtifact(artifactsRoot, { ...ref, file: 'results/result.json', offset: 2 });
    expect(text(page)).toBe('overall": 0.5}');
    expect(page.totalBytes).toBe(16);
  });

  it('refuses a symbolic link a task left to a host file, and returns none of it', () => {
    symlinkSync(hostFile, path.join(results, 'records.jsonl'));
    const failure = failureOf(() => readJobArtifact(artifactsRoot, { ...ref, file: 'results/records.jsonl', offset: 0 }));
    expect(failure.type).toBe('BadArtifactRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('"results/records.jsonl"');
    expect(failure.message).toContain('symbolic link');
    expect(failure.message).not.toContain('marker-5c1e');
  });

  it('refuses a path through a linked folder, even when the file behind it is regular', () => {
    symlinkSync(artifactsRoot, path.join(results, 'up'));
    const failure = failureOf(() => readJobArtifact(artifactsRoot, { ...ref, file: 'results/up/host-secret.txt', offset: 0 }));
    expect(failure.type).toBe('BadArtifactRequest');
    expect(failure.message).toContain('results/up is a symbolic link');
  });

  it('refuses a FIFO at once instead of waiting for a writer', () => {
    execFileSync('mkfifo', [path.join(results, 'result.json')]);
    const started = Date.now();
    const failure = failureOf(() => readJobArtifact(artifactsRoot, { ...ref, file: 'results/result.json', offset: 0 }));
    expect(failure.type).toBe('BadArtifactRequest');
    expect(failure.message).toContain('not a regular file');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('says ArtifactNotFound for a file that is not there, and BadArtifactRequest for a path out of the job', () => {
    expect(failureOf(() => readJobArtifact(artifactsRoot, { ...ref, file: 'results/none.json', offset: 0 })).type).toBe('ArtifactNotFound');
    expect(failureOf(() => readJobArtifact(artifactsRoot, { ...ref, file: '../../host-secret.txt', offset: 0 })).type).toBe('BadArtifactRequest');
  });
});

describe('listJobArtifacts', () => {
  it('lists regular files and leaves links out', () => {
    writeFileSync(path.join(results, 'result.json'), '{}');
    symlinkSync(hostFile, path.join(results, 'linked.txt'));
    expect(listJobArtifacts(artifactsRoot, ref)).toEqual([{ file: 'results/result.json', bytes: 2 }]);
  });
});

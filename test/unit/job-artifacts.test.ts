// The job-artifact layout's one owner (runs/job-artifacts.ts): every reader and writer finds a job's
// files through it, so these are the paths on disk and in listings.

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gatewayCacheDir, jobArtifactsDir, jobFile, jobFilePath, jobResultsDir, usageFileName } from '../../runs/job-artifacts.js';

const root = path.join('/srv', 'artifacts');
const job = { runId: 'br-1', jobId: 'br-1.000-addition' };

describe('the job-artifact layout', () => {
  it('puts what the task writes under results/ and what the worker writes beside it', () => {
    expect(jobFilePath('records')).toBe('results/records.jsonl');
    expect(jobFilePath('result')).toBe('results/result.json');
    expect(jobFilePath('normalized')).toBe('normalized.json');
    expect(jobFilePath('containerLog')).toBe('container.log');
    expect(jobFilePath('containerTail')).toBe('container-tail.log');
    expect(usageFileName('judge')).toBe('usage-judge.json');
    expect(jobFilePath('modelUsage')).toBe(usageFileName('model'));
  });

  it('finds a job file on this host under its run, or under the run it was carried from', () => {
    expect(jobFile(root, job, 'records')).toBe('/srv/artifacts/br-1/br-1.000-addition/results/records.jsonl');
    expect(jobFile(root, job, 'containerTail')).toBe('/srv/artifacts/br-1/br-1.000-addition/container-tail.log');
    expect(jobFile(root, { ...job, runId: 'br-2', carriedFrom: 'br-1' }, 'result')).toBe('/srv/artifacts/br-1/br-1.000-addition/results/result.json');
    expect(jobArtifactsDir(root, job)).toBe('/srv/artifacts/br-1/br-1.000-addition');
    expect(jobResultsDir(root, job)).toBe('/srv/artifacts/br-1/br-1.000-addition/results');
    expect(gatewayCacheDir(root, 'br-1')).toBe('/srv/artifacts/br-1/gateway-cache');
  });
});

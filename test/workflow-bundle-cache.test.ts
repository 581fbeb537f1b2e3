// The worker's workflow bundle, built once per version of the code in a child process and then
// reused: a second start finds it by content hash and builds nothing.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { workflowsPath } from '../workers/start-worker.js';
import { workflowBundleFor, workflowSourceHash } from '../workers/workflow-bundle-cache.js';

const cacheDir = mkdtempSync(path.join(os.tmpdir(), 'br-workflow-bundles-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

describe('workflowBundleFor', () => {
  it('builds the bundle of the current code once, named by its hash, and reuses it on the next start', async () => {
    const first = await workflowBundleFor(cacheDir, workflowsPath);
    expect(path.basename(first)).toBe(`workflow-bundle-${workflowSourceHash()}.js`);
    const code = readFileSync(first, 'utf8');
    // The SDK's bundle registers the workflows module; the Run workflow is the one every run starts.
    expect(code).toContain('runWorkflow');
    const builtAt = statSync(first).mtimeMs;
    const started = Date.now();
    expect(await workflowBundleFor(cacheDir, workflowsPath)).toBe(first);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(statSync(first).mtimeMs).toBe(builtAt);
  });
});

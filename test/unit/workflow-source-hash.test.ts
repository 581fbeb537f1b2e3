// The workflow bundle's cache key: any change to code a workflow could import, or to the pinned SDK,
// is a new key; tests, perf scripts and benchmarks are not. Real files in a temp directory.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { workflowSourceHash } from '../../workers/workflow-bundle-cache.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'br-workflow-hash-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
}

describe('workflowSourceHash', () => {
  write('workflows/index.ts', "export * from './run-workflow.js';\n");
  write('runs/run-spec.ts', 'export const a = 1;\n');
  write('package-lock.json', '{"lockfileVersion": 3}\n');

  it('changes with any source file a workflow could import, and with package-lock.json', () => {
    const before = workflowSourceHash(root);
    expect(workflowSourceHash(root)).toBe(before);
    write('runs/run-spec.ts', 'export const a = 2;\n');
    const afterSource = workflowSourceHash(root);
    expect(afterSource).not.toBe(before);
    write('contract/new-module.ts', 'export {};\n');
    const afterNewFile = workflowSourceHash(root);
    expect(afterNewFile).not.toBe(afterSource);
    write('package-lock.json', '{"lockfileVersion": 3, "packages": {"node_modules/@temporalio/workflow": {"version": "1.25.0"}}}\n');
    expect(workflowSourceHash(root)).not.toBe(afterNewFile);
  });

  it('stays the same when only tests, perf scripts, benchmarks, node_modules or non-TypeScript files change', () => {
    const before = workflowSourceHash(root);
    write('test/some.test.ts', 'it();\n');
    write('perf/hostile.ts', '1;\n');
    write('benchmarks/x/bridge.ts', '1;\n');
    write('node_modules/pkg/index.ts', '1;\n');
    write('docs/notes.md', '# notes\n');
    expect(workflowSourceHash(root)).toBe(before);
  });
});

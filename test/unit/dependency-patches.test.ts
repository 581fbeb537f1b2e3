// The patched dependencies: every patch in patches/ is in the installed files (an upgrade that drops one
// fails here), explains itself, and matches the pinned version; a missing one is reported, not fatal.

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEPENDENCY_PATCHES,
  DOCKER_MODEM_DEBUG_PATCH,
  missingDependencyPatches,
  SANDBOX_WATCHDOG_PATCH,
  sandboxTimeoutOption,
} from '../../workers/dependency-patches.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-dependency-patches-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The version a patch-package file name says the patch was made for. */
function madeFor(patchFile: string): string {
  return patchFile.slice(patchFile.lastIndexOf('+') + 1, -'.patch'.length);
}

/** A fake installed package: its package.json at `version`, and `files` with the given text. */
function fakePackage(name: string, version: string, files: Record<string, string>): string {
  const dir = path.join(scratch, name, version);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version }));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('the installed dependencies', () => {
  it('have every patch in patches/ applied', () => {
    expect(missingDependencyPatches().map((m) => m.message)).toEqual([]);
  });

  it('have a check here for every file in patches/, each with a header saying why and where upstream stands', () => {
    const files = readdirSync(path.join(repoRoot, 'patches')).sort();
    expect(files).toEqual(DEPENDENCY_PATCHES.map((p) => p.patchFile).sort());
    for (const file of files) {
      const text = readFileSync(path.join(repoRoot, 'patches', file), 'utf8');
      const header = text.slice(0, text.indexOf('diff --git '));
      expect(header, file).toMatch(/Why:/);
      expect(header, file).toMatch(/https:\/\/github\.com\//);
    }
  });

  it('are at the versions the patches were made for, and the @temporalio packages all at one version', () => {
    const lock = JSON.parse(readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
    for (const patch of DEPENDENCY_PATCHES) expect(lock.packages[`node_modules/${patch.packageName}`]?.version, patch.patchFile).toBe(madeFor(patch.patchFile));
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const temporal = Object.entries(manifest.dependencies).filter(([name]) => name.startsWith('@temporalio/'));
    expect(temporal.length).toBeGreaterThan(1);
    for (const [name, range] of temporal) expect(range, name).toBe(madeFor(SANDBOX_WATCHDOG_PATCH.patchFile));
  });
});

describe('missingDependencyPatches', () => {
  it('names the patch, the file, the installed version and what the worker loses when a package lacks its patch', () => {
    const dir = fakePackage('worker', '1.25.0', {
      'lib/workflow/reusable-vm.js': 'vm.runInContext(s, c, {\n  timeout: isolateExecutionTimeoutMs,\n});\n',
      'lib/workflow/vm.js': '',
    });
    const missing = missingDependencyPatches([SANDBOX_WATCHDOG_PATCH], () => dir);
    expect(missing.map((m) => m.patch)).toEqual([SANDBOX_WATCHDOG_PATCH]);
    const message = missing.map((m) => m.message).join('\n');
    expect(message).toContain('patches/@temporalio+worker+1.24.0.patch is not applied');
    expect(message).toContain(path.join(dir, 'lib/workflow/reusable-vm.js'));
    expect(message).toContain('@temporalio/worker 1.25.0 is installed, the patch was made for 1.24.0');
    expect(message).toContain('~28 ms of worker CPU per job');
  });

  it('reports a file patched at one call site but not another (a call site an upgrade added)', () => {
    const dir = fakePackage('modem', '5.0.8', {
      'lib/modem.js': "  if (debug.enabled) debug('Sending: %s', util.inspect(options, {}));\n  debug('Sending: %s', util.inspect(more, {}));\n",
    });
    const [missing] = missingDependencyPatches([DOCKER_MODEM_DEBUG_PATCH], () => dir);
    expect(missing?.message).toContain('still has code the patch changes');
  });

  it('reports a package that cannot be found instead of throwing', () => {
    const [missing] = missingDependencyPatches([DOCKER_MODEM_DEBUG_PATCH], () => {
      throw new Error("Cannot find module 'docker-modem/package.json'\nRequire stack: ...");
    });
    expect(missing?.message).toContain("docker-modem cannot be found: Cannot find module 'docker-modem/package.json')");
  });
});

describe('sandboxTimeoutOption', () => {
  it('turns the sandbox watchdog off only when the patch that makes 0 mean none is applied', () => {
    expect(sandboxTimeoutOption([])).toEqual({ isolateExecutionTimeout: 0 });
    // The unpatched SDK hands 0 to Node's vm, which rejects it: the worker keeps the SDK's default.
    expect(sandboxTimeoutOption([{ patch: SANDBOX_WATCHDOG_PATCH, message: '' }])).toEqual({});
    expect(sandboxTimeoutOption([{ patch: DOCKER_MODEM_DEBUG_PATCH, message: '' }])).toEqual({ isolateExecutionTimeout: 0 });
  });
});

// The dependencies BenchRouter patches (patches/, applied by patch-package at install), and a check that
// each patch is in the installed files: outside CI patch-package reports a patch it cannot apply and goes on.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** A patch under patches/, and how to tell from the installed files whether it is there. */
export interface DependencyPatch {
  /** The file name under patches/ (patch-package's `<package>+<version>.patch`). */
  patchFile: string;
  /** The patched package, as it is imported. */
  packageName: string;
  /** The package that depends on it, when BenchRouter does not import it itself: it is found from there. */
  via?: string;
  /** Each changed file of the package, with a text only the patched file has and a pattern only the unpatched one matches. */
  files: { file: string; patchedText: string; unpatchedPattern: RegExp }[];
  /** What the worker loses without the patch, as the start-up warning ends. */
  withoutIt: string;
}

/**
 * `isolateExecutionTimeout: 0` means "no timeout" for the calls into the workflow sandbox. Without it, every
 * call starts and joins a Node vm watchdog thread: ~28 ms of worker CPU per job (docs/operations.md).
 */
export const SANDBOX_WATCHDOG_PATCH: DependencyPatch = {
  patchFile: '@temporalio+worker+1.24.0.patch',
  packageName: '@temporalio/worker',
  files: ['lib/workflow/reusable-vm.js', 'lib/workflow/vm.js'].map((file) => ({
    file,
    patchedText: 'timeout: isolateExecutionTimeoutMs || undefined',
    // Any call site left passing the timeout as it is would throw with 0 (Node wants 1 ms at least).
    unpatchedPattern: /timeout: isolateExecutionTimeoutMs\s*[,}]/,
  })),
  withoutIt:
    'the worker keeps the SDK default (a 5 s vm watchdog on every call into the workflow sandbox), which costs ~28 ms of worker CPU per job; workflows still run correctly',
};

/** docker-modem formats every request's options for its debug log, on or off; patched, only when it is on. */
export const DOCKER_MODEM_DEBUG_PATCH: DependencyPatch = {
  patchFile: 'docker-modem+5.0.7.patch',
  packageName: 'docker-modem',
  via: 'dockerode',
  files: [
    {
      file: 'lib/modem.js',
      patchedText: "if (debug.enabled) debug('Sending: %s', util.inspect(",
      unpatchedPattern: /^\s*debug\('Sending: %s', util\.inspect\(/m,
    },
  ],
  withoutIt: 'every Docker API call formats its options for a debug log that is off, ~1-4 ms of worker CPU per job; Docker calls still work correctly',
};

export const DEPENDENCY_PATCHES: readonly DependencyPatch[] = [SANDBOX_WATCHDOG_PATCH, DOCKER_MODEM_DEBUG_PATCH];

/** A patch that is not in the installed files, and the warning that says so. */
export interface MissingPatch {
  patch: DependencyPatch;
  message: string;
}

const requireHere = createRequire(import.meta.url);

/** The folder of the installed package the worker loads, found the way Node finds it. */
export function installedPackageDir(patch: DependencyPatch): string {
  const from = patch.via ? createRequire(requireHere.resolve(`${patch.via}/package.json`)) : requireHere;
  return path.dirname(from.resolve(`${patch.packageName}/package.json`));
}

/** The patches of `patches` that the installed files lack, each with a warning naming the patch, the file and what is lost; none when all are there. */
export function missingDependencyPatches(
  patches: readonly DependencyPatch[] = DEPENDENCY_PATCHES,
  packageDir: (patch: DependencyPatch) => string = installedPackageDir,
): MissingPatch[] {
  const missing: MissingPatch[] = [];
  for (const patch of patches) {
    const problem = whyNotApplied(patch, packageDir);
    if (problem)
      missing.push({
        patch,
        message: `patches/${patch.patchFile} is not applied (${problem}): ${patch.withoutIt}; \`npm ci\` applies it, and docs/operations.md#patched-dependencies says how to re-make it after an upgrade`,
      });
  }
  return missing;
}

function whyNotApplied(patch: DependencyPatch, packageDir: (patch: DependencyPatch) => string): string | undefined {
  let dir: string;
  try {
    dir = packageDir(patch);
  } catch (error) {
    return `${patch.packageName} cannot be found: ${(error as Error).message.split('\n')[0]}`;
  }
  const version = installedVersion(dir);
  // patch-package names the version it made the patch for; another one is the usual reason a patch went missing.
  const madeFor = patch.patchFile.slice(patch.patchFile.lastIndexOf('+') + 1, -'.patch'.length);
  const installed = version && version !== madeFor ? `; ${patch.packageName} ${version} is installed, the patch was made for ${madeFor}` : '';
  for (const { file, patchedText, unpatchedPattern } of patch.files) {
    const full = path.join(dir, file);
    if (!existsSync(full)) return `${full} does not exist${installed}`;
    const text = readFileSync(full, 'utf8');
    if (!text.includes(patchedText)) return `${full} lacks "${patchedText}"${installed}`;
    if (unpatchedPattern.test(text)) return `${full} still has code the patch changes (${unpatchedPattern.source})${installed}`;
  }
  return undefined;
}

function installedVersion(dir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/**
 * The worker's option for its workflow sandbox's timeout: none when the patch makes 0 mean none; the SDK's
 * default otherwise, since the unpatched SDK passes 0 on to Node, which rejects it and fails every workflow.
 */
export function sandboxTimeoutOption(missing: readonly MissingPatch[]): { isolateExecutionTimeout?: number } {
  return missing.some((m) => m.patch === SANDBOX_WATCHDOG_PATCH) ? {} : { isolateExecutionTimeout: 0 };
}

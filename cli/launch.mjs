// The `br` executable's fast start. Running cli/bin.ts through tsx transpiles the whole CLI at every
// start (about 1 s before `br --help` prints a line), so `br` runs a bundle of it instead, built with
// esbuild and kept under node_modules/.cache by a content hash of the sources: an edited tree is
// rebuilt on its next start (about 0.3 s, once), a fresh clone builds on its first, and nobody runs a
// build step by hand. Packages stay outside the bundle (they load from node_modules as before), and
// the bundle is split at dynamic imports so that a command loads the heavy modules (the worker SDK,
// Fastify, exceljs, dockerode) only when it needs them.
//
// Plain JavaScript on purpose: it runs before anything could transpile TypeScript.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import process from 'node:process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';
import { sourceTreeHash } from '../workers/source-tree-hash.mjs';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const entry = path.join(repoRoot, 'cli', 'bin.ts');
/**
 * The routing analysis's second thread (analysis/analysis-thread.ts), built as an entry of its own beside
 * bin.js: a thread started from it loads its few modules in about a tenth of the time it takes through tsx.
 */
const threadEntry = path.join(repoRoot, 'analysis', 'analysis-thread.ts');
/** Where the CLI tells that module which build it runs from (see analysisThreadEntry there). */
const BUNDLE_KEY = Symbol.for('benchrouter.cli-bundle');
/**
 * Packages built into the bundle rather than loaded from node_modules: zod's ESM build is ~100 small
 * files, whose loading took ~55 ms of every `br` start (`node -e "await import('zod')"`: 0.11 s against
 * 0.05 s for an empty script). fastify-type-provider-zod goes with it: it must see the same zod as the
 * API's schemas.
 */
const BUNDLED_PACKAGES = new Set(['zod', 'fastify-type-provider-zod']);

/**
 * CommonJS packages the bundle loads with `require` rather than `import`. Node imports a CommonJS module
 * into ESM by first scanning its source, and that of every module it re-exports, for the names it
 * exports; `require` skips the scan. The Temporal client is ~250 such files, loaded by every `br`
 * command that talks to Temporal: `import('@temporalio/client')` took 171-186 ms, `require` 135-155 ms
 * (five each, idle machine). The modules are the same either way (Node's one CommonJS cache).
 */
const REQUIRED_PACKAGES = new Set(['@temporalio/client', '@temporalio/common', '@temporalio/proto', '@temporalio/activity']);

/** Namespace of the stubs that stand for REQUIRED_PACKAGES in the bundle, and the function they load them with. */
const REQUIRED = 'required-package';
const REQUIRE = 'brRequire';

/** `@scope/name` or `name` of a bare import like `zod/v4/core`. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Builds kept beside the current one, so a `br` still running an older build can load its lazy chunks. */
const KEPT_BUILDS = 5;

/**
 * A hash of what the bundle is made from: the sources (workers/source-tree-hash.mjs), this file (the build
 * options) and the esbuild version.
 * @param {string} root
 * @returns {string}
 */
function cliSourceHash(root = repoRoot) {
  // The bundle holds each source's own file URL, so two clones (worktrees sharing one node_modules) with the
  // same sources must not share a bundle: the other's would find the other clone's built-in routers.
  const hash = sourceTreeHash(root, [fileURLToPath(import.meta.url), path.join(root, 'node_modules', 'esbuild', 'package.json')]);
  return `${hash}-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`;
}

/** Where builds live: in the clone's node_modules/.cache, or the temp dir when that is read-only. */
function cacheRoot() {
  const inRepo = path.join(repoRoot, 'node_modules', '.cache', 'benchrouter-cli');
  try {
    mkdirSync(inRepo, { recursive: true });
    return inRepo;
  } catch {
    const inTmp = path.join(os.tmpdir(), `benchrouter-cli-${os.userInfo().uid}`);
    mkdirSync(inTmp, { recursive: true });
    return inTmp;
  }
}

/**
 * Bundles cli/bin.ts into `outDir`. Built into a folder of its own and renamed into place whole, so a
 * `br` starting beside this one never loads half a build; when two build at once, the first rename wins.
 * Each source's `import.meta.url` is its own file's URL, as under tsx: the CLI finds the repository,
 * the built-in benchmarks, the dashboard's files and the workflow sources (which the worker bundles
 * on its own) relative to its sources, not to the bundle.
 * @param {string} outDir
 */
async function build(outDir) {
  const esbuild = await import('esbuild');
  const partial = `${outDir}.${process.pid}.partial`;
  try {
    await esbuild.build({
      entryPoints: { bin: entry, 'analysis-thread': threadEntry },
      outdir: partial,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'error',
      // The require of each chunk for REQUIRED_PACKAGES' stubs, under a name no source uses: packages
      // resolve from the sources' folder (the repository's node_modules), wherever the bundle is kept.
      banner: { js: `import { createRequire as brCreateRequire } from 'node:module'; const ${REQUIRE} = brCreateRequire(${JSON.stringify(entry)});` },
      plugins: [
        {
          // Bare imports: BUNDLED_PACKAGES are built in; REQUIRED_PACKAGES become a stub,
          // `module.exports = brRequire('@temporalio/client')`; every other package loads from node_modules.
          name: 'packages',
          setup(builder) {
            builder.onResolve({ filter: /^[^./]/ }, (args) => {
              const name = packageName(args.path);
              if (BUNDLED_PACKAGES.has(name)) return undefined;
              return REQUIRED_PACKAGES.has(name) ? { path: args.path, namespace: REQUIRED } : { path: args.path, external: true };
            });
            builder.onLoad({ filter: /.*/, namespace: REQUIRED }, (args) => ({
              contents: `module.exports = ${REQUIRE}(${JSON.stringify(args.path)});`,
              loader: 'js',
            }));
          },
        },
        {
          name: 'source-import-meta-url',
          setup(builder) {
            builder.onLoad({ filter: /\.ts$/ }, (args) => ({
              contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
              loader: 'ts',
            }));
          },
        },
      ],
    });
    try {
      renameSync(partial, outDir);
    } catch (error) {
      if (!existsSync(path.join(outDir, 'bin.js'))) throw error;
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** Removes all but the newest KEPT_BUILDS builds, and partial builds older than an hour (a crashed build). */
function prune(root) {
  const builds = readdirSync(root)
    .map((name) => ({ name, time: statSync(path.join(root, name)).mtimeMs }))
    .sort((a, b) => b.time - a.time);
  const finished = builds.filter((b) => !b.name.endsWith('.partial'));
  const stale = [...finished.slice(KEPT_BUILDS + 1), ...builds.filter((b) => b.name.endsWith('.partial') && Date.now() - b.time > 3_600_000)];
  for (const b of stale) rmSync(path.join(root, b.name), { recursive: true, force: true });
}

const root = cacheRoot();
const outDir = path.join(root, cliSourceHash());
const bundle = path.join(outDir, 'bin.js');
if (!existsSync(bundle)) {
  try {
    await build(outDir);
  } catch {
    // esbuild has printed each error with its file, line and column.
    process.stderr.write(`br: the CLI's sources in ${repoRoot} do not build (see above)\n`);
    process.exit(1);
  }
  prune(root);
}
globalThis[BUNDLE_KEY] = outDir;
await import(pathToFileURL(bundle).href);

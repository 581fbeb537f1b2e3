// Loads a router directory (router.yaml + Dockerfile) into a RouterDefinition, collecting every problem
// at once, as the benchmark loader does, so `br validate` can show an author the whole list.

import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_RESOURCES } from './benchmark-schema.js';
import { readYaml } from './load-benchmark.js';
import { InputError, type Problem } from './problems.js';
import { RouterYamlSchema, type RouterDefinition } from './router-schema.js';

/** The built-in routers, one directory each. */
export const BUILTIN_ROUTERS_DIR = fileURLToPath(new URL('../routers', import.meta.url));

export const ROUTER_FILE = 'router.yaml';

export function isRouterDirectory(dir: string): boolean {
  return existsSync(path.join(dir, ROUTER_FILE));
}

export function inspectRouter(dir: string): { router?: RouterDefinition; problems: Problem[] } {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return { problems: [{ file: dir, field: '', message: 'expected a router directory, found none' }] };
  const problems: Problem[] = [];
  const yaml = readYaml(path.join(dir, ROUTER_FILE), RouterYamlSchema, problems);
  const dockerfile = path.join(dir, 'Dockerfile');
  if (!existsSync(dockerfile))
    problems.push({ file: dockerfile, field: '', message: 'file not found: a router directory is its image build context and needs a Dockerfile' });
  if (!yaml || problems.length) return { problems };
  return {
    problems,
    router: {
      name: yaml.name,
      description: yaml.description ?? '',
      ...(yaml.paper ? { paper: yaml.paper } : {}),
      dir: realpathSync(dir),
      command: yaml.command,
      timeoutSeconds: yaml.timeout,
      needs: yaml.needs,
      resources: { ...yaml.resources, pids: yaml.resources.pids ?? DEFAULT_RESOURCES.pids },
    },
  };
}

export function loadRouter(dir: string): RouterDefinition {
  const { router, problems } = inspectRouter(dir);
  if (!router) throw new InputError(problems);
  return router;
}

/** A router argument: a directory, the name of a built-in router, or `all` (every built-in router). */
export function resolveRouterDirs(args: readonly string[]): string[] {
  const dirs: string[] = [];
  for (const arg of args) {
    if (arg === 'all') {
      dirs.push(...builtinRouterDirs());
      continue;
    }
    if (existsSync(arg)) dirs.push(path.resolve(arg));
    else if (existsSync(path.join(BUILTIN_ROUTERS_DIR, arg, ROUTER_FILE))) dirs.push(path.join(BUILTIN_ROUTERS_DIR, arg));
    else
      throw new InputError([
        { file: '--routers', field: '', message: `router not found: expected a router directory, a built-in router's name or "all", got "${arg}"` },
      ]);
  }
  return [...new Set(dirs)];
}

export function builtinRouterDirs(): string[] {
  return readdirSorted(BUILTIN_ROUTERS_DIR).filter((d) => isRouterDirectory(d));
}

function readdirSorted(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .sort()
        .map((name) => path.join(dir, name))
    : [];
}

// Every arrow points down: a folder imports only from itself and the layers below it, as docs/architecture.md
// lists them. Reads every import (type-only ones too) of every source file in the layered folders.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** The layers, top first, from the list between the `layers` comments of docs/architecture.md. */
function layers(): string[][] {
  const doc = readFileSync(path.join(repoRoot, 'docs', 'architecture.md'), 'utf8');
  const list = /<!-- layers:[^>]*-->([\s\S]*?)<!-- \/layers -->/.exec(doc)?.[1] ?? '';
  return list
    .split('\n')
    .filter((line) => /^\d+\.\s/.test(line.trim()))
    .map((line) => [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs)$/.test(entry.name))
    .map((entry) => path.relative(repoRoot, path.join(entry.parentPath, entry.name)));
}

/** The repository folder each relative import of `file` reaches. */
function importedFolders(file: string): Array<{ specifier: string; folder: string }> {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g)].map((m) => {
    const target = path.relative(repoRoot, path.resolve(path.dirname(path.join(repoRoot, file)), m[1]!));
    return { specifier: m[1]!, folder: target.split(path.sep)[0]! };
  });
}

describe('layering', () => {
  const ranked = layers();
  const rank = new Map(ranked.flatMap((folders, i) => folders.map((folder) => [folder, i] as const)));

  it('the architecture document lists the layers, and each listed folder exists', () => {
    expect(ranked.length).toBeGreaterThanOrEqual(8);
    for (const folder of rank.keys()) expect(readdirSync(path.join(repoRoot, folder)).length, folder).toBeGreaterThan(0);
  });

  it('no source file imports from a layer above its own, or from another folder of its own layer', () => {
    const upward: string[] = [];
    for (const [folder, own] of rank) {
      for (const file of sourceFiles(folder)) {
        for (const { specifier, folder: target } of importedFolders(file)) {
          const theirs = rank.get(target);
          if (target === folder || theirs === undefined) continue;
          if (theirs <= own) upward.push(`${file} imports ${specifier} (${target}, layer ${theirs + 1}; ${folder} is layer ${own + 1})`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it('reads the imports it judges: the top layer reaches lower folders, type-only imports included', () => {
    expect(rank.get('cli')).toBe(0);
    expect(new Set(importedFolders('cli/main.ts').map(({ folder }) => folder))).toEqual(new Set(['client', 'contract', 'cli']));
    expect(importedFolders('workflows/job-workflow.ts').map(({ folder }) => folder)).toContain('activities');
  });
});

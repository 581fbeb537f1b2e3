// Suites: named lists of benchmarks run together under one parent run, from the built-in
// benchmarks/suites.yaml and a user file. Each entry may pick tasks, repeats and generation
// settings. Loading is here with the schema; resolving names to directories is the caller's.

import { existsSync } from 'node:fs';
import { z } from 'zod';
import { fieldPath, InputError, type Problem } from '../contract/problems.js';
import { readYamlFile } from '../contract/yaml-file.js';

const EntrySchema = z.strictObject({
  benchmark: z.string().min(1),
  tasks: z.array(z.string().min(1)).min(1).optional(),
  repeats: z.number().int().positive().optional(),
  /** First N instances of each task (BENCHROUTER_LIMIT). */
  limit: z.number().int().positive().optional(),
  /** Request fields and the special keys of a generation config entry (max_tokens_add, thinking...). */
  generation: z.record(z.string(), z.unknown()).optional(),
});

const SuitesFileSchema = z.strictObject({
  suites: z.record(
    z.string().regex(/^[a-z0-9][a-z0-9._-]*$/),
    z.strictObject({ description: z.string().optional(), benchmarks: z.array(EntrySchema).min(1) }),
    {
      // zod reports a bad record key as "Invalid key in record"; say what a name must look like instead.
      error: (issue) =>
        issue.code === 'invalid_key' ? 'expected a lower-case suite name (a-z, 0-9, ".", "_" or "-", starting with a letter or digit)' : undefined,
    },
  ),
});

export type SuiteEntry = z.infer<typeof EntrySchema>;
export interface Suite {
  name: string;
  description: string;
  entries: SuiteEntry[];
  /** The file the suite came from. */
  file: string;
}

/** Suites from several files; a later file's suite replaces an earlier one of the same name. */
export function loadSuites(files: string[]): Map<string, Suite> {
  const suites = new Map<string, Suite>();
  const problems: Problem[] = [];
  for (const file of files) {
    if (!existsSync(file)) continue;
    const read = readYamlFile(file);
    if (!read.ok) {
      problems.push(read.problem);
      continue;
    }
    const parsed = SuitesFileSchema.safeParse(read.data);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push({ file, field: fieldPath(issue.path), message: issue.message });
      continue;
    }
    for (const [name, suite] of Object.entries(parsed.data.suites))
      suites.set(name, { name, description: suite.description ?? '', entries: suite.benchmarks, file });
  }
  if (problems.length) throw new InputError(problems);
  return suites;
}

/** An entry's name for --only and --exclude: the benchmark as written, or its last path segment. */
export function entryNames(entry: SuiteEntry): string[] {
  return [entry.benchmark, entry.benchmark.replace(/\/+$/, '').split('/').pop()!];
}

/** The names --only and --exclude know an entry's picked tasks by: `task` and `<benchmark>/task`. */
function taskNames(entry: SuiteEntry): string[] {
  return (entry.tasks ?? []).flatMap((task) => [task, ...entryNames(entry).map((name) => `${name}/${task}`)]);
}

/**
 * The suite's entries after --only and --exclude. A name is a benchmark, or a task of an entry that picks
 * tasks (`aime24` or `evalscope/aime24`): then only that task of the entry is kept, or dropped.
 */
export function selectEntries(suite: Suite, only: string[] = [], exclude: string[] = []): SuiteEntry[] {
  const names = new Set(suite.entries.flatMap(entryNames));
  const tasks = new Set(suite.entries.flatMap(taskNames));
  const unknown = [...only, ...exclude].filter((name) => !names.has(name) && !tasks.has(name));
  if (unknown.length) {
    const taskList = [...new Set(suite.entries.flatMap((e) => e.tasks ?? []))];
    const has = `${[...names].join(', ')}${taskList.length ? `; tasks ${taskList.join(', ')}` : ''}`;
    throw new InputError([
      { file: suite.file, field: `suites.${suite.name}`, message: `no benchmark ${unknown.map((n) => `"${n}"`).join(', ')} in this suite (it has ${has})` },
    ]);
  }
  const named = (names: string[], list: string[]) => names.some((n) => list.includes(n));
  return suite.entries.flatMap((entry): SuiteEntry[] => {
    if (named(entryNames(entry), exclude)) return [];
    const wholeEntry = only.length === 0 || named(entryNames(entry), only);
    if (!entry.tasks) return wholeEntry ? [entry] : [];
    const taskNamed = (task: string, list: string[]) => named(taskNames({ ...entry, tasks: [task] }), list);
    const kept = entry.tasks.filter((task) => (wholeEntry || taskNamed(task, only)) && !taskNamed(task, exclude));
    if (kept.length === 0) return [];
    return [kept.length === entry.tasks.length ? entry : { ...entry, tasks: kept }];
  });
}

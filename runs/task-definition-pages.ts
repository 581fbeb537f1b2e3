// A run's task definitions kept out of its workflow input. At submit, the client cuts them into pages
// of at most PAGE_LIMIT_BYTES, each the input of a small workflow of its own (the page's holder, named
// from the run id); the run's input carries only the task names and each page's content digest. Each
// execution of the run loads the pages its batch of jobs needs, one activity per page. Pure, so the
// workflow, the client and the activity agree on the page ids and the arithmetic.

import type { TaskDefinition } from '../contract/benchmark.js';
import { paginateByBytes } from './result-pages.js';

/** The page holder's query, by name: the client asks it without loading the workflow's module. */
export const TASK_DEFINITIONS_QUERY = 'taskDefinitions';

/** Largest page: well under Temporal's 2 MB per payload, and under the 256 KB perf/scale holds every payload to. */
export const PAGE_LIMIT_BYTES = 192 * 1024;

/** What a run's input carries instead of its task definitions. */
export interface PinnedTaskDefinitions {
  /** sha256 (hex) of the definitions' JSON, all of them in order: what the run pinned. */
  digest: string;
  /** Every task's name, in order: job ids and progress need them before any definition is loaded. */
  names: string[];
  /** The pages in order: the index of each page's first task, how many it holds and the sha256 of its JSON. */
  pages: Array<{ first: number; count: number; digest: string }>;
}

/**
 * Tasks known by name only, for the arithmetic of job ids and progress (jobSpecsOf): never for
 * running a job. The workflow fills in the definitions its batch runs; readers of a finished run need
 * no more.
 */
export function tasksByName(names: readonly string[]): TaskDefinition[] {
  return names.map((name) => ({ name }) as TaskDefinition);
}

/** The workflow id of the holder of page `page` of a run's definitions. */
export function definitionsPageId(runId: string, page: number): string {
  return `${runId}.definitions-${page}`;
}

/**
 * The definitions cut into pages in order, each at most `limit` bytes of JSON, except a page of one
 * definition that is bigger on its own (held to SUBMITTED_TASKS_LIMIT_BYTES by `br validate`).
 */
export function paginateDefinitions(tasks: readonly TaskDefinition[], limit = PAGE_LIMIT_BYTES): TaskDefinition[][] {
  return paginateByBytes(tasks, limit);
}

/** The pages that hold these tasks (by index in the run's tasks). */
export function pagesForTasks(definitions: PinnedTaskDefinitions, tasks: Iterable<number>): number[] {
  const needed = new Set(tasks);
  return definitions.pages.flatMap((page, index) => {
    for (let t = page.first; t < page.first + page.count; t++) if (needed.has(t)) return [index];
    return [];
  });
}

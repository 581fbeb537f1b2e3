// A run's task definitions cut into pages (runs/task-definition-pages.ts), and the pages each batch of
// jobs needs: the workflow loads exactly those, so a wrong page here is a job run on the wrong definition.

import { describe, expect, it } from 'vitest';
import type { TaskDefinition } from '../../contract/benchmark.js';
import { definitionsPageId, pagesForTasks, paginateDefinitions, type PinnedTaskDefinitions } from '../../runs/task-definition-pages.js';
import { jobSlotsOf } from '../../runs/job-specs.js';
import type { RunPlan } from '../../runs/instance-shards.js';
import { runOptions } from '../../runs/run-options.js';

const names10 = () => Array.from({ length: 10 }, (_, i) => `t${i}`);

/** A definition whose JSON is exactly `bytes` long (the command pads it). */
function task(name: string, bytes: number): TaskDefinition {
  const base: TaskDefinition = {
    name,
    environment: 'e',
    command: '',
    timeoutSeconds: 1,
    resultMapping: {},
    docker: false,
    dockerImages: [],
    extraEnv: {},
    resources: {} as TaskDefinition['resources'],
    network: 'isolated',
  };
  return { ...base, command: 'x'.repeat(bytes - JSON.stringify(base).length) };
}

const sizes = (pages: TaskDefinition[][]) => pages.map((page) => page.map((t) => t.name));

describe('paginateDefinitions', () => {
  it('fills each page up to the limit in order, counting the JSON array around them', () => {
    // Each definition is 300 bytes (301 with its comma); a page is `[` + definitions + `]` <= 1,000 bytes.
    const tasks = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => task(n, 300));
    expect(sizes(paginateDefinitions(tasks, 1000))).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]);
    for (const page of paginateDefinitions(tasks, 1000)) expect(JSON.stringify(page).length).toBeLessThanOrEqual(1000);
    expect(JSON.stringify(paginateDefinitions(tasks, 1000)[0]).length).toBe(904);
  });

  it('gives a definition bigger than the limit a page of its own, and no pages for no tasks', () => {
    expect(sizes(paginateDefinitions([task('a', 300), task('huge', 5000), task('b', 300)], 1000))).toEqual([['a'], ['huge'], ['b']]);
    expect(paginateDefinitions([], 1000)).toEqual([]);
  });
});

describe('pagesForTasks', () => {
  // 10 tasks on 3 pages: tasks 0-3, 4-7, 8-9.
  const pinned: PinnedTaskDefinitions = {
    digest: 'd',
    names: Array.from({ length: 10 }, (_, i) => `t${i}`),
    pages: [
      { first: 0, count: 4, digest: 'p0' },
      { first: 4, count: 4, digest: 'p1' },
      { first: 8, count: 2, digest: 'p2' },
    ],
  };
  const slotsOf = (first: number, count: number, plan?: RunPlan) =>
    jobSlotsOf({ tasks: [], definitions: pinned, options: runOptions({ model: 'm', endpoint: 'http://m/v1', repeats: 3 }), ...(plan ? { plan } : {}) }).slice(
      first,
      first + count,
    );
  const pagesOf = (first: number, count: number, plan?: RunPlan) => pagesForTasks(pinned, new Set(slotsOf(first, count, plan).map((slot) => slot.task)));

  it('names the pages holding the tasks of a batch of jobs, across a repeat boundary too', () => {
    expect(pagesOf(0, 3)).toEqual([0]);
    expect(pagesOf(3, 2)).toEqual([0, 1]);
    expect(pagesOf(8, 2)).toEqual([2]);
    // Jobs 18-21: tasks 8, 9 (first repeat's end), then 0, 1 (second repeat).
    expect(pagesOf(18, 4)).toEqual([0, 2]);
  });

  it('names every page when a batch covers every task', () => {
    expect(pagesOf(5, 10)).toEqual([0, 1, 2]);
    expect(pagesOf(0, 1000)).toEqual([0, 1, 2]);
  });

  it('maps jobs to tasks by the plan when a task runs in shards: t1 in 5 shards covers jobs 1-5', () => {
    const plan: RunPlan = names10().map((_, i) => (i === 1 ? { selected: 10, shardSize: 2 } : null));
    expect(slotsOf(0, 7, plan).map((slot) => [slot.task, slot.shard])).toEqual([
      [0, 0],
      [1, 0],
      [1, 1],
      [1, 2],
      [1, 3],
      [1, 4],
      [2, 0],
    ]);
    expect(pagesOf(2, 4, plan)).toEqual([0]);
    expect(pagesOf(6, 4, plan)).toEqual([0, 1]);
  });

  it("names each page's holder after its run", () => {
    expect(definitionsPageId('br-20261130-120000-abcdef', 2)).toBe('br-20261130-120000-abcdef.definitions-2');
  });
});

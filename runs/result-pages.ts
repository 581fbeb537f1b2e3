// A run's per-job results in a few large pages instead of one memo per job. Each execution of a run
// in batches, once its jobs are done, cuts their results into pages of at most RESULTS_PAGE_LIMIT_BYTES and
// starts one small workflow per page whose input is the page (workflows/run-results-page-workflow.ts).
// The run's result names the pages; a reader gets each with one history call of page size 1
// (client/run-jobs.ts) instead of listing every job workflow's memo. Pure, so the workflow and the
// reader agree on the ids and the cut.

import type { JobResult } from './run-spec.js';

/** Largest page, as for task definitions: under the 256 KB perf/scale holds every payload to. */
export const RESULTS_PAGE_LIMIT_BYTES = 192 * 1024;

/** The workflow id of page `page` of the results of the batch that starts at job `first`. */
export function resultsPageId(runId: string, first: number, page: number): string {
  return `${runId}.results-${first}-${page}`;
}

/**
 * `items` cut into pages in order, each at most `limit` bytes of JSON, except a page of one item that
 * is bigger on its own.
 */
export function paginateByBytes<T>(items: readonly T[], limit: number): T[][] {
  const pages: T[][] = [];
  let page: T[] = [];
  let bytes = 2; // []
  for (const item of items) {
    const size = new TextEncoder().encode(JSON.stringify(item)).length + 1;
    if (page.length > 0 && bytes + size > limit) {
      pages.push(page);
      page = [];
      bytes = 2;
    }
    page.push(item);
    bytes += size;
  }
  if (page.length > 0) pages.push(page);
  return pages;
}

/** A batch's results as pages. */
export function paginateResults(results: readonly JobResult[], limit = RESULTS_PAGE_LIMIT_BYTES): JobResult[][] {
  return paginateByBytes(results, limit);
}

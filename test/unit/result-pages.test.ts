// A run's job results cut into pages (runs/result-pages.ts): each page must stay under the payload
// limit, keep job order and hold every result once, whatever the results' sizes.

import { describe, expect, it } from 'vitest';
import { paginateResults, RESULTS_PAGE_LIMIT_BYTES, resultsPageId } from '../../runs/result-pages.js';
import type { JobResult } from '../../runs/run-spec.js';

/** A result whose message pads it to about `bytes` of JSON. */
function result(index: number, bytes: number): JobResult {
  const base: JobResult = {
    jobId: `br-run.${index}-noop`,
    task: 'noop',
    status: 'SUCCEEDED',
    timings: { queuedAt: '2026-11-30T00:00:00.000Z', finishedAt: '2026-11-30T00:00:01.000Z', containerSeconds: 1 },
  };
  return { ...base, message: 'x'.repeat(Math.max(0, bytes - JSON.stringify(base).length - 14)) };
}

describe('paginateResults', () => {
  it('keeps 1,000 results of about 600 bytes in four pages under the limit, in order, each once', () => {
    const results = Array.from({ length: 1000 }, (_, i) => result(i, 600));
    const pages = paginateResults(results);
    expect(pages).toHaveLength(4);
    for (const page of pages) expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(RESULTS_PAGE_LIMIT_BYTES);
    expect(pages.flat()).toEqual(results);
  });

  it('puts a result bigger than the limit on a page of its own, and makes no page of nothing', () => {
    const results = [result(0, 100), result(1, 2000), result(2, 100)];
    expect(paginateResults(results, 1000).map((page) => page.map((r) => r.jobId))).toEqual([['br-run.0-noop'], ['br-run.1-noop'], ['br-run.2-noop']]);
    expect(paginateResults([], 1000)).toEqual([]);
  });

  it('names each page by its run, its batch and its place', () => {
    expect(resultsPageId('br-20261130-120000-abcdef', 2000, 1)).toBe('br-20261130-120000-abcdef.results-2000-1');
  });
});

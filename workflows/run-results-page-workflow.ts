// runResultsPageWorkflow: one page of a run's job results (runs/result-pages.ts). Its input is the
// page, so the page lives in Temporal, which every reader reaches, and a reader gets it back with one
// history call of page size 1, its first event. It has nothing to do and closes at once; its history
// stays for the namespace's retention, as the run's and its jobs' do.

import type { JobResult } from '../runs/run-spec.js';

export async function runResultsPageWorkflow(_page: JobResult[]): Promise<void> {
  // The page is the input; nothing else to keep.
}

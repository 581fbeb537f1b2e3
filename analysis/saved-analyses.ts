// Saved routing analyses: `br analyze` keeps each report as `$BENCHROUTER_HOME/analyses/<id>.json`, so the
// dashboard can show an analysis whose router containers took minutes without running them on a page view.
// File I/O lives here; the report itself is what `br analyze --json` prints.

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { sortableId } from '../runs/sortable-id.js';
import type { RoutingReport } from './routing-analysis.js';

/**
 * `an-20261202-153000123-a1b2c3`: sortable by time to the millisecond (two analyses of one second list in the
 * order they were made), unique by its random tail, safe as a file name.
 */
export const ANALYSIS_ID = /^an-\d{8}-\d{9}-[0-9a-f]{6}$/;

export function analysesDir(home: string): string {
  return path.join(home, 'analyses');
}

export function newAnalysisId(now = new Date()): string {
  return sortableId('an', now, { millis: true });
}

export interface SavedAnalysis {
  id: string;
  createdAt: string;
  /** What was analysed, as the command named it: `--records a.jsonl`, `--runs br-…`, `--routers all`. */
  inputs: string[];
  report: RoutingReport;
}

/** What a list of saved analyses shows of each, without the whole report (the API's GET /analyses says the same). */
export const SavedAnalysisSummarySchema = z.object({
  id: z.string(),
  createdAt: z.string(),
  inputs: z.array(z.string()),
  models: z.number(),
  queries: z.number(),
  testQueries: z.number(),
  embedder: z.string(),
  /** The rows that route (in-process and container routers), in report order; references left out. */
  routers: z.array(z.string()),
});
export type SavedAnalysisSummary = z.infer<typeof SavedAnalysisSummarySchema>;

/** One line of the list: an analysis, or a file that does not read, as its problem. */
export const SavedAnalysisListingSchema = z.union([SavedAnalysisSummarySchema, z.object({ id: z.string(), problem: z.string() })]);
export type SavedAnalysisListing = z.infer<typeof SavedAnalysisListingSchema>;

// Checked on read: a hand-edited or truncated file is an error naming it, not a page that breaks half-way.
// The parts the dashboard reads are checked; the rest of the report is kept as it is.
const Row = z.object({ name: z.string(), kind: z.string(), acc: z.number(), cost: z.number() }).passthrough();
const SavedAnalysisSchema = z.object({
  id: z.string().regex(ANALYSIS_ID),
  createdAt: z.string(),
  inputs: z.array(z.string()),
  report: z
    .object({
      embedder: z.string(),
      options: z.record(z.string(), z.unknown()),
      pool: z
        .object({
          models: z.array(z.string()),
          queries: z.number(),
          testQueries: z.number(),
          datasets: z.array(z.object({ name: z.string() }).passthrough()),
        })
        .passthrough(),
      models: z.array(z.object({ model: z.string() }).passthrough()),
      methods: z.array(Row),
      costAware: z.array(z.object({ name: z.string(), settings: z.array(z.object({ acc: z.number(), cost: z.number() }).passthrough()) }).passthrough()),
      frontier: z.array(z.object({ label: z.string(), cost: z.number(), acc: z.number() })),
    })
    .passthrough(),
});

export class SavedAnalysisError extends Error {
  override name = 'SavedAnalysisError';
}

/** Writes the report under a new id (to a temporary file renamed into place: a reader never sees half of it). */
export function saveAnalysis(home: string, report: RoutingReport, inputs: string[], now = new Date()): { id: string; file: string } {
  const dir = analysesDir(home);
  mkdirSync(dir, { recursive: true });
  const id = newAnalysisId(now);
  const file = path.join(dir, `${id}.json`);
  const saved: SavedAnalysis = { id, createdAt: now.toISOString(), inputs, report };
  writeFileSync(`${file}.tmp`, JSON.stringify(saved));
  renameSync(`${file}.tmp`, file);
  return { id, file };
}

/** A saved analysis by id; undefined when there is none of that id. */
export function readSavedAnalysis(home: string, id: string): SavedAnalysis | undefined {
  if (!ANALYSIS_ID.test(id)) return undefined;
  const file = path.join(analysesDir(home), `${id}.json`);
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new SavedAnalysisError(`${file}: not JSON (${(error as Error).message})`);
  }
  const checked = SavedAnalysisSchema.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new SavedAnalysisError(`${file}: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  if (checked.data.id !== id) throw new SavedAnalysisError(`${file}: id: says ${checked.data.id}, expected ${id} (its file name)`);
  return checked.data as unknown as SavedAnalysis;
}

/**
 * Each listed file's line, kept while its size and modification time stay: a saved analysis is written once,
 * so a page view reads only the files that are new since the last, not 50 whole reports each time.
 */
let listed = new Map<string, { stamp: string; line: SavedAnalysisListing }>();

/** The newest `limit` saved analyses, newest first; a file that does not read is listed as its problem. */
export function listSavedAnalyses(home: string, limit = 50): SavedAnalysisListing[] {
  const dir = analysesDir(home);
  if (!existsSync(dir)) return [];
  const ids = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && ANALYSIS_ID.test(f.slice(0, -5)))
    .map((f) => f.slice(0, -5))
    .sort()
    .reverse()
    .slice(0, limit);
  const kept = new Map<string, { stamp: string; line: SavedAnalysisListing }>();
  const lines = ids.flatMap((id): SavedAnalysisListing[] => {
    const file = path.join(dir, `${id}.json`);
    let stamp: string;
    try {
      const { size, mtimeMs } = statSync(file);
      stamp = `${size}:${mtimeMs}`;
    } catch {
      return []; // removed since the directory was read
    }
    const known = listed.get(file);
    const line = known?.stamp === stamp ? known.line : listingOf(home, id);
    if (!line) return [];
    kept.set(file, { stamp, line });
    return [line];
  });
  listed = kept;
  return lines;
}

function listingOf(home: string, id: string): SavedAnalysisListing | undefined {
  try {
    const saved = readSavedAnalysis(home, id);
    return saved && summaryOf(saved);
  } catch (error) {
    if (!(error instanceof SavedAnalysisError)) throw error;
    return { id, problem: error.message };
  }
}

export function summaryOf(saved: SavedAnalysis): SavedAnalysisSummary {
  const { report } = saved;
  return {
    id: saved.id,
    createdAt: saved.createdAt,
    inputs: saved.inputs,
    models: report.pool.models.length,
    queries: report.pool.queries,
    testQueries: report.pool.testQueries,
    embedder: report.embedder,
    // A container's "(cost settings)" row is the same router as its pure-performance row.
    routers: [
      ...report.methods.filter((m) => m.kind === 'router').map((m) => m.name),
      ...report.costAware.filter((r) => r.settingName === undefined).map((r) => r.name),
    ],
  };
}

// The embedded dev server's SQLite database, made lighter to write before the server uses it.
//
// Temporal's SQLite schema indexes its visibility table (one row per workflow execution) 58 ways
// besides its primary key: one index per system column and per pre-allocated custom search-attribute
// slot (ten Keyword, three Double, Int, Bool, Datetime slots, and Temporal's own reserved ones), each
// keyed by the column and then the close time. Every visibility write (an execution's start, its
// search-attribute upserts, its close, which moves every entry) touches all of them. Measured (`strace`
// of the server's WAL writes, 10 no-op jobs): 72% of the pages the server wrote were visibility index
// pages, 2.2 MB of writes a job; and the server's CPU a job grew with the database (28 -> 35 ms after
// 2,500 executions) as those indexes outgrew SQLite's page cache.
//
// This drops the indexes no query of BenchRouter's or of the Temporal Web UI's usual views uses,
// keeping those on the columns runs and jobs are listed by. Dropping an index never changes a query's
// result, only its speed: a filter on a dropped column (a custom attribute added by hand, say) scans
// the table instead. Done only while no server has the file open: SQLite's DDL would take the write
// lock from under a running server. The `sqlite3` command-line shell does it (scripts/bootstrap.sh
// installs it); without one the database keeps every index and works as before.

import { spawnSync } from 'node:child_process';
import { FILTERED_SEARCH_ATTRIBUTES, SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';

/**
 * The custom slots BenchRouter's filtered attributes take: slots are given in registration order
 * (Keyword01.., Double01..), so an attribute's slot is its place among the attributes of its type.
 */
function slotsOf(type: 'KEYWORD' | 'DOUBLE', prefix: string): string[] {
  return Object.entries(SEARCH_ATTRIBUTES)
    .filter(([, key]) => key.type === type)
    .flatMap(([name], i) =>
      FILTERED_SEARCH_ATTRIBUTES.includes(name as keyof typeof SEARCH_ATTRIBUTES) ? [`${prefix}_${String(i + 1).padStart(2, '0')}`] : [],
    );
}

/**
 * The visibility indexes kept: the list order (default_idx), the columns BenchRouter filters runs and
 * jobs by (workflow type, status, task queue, workflow id prefix, its own search attributes), and
 * those the Web UI's views filter by (parent and root workflow, schedules, execution time).
 */
export const KEPT_VISIBILITY_INDEXES: readonly string[] = [
  'default_idx',
  'by_workflow_type',
  'by_status',
  'by_task_queue',
  'by_workflow_id',
  'by_execution_time',
  'by_parent_workflow_id',
  'by_root_workflow_id',
  'by_temporal_namespace_division',
  'by_temporal_scheduled_by_id',
  ...slotsOf('KEYWORD', 'by_keyword'),
  ...slotsOf('DOUBLE', 'by_double'),
];

/** SQL naming the visibility indexes to drop: every one not kept, and not SQLite's own (the primary key). */
function droppableIndexesQuery(): string {
  const kept = KEPT_VISIBILITY_INDEXES.map((name) => `'${name}'`).join(', ');
  return `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'executions_visibility' AND name NOT LIKE 'sqlite_autoindex_%' AND name NOT IN (${kept});`;
}

/** What trimming did: dropped these indexes, found none left to drop, or could not (with why). */
export type TrimOutcome = { dropped: string[] } | { skipped: string };

/** Drops the droppable visibility indexes of `dbFile`, which no server may have open. Never throws: the database works either way. */
export function trimVisibilityIndexes(dbFile: string): TrimOutcome {
  const sqlite = (sql: string) => spawnSync('sqlite3', ['-batch', dbFile, sql], { encoding: 'utf8', timeout: 30_000 });
  const listed = sqlite(droppableIndexesQuery());
  if (listed.error) {
    const missing = (listed.error as NodeJS.ErrnoException).code === 'ENOENT';
    return { skipped: missing ? 'the sqlite3 command is not installed (apt-get install sqlite3)' : listed.error.message };
  }
  if (listed.status !== 0) return { skipped: `sqlite3 ${dbFile}: ${listed.stderr.trim()}` };
  const names = listed.stdout.split('\n').filter((name) => /^[A-Za-z0-9_]+$/.test(name));
  if (names.length === 0) return { dropped: [] };
  const dropped = sqlite(`BEGIN; ${names.map((name) => `DROP INDEX IF EXISTS ${name};`).join(' ')} COMMIT;`);
  if (dropped.error || dropped.status !== 0) return { skipped: `sqlite3 ${dbFile}: ${dropped.error?.message ?? dropped.stderr.trim()}` };
  return { dropped: names };
}

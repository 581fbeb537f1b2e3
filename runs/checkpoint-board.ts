// Score against checkpoint for one schedule: its runs (from visibility) laid out one row per
// checkpoint, oldest first (the order training produced them), one cell per benchmark. Pure.

export interface ScheduledRun {
  runId: string;
  status: string;
  benchmark: string;
  /** The run's model name: the checkpoint the schedule found. */
  model: string;
  startTime: string;
  score?: number;
}

export interface CheckpointCell {
  runId: string;
  status: string;
  /** The run's overall score; absent while it runs, or when no job succeeded. */
  score?: number;
}

export interface CheckpointRow {
  checkpoint: string;
  /** When its first run started: when the schedule found it. */
  foundAt: string;
  cells: Record<string, CheckpointCell>;
}

export interface CheckpointBoard {
  benchmarks: string[];
  rows: CheckpointRow[];
}

export function checkpointBoard(runs: readonly ScheduledRun[]): CheckpointBoard {
  const ordered = [...runs].sort((a, b) => a.startTime.localeCompare(b.startTime) || a.runId.localeCompare(b.runId));
  const rows = new Map<string, CheckpointRow>();
  const benchmarks = new Set<string>();
  for (const run of ordered) {
    benchmarks.add(run.benchmark);
    let row = rows.get(run.model);
    if (!row) rows.set(run.model, (row = { checkpoint: run.model, foundAt: run.startTime, cells: {} }));
    row.cells[run.benchmark] = { runId: run.runId, status: run.status, ...(run.score !== undefined ? { score: run.score } : {}) };
  }
  return { benchmarks: [...benchmarks].sort(), rows: [...rows.values()] };
}

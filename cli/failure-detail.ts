// The DETAIL cell of a failed job: the one line that says what went wrong (for a non-zero exit, the
// last line the task printed), cut so the results table fits the terminal.

import type { JobResult } from '../runs/run-spec.js';

/** How harvest-result joins a failure and the task's last log line in a job's message. */
const LAST_LOG_LINE = '; last log line: ';
/** The table's width when stdout is not a terminal (a pipe, a CI log): wide, but still a table. */
export const UNBOUNDED_WIDTH = 160;
/** DETAIL never gets narrower than this, whatever the other columns take. */
const MIN_DETAIL_WIDTH = 24;

/** The first meaningful line of a job's failure; the whole message stays in `--json` and `br results RUN --task T`. */
export function failureLine(job: Pick<JobResult, 'message' | 'reason'>): string {
  const message = job.message ?? '';
  const at = message.indexOf(LAST_LOG_LINE);
  if (job.reason === 'NON_ZERO_EXIT' && at >= 0) {
    const code = /exited with code (\d+)/.exec(message.slice(0, at))?.[1];
    const logLine = message.slice(at + LAST_LOG_LINE.length).trim();
    if (logLine) return code ? `exit ${code}: ${logLine}` : logLine;
  }
  return (
    message
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l) ?? ''
  );
}

/** `text` cut to `width` characters, the cut marked with an ellipsis. */
export function cutTo(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? text.slice(0, Math.max(0, width)) : `${text.slice(0, width - 1)}…`;
}

/** What DETAIL may take: the terminal's width less the other columns (each followed by two spaces). */
export function detailWidth(otherColumnWidths: number[], terminalWidth: number | undefined): number {
  const used = otherColumnWidths.reduce((sum, w) => sum + w + 2, 0);
  return Math.max(MIN_DETAIL_WIDTH, (terminalWidth ?? UNBOUNDED_WIDTH) - used);
}

// Following a run or suite on stderr: a bar redrawn in place on a TTY, a quiet line per change
// otherwise (CI logs), health findings on lines of their own; and a finished run printed as its
// table (or JSON) with its exit code.

import { followRun, type RunHandle } from '../client/runs.js';
import { runWebUiLink } from '../config/settings.js';
import type { RunProgress, RunResult } from '../runs/run-spec.js';
import type { CliDeps } from './cli-deps.js';
import { watchRunWhileWaiting } from './health-watch.js';
import { exitCodeOf } from './exit-codes.js';
import { progressLine, renderRunResult } from './run-text.js';

export function progressReporter(deps: CliDeps): { show: (p: RunProgress) => void; done: () => void; newLine: () => void } {
  const tty = process.stderr.isTTY;
  let last = '';
  return {
    /** Ends the bar's line, so a note printed now stands on a line of its own; the next change redraws the bar. */
    newLine() {
      if (tty && last) process.stderr.write('\n');
      last = '';
    },
    show(p) {
      const line = progressLine(p);
      if (line === last) return;
      last = line;
      if (tty) process.stderr.write(`\r${line}\x1b[K`);
      else deps.say(line);
    },
    done() {
      if (tty) process.stderr.write('\n');
    },
  };
}

/** Follows the run to its result, saying what is wrong meanwhile (health findings); Ctrl-C ends the wait, not the run. */
export async function waitWithProgress(deps: CliDeps, handle: RunHandle, options: { cancelling?: boolean } = {}): Promise<RunResult> {
  const progress = progressReporter(deps);
  const watch = watchRunWhileWaiting(deps, handle.workflowId, { cancelling: options.cancelling, newLine: progress.newLine });
  try {
    return await followRun(handle, (p) => {
      watch.progress(p);
      progress.show(p);
    });
  } finally {
    watch.stop();
    progress.done();
  }
}

/** What `br run`, `retry`, `rerun`, `cancel` and `demo` end with: the result, and the exit code its status means. */
export async function printRun(deps: CliDeps, result: RunResult, json: boolean | undefined): Promise<void> {
  await deps.stdout(
    json ? `${JSON.stringify(result, null, 2)}\n` : `${renderRunResult(result, runWebUiLink(deps.settings(), result.runId), process.stdout.columns)}\n`,
  );
  deps.setExitCode(exitCodeOf(result.status));
}

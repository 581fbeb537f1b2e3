// The dashboard's pictures from its domain objects: score against checkpoint of a schedule, the
// leaderboard as a heat map with intervals, two runs' agreement matrix, a run over time. Each is the
// SVG a page inlines and the API serves (as SVG, or PNG through resvg).

import { agreementMatrix } from '../charts/agreement-matrix.js';
import { heatMap } from '../charts/heat-map.js';
import { lineChart } from '../charts/line-chart.js';
import { timePanels } from '../charts/time-panels.js';
import type { InstanceAgreement } from '../analysis/instance-agreement.js';
import { DIFFERS_MARK, type Leaderboard } from '../runs/leaderboard.js';
import type { CheckpointBoard } from '../runs/checkpoint-board.js';
import { runTimeline, type TimedCall } from '../runs/run-timeline.js';
import type { JobResult } from '../runs/run-spec.js';

const runLink = (runId: string) => `/ui/runs/${encodeURIComponent(runId)}`;

export function checkpointSvg(board: CheckpointBoard): string {
  return lineChart({
    id: 'checkpoint-plot',
    label: 'score against checkpoint',
    categories: board.rows.map((row) => row.checkpoint),
    series: board.benchmarks.map((benchmark) => ({
      name: benchmark,
      points: board.rows.flatMap((row, at) => {
        const cell = row.cells[benchmark];
        return cell?.score === undefined
          ? []
          : [
              {
                at,
                value: cell.score,
                href: runLink(cell.runId),
                title: `${benchmark} · ${row.checkpoint}: ${cell.score.toFixed(4)}`,
                data: { checkpoint: row.checkpoint, score: cell.score },
              },
            ];
      }),
    })),
  });
}

export function leaderboardSvg(board: Leaderboard): string {
  return heatMap({
    id: 'leaderboard-heatmap',
    label: 'leaderboard: score per model and benchmark with 95% intervals',
    rows: board.models,
    columns: board.benchmarks,
    cell: (model, benchmark) => {
      const cell = board.cells[model]?.[benchmark];
      if (!cell) return undefined;
      const { stats } = cell;
      return {
        value: cell.score,
        ...(stats?.low !== undefined && stats.high !== undefined ? { low: stats.low, high: stats.high } : {}),
        ...(stats ? { n: stats.n } : {}),
        href: runLink(cell.runId),
        ...(cell.differs || cell.partial ? { mark: `${cell.partial ? '*' : ''}${cell.differs ? DIFFERS_MARK : ''}` } : {}),
      };
    },
  });
}

export function agreementSvg(runA: string, runB: string, agreement: InstanceAgreement): string {
  return agreementMatrix({ id: 'agreement-matrix', label: `instances of ${runA} and ${runB}: where they agree`, nameA: runA, nameB: runB, counts: agreement });
}

export function timelineSvg(jobs: ReadonlyArray<Pick<JobResult, 'timings'>>, calls: readonly TimedCall[]): string | undefined {
  const timeline = runTimeline(jobs, calls);
  if (!timeline.panels.length) return undefined;
  return timePanels({ id: 'run-timeline', label: 'the run over time: jobs finished, and jobs, calls and tokens per minute', ...timeline });
}

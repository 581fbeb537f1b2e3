// How sure a run's score is: n (what it is a mean over) and a 95% interval, computed when the run ends
// from its tally and kept in a search attribute, so the leaderboard shows them from visibility alone.
// Pure. The definitions (docs/results.md#leaderboard-n-and-interval):
//   - two or more repeats: the run's score ± t(0.975, R - 1) · s / √R, s the std of the R repeat means;
//   - one repeat, per-instance scores all 0 or 1: the Wilson score interval of k successes in n instances;
//   - one repeat, other per-instance scores: the mean ± 1.96 · s / √n (normal approximation), s their std;
//   - otherwise (no records.jsonl, one instance): no interval.
// n is the number of per-instance records the scored jobs wrote (over every repeat), or the number of
// scored jobs when they wrote none.

const Z95 = 1.959963984540054;

/** t(0.975, df) for df 1..30; above, the normal quantile is within 2%. */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069,
  2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

export function t975(df: number): number {
  return df >= 1 && df <= T975.length ? T975[df - 1]! : Z95;
}

export type IntervalMethod = 'repeats' | 'wilson' | 'normal';

export interface ScoreStats {
  n: number;
  /** The 95% interval, clamped to [0, 1]; absent when there is none to give. */
  low?: number;
  high?: number;
  method?: IntervalMethod;
}

/** Sums over the per-instance scores of a run's scored jobs (records.jsonl). */
export interface InstanceSums {
  n: number;
  sum: number;
  squares: number;
}

/** The Wilson score interval of `k` successes in `n` trials at 95%. */
export function wilsonInterval(k: number, n: number): [number, number] {
  const p = k / n;
  const z2 = Z95 * Z95;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (Z95 / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [clamp(center - half), clamp(center + half)];
}

/**
 * The score's n and interval. `instances`: the records' sums, undefined when some scored job wrote no
 * records (or an older summary without squares); `repeatMeans`: each repeat's mean score, in order.
 */
export function scoreStats(input: { overall: number | null; scoredJobs: number; repeatMeans: number[]; instances?: InstanceSums }): ScoreStats {
  const { overall, repeatMeans, instances } = input;
  const n = instances && instances.n > 0 ? instances.n : input.scoredJobs;
  if (overall === null) return { n };
  if (repeatMeans.length >= 2) {
    const r = repeatMeans.length;
    const mean = repeatMeans.reduce((a, b) => a + b, 0) / r;
    const s = Math.sqrt(repeatMeans.reduce((a, x) => a + (x - mean) ** 2, 0) / (r - 1));
    const half = (t975(r - 1) * s) / Math.sqrt(r);
    return { n, low: clamp(overall - half), high: clamp(overall + half), method: 'repeats' };
  }
  if (!instances || instances.n < 2) return { n };
  // For scores in [0, 1], x² <= x with equality only at 0 and 1: the squares sum to the sum exactly when every score is 0 or 1.
  if (Math.abs(instances.squares - instances.sum) < 1e-9 * Math.max(1, instances.n)) {
    const [low, high] = wilsonInterval(Math.round(instances.sum), instances.n);
    return { n, low, high, method: 'wilson' };
  }
  const mean = instances.sum / instances.n;
  const variance = Math.max(0, (instances.squares - instances.n * mean * mean) / (instances.n - 1));
  const half = Z95 * Math.sqrt(variance / instances.n);
  return { n, low: clamp(mean - half), high: clamp(mean + half), method: 'normal' };
}

/** `n=40;low=0.652427;high=0.895;by=wilson`: the search attribute's text (visibility keeps keywords, not objects). */
export function formatScoreStats(stats: ScoreStats): string {
  const parts = [`n=${stats.n}`];
  if (stats.low !== undefined && stats.high !== undefined) parts.push(`low=${stats.low.toFixed(6)}`, `high=${stats.high.toFixed(6)}`, `by=${stats.method}`);
  return parts.join(';');
}

/** The search attribute's text read back; undefined for text it cannot read. */
export function parseScoreStats(text: string | undefined): ScoreStats | undefined {
  if (!text) return undefined;
  const fields = Object.fromEntries(text.split(';').map((part) => part.split('=', 2) as [string, string]));
  const n = Number(fields.n);
  if (!Number.isInteger(n) || n < 0) return undefined;
  const low = Number(fields.low);
  const high = Number(fields.high);
  const method = fields.by as IntervalMethod | undefined;
  return fields.low !== undefined && Number.isFinite(low) && Number.isFinite(high) && method ? { n, low, high, method } : { n };
}

function clamp(x: number): number {
  return Math.min(1, Math.max(0, x));
}

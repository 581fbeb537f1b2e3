// The accuracy–cost Pareto frontier over single models and router settings, and ParetoDist: how far
// a router's settings lie, on average, from the frontier's step curve in min–max normalized units.
// Accuracies compare exactly as ratios of counts where they are, costs within a relative tolerance
// (accuracy-order.ts), so float noise neither keeps a dominated point nor drops an equal one.

import { compareAcc, compareCost, type ExactAcc } from './accuracy-order.js';

export interface CostAccPoint {
  cost: number;
  acc: number;
  exactAcc?: ExactAcc | null;
}

/** q dominates p: no more expensive, no less accurate, and strictly better in one of the two. */
export function dominates(q: CostAccPoint, p: CostAccPoint): boolean {
  const cost = compareCost(q.cost, p.cost);
  const acc = compareAcc(q, p);
  return cost <= 0 && acc >= 0 && (cost < 0 || acc > 0);
}

/**
 * Indices of the points no other point dominates, by cost then accuracy. Equal points are all kept.
 * Quadratic on purpose: a few hundred points, and the definition reads off the code.
 */
export function paretoFrontier(points: readonly CostAccPoint[]): number[] {
  const frontier: number[] = [];
  for (let i = 0; i < points.length; i++) {
    if (!points.some((q, j) => j !== i && dominates(q, points[i]!))) frontier.push(i);
  }
  return frontier.sort((a, b) => points[a]!.cost - points[b]!.cost || points[a]!.acc - points[b]!.acc);
}

/** x ↦ (x − min) / (max − min) over the given values; everything maps to 0 when they are all equal. */
export function minMaxScaler(values: readonly number[]): (x: number) => number {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const range = max - min;
  return (x) => (range > 0 ? (x - min) / range : 0);
}

/**
 * The frontier's step curve, normalized: from each frontier point (by cost) across to the next
 * point's cost at the same accuracy, then up to that point; after the last, across to the highest
 * cost of all points. It is the best accuracy reachable at each budget from the cheapest frontier
 * point on.
 */
export function stepCurve(frontier: readonly CostAccPoint[], all: readonly CostAccPoint[]): CostAccPoint[] {
  const cost = minMaxScaler(all.map((p) => p.cost));
  const acc = minMaxScaler(all.map((p) => p.acc));
  const steps = frontier.map((p) => ({ cost: cost(p.cost), acc: acc(p.acc) }));
  const curve: CostAccPoint[] = [];
  for (const p of steps) {
    const last = curve[curve.length - 1];
    if (last && last.cost === p.cost && last.acc === p.acc) continue;
    if (last) curve.push({ cost: p.cost, acc: last.acc });
    curve.push(p);
  }
  const end = curve[curve.length - 1];
  let maxCost = -Infinity;
  for (const p of all) maxCost = Math.max(maxCost, cost(p.cost));
  if (end && end.cost < maxCost) curve.push({ cost: maxCost, acc: end.acc });
  return curve;
}

/**
 * ParetoDist: the mean over the settings of the Euclidean distance to the step curve of the
 * frontier of `all`, with cost and accuracy min–max normalized over `all`.
 */
export function paretoDistance(settings: readonly CostAccPoint[], all: readonly CostAccPoint[]): number | null {
  if (settings.length === 0 || all.length === 0) return null;
  const frontier = paretoFrontier(all).map((i) => all[i]!);
  const curve = stepCurve(frontier, all);
  const cost = minMaxScaler(all.map((p) => p.cost));
  const acc = minMaxScaler(all.map((p) => p.acc));
  let sum = 0;
  for (const s of settings) sum += distanceToPolyline({ cost: cost(s.cost), acc: acc(s.acc) }, curve);
  return sum / settings.length;
}

export function distanceToPolyline(p: CostAccPoint, line: readonly CostAccPoint[]): number {
  if (line.length === 1) return Math.hypot(p.cost - line[0]!.cost, p.acc - line[0]!.acc);
  let best = Infinity;
  for (let i = 1; i < line.length; i++) best = Math.min(best, distanceToSegment(p, line[i - 1]!, line[i]!));
  return best;
}

function distanceToSegment(p: CostAccPoint, a: CostAccPoint, b: CostAccPoint): number {
  const dx = b.cost - a.cost;
  const dy = b.acc - a.acc;
  const length2 = dx * dx + dy * dy;
  const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((p.cost - a.cost) * dx + (p.acc - a.acc) * dy) / length2));
  return Math.hypot(p.cost - (a.cost + t * dx), p.acc - (a.acc + t * dy));
}

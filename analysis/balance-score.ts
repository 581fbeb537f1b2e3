// The Avengers-Pro trade-off between accuracy and cost that both cost-aware routers rank models by,
// α = 1 for accuracy alone, α = 0 for cost alone.

/**
 * α·ã_m + (1 − α)·(1 − c_m / max c) per model, written into out: ã is the scores min–max normalized
 * over models (1 for all when they are equal); the cost term is 1 when every cost is 0.
 */
export function balanceInto(score: ArrayLike<number>, cost: ArrayLike<number>, alpha: number, out: Float64Array): void {
  const accTerm = new Float64Array(score.length);
  const costTerm = new Float64Array(score.length);
  balanceTermsInto(score, cost, accTerm, costTerm);
  for (let m = 0; m < score.length; m++) out[m] = alpha * accTerm[m]! + (1 - alpha) * costTerm[m]!;
}

/**
 * The two terms of the balance, which do not depend on α: ã_m and 1 − c_m / max c. A sweep over α
 * computes them once and only combines them per α (the same numbers as balanceInto, bit for bit).
 */
export function balanceTermsInto(score: ArrayLike<number>, cost: ArrayLike<number>, accOut: Float64Array, costOut: Float64Array): void {
  let minAcc = Infinity;
  let maxAcc = -Infinity;
  let maxCost = 0;
  for (let m = 0; m < score.length; m++) {
    minAcc = Math.min(minAcc, score[m]!);
    maxAcc = Math.max(maxAcc, score[m]!);
    maxCost = Math.max(maxCost, cost[m]!);
  }
  const range = maxAcc - minAcc;
  for (let m = 0; m < score.length; m++) {
    accOut[m] = range > 0 ? (score[m]! - minAcc) / range : 1;
    costOut[m] = maxCost > 0 ? 1 - cost[m]! / maxCost : 1;
  }
}

// The cost setting's per-router figures, over a router's settings (its α sweep): PerfGain, the best
// accuracy's gain over Best Single, and CostSave, how much cheaper than Best Single the cheapest
// setting that matches Best Single's accuracy is ("n/a", null, when none does). "Matches" compares
// accuracies exactly as ratios of counts where they are (see accuracy-order.ts), so a setting with
// Best Single's very accuracy counts however its floats were summed.

import { compareAcc, type ExactAcc } from './accuracy-order.js';

export interface Setting {
  acc: number;
  cost: number;
  exactAcc?: ExactAcc | null;
}

/** (max over settings of Acc − Acc_BS) / Acc_BS; null when Acc_BS is 0 or there are no settings. */
export function perfGain(settings: readonly Setting[], accBestSingle: number): number | null {
  if (settings.length === 0 || accBestSingle === 0) return null;
  let best = -Infinity;
  for (const s of settings) best = Math.max(best, s.acc);
  return (best - accBestSingle) / accBestSingle;
}

/** (C_BS − min{C(s) : Acc(s) ≥ Acc_BS}) / C_BS; null ("n/a") when no setting reaches Acc_BS, or C_BS is 0. */
export function costSave(settings: readonly Setting[], bestSingle: Setting): number | null {
  let cheapest = Infinity;
  for (const s of settings) if (compareAcc(s, bestSingle) >= 0) cheapest = Math.min(cheapest, s.cost);
  if (cheapest === Infinity || bestSingle.cost === 0) return null;
  return (bestSingle.cost - cheapest) / bestSingle.cost;
}

// The cost setting's per-router figures, over a router's settings (its α sweep): PerfGain, the best
// accuracy's gain over Best Single, and CostSave, how much cheaper than Best Single the cheapest
// setting that matches Best Single's accuracy is ("n/a", null, when none does).

export interface Setting {
  acc: number;
  cost: number;
}

/** (max over settings of Acc − Acc_BS) / Acc_BS; null when Acc_BS is 0 or there are no settings. */
export function perfGain(settings: readonly Setting[], accBestSingle: number): number | null {
  if (settings.length === 0 || accBestSingle === 0) return null;
  const best = Math.max(...settings.map((s) => s.acc));
  return (best - accBestSingle) / accBestSingle;
}

/** (C_BS − min{C(s) : Acc(s) ≥ Acc_BS}) / C_BS; null ("n/a") when no setting reaches Acc_BS, or C_BS is 0. */
export function costSave(settings: readonly Setting[], bestSingle: Setting): number | null {
  const reaching = settings.filter((s) => s.acc >= bestSingle.acc);
  if (reaching.length === 0 || bestSingle.cost === 0) return null;
  const cheapest = Math.min(...reaching.map((s) => s.cost));
  return (bestSingle.cost - cheapest) / bestSingle.cost;
}

// Accuracy relative to the baselines, all on macro Acc: Gain@R against Random's expectation, Gain@B
// against Best Single, Gap@O to the Oracle. null where the reference accuracy is 0 (undefined ratio).

export interface RelativeMetrics {
  /** (Acc − Acc_Random) / Acc_Random */
  gainOverRandom: number | null;
  /** (Acc − Acc_BS) / Acc_BS */
  gainOverBestSingle: number | null;
  /** (Acc_Oracle − Acc) / Acc_Oracle */
  gapToOracle: number | null;
}

export interface ReferenceAccuracies {
  random: number;
  bestSingle: number;
  oracle: number;
}

export function relativeMetrics(acc: number, ref: ReferenceAccuracies): RelativeMetrics {
  return {
    gainOverRandom: ratio(acc - ref.random, ref.random),
    gainOverBestSingle: ratio(acc - ref.bestSingle, ref.bestSingle),
    gapToOracle: ratio(ref.oracle - acc, ref.oracle),
  };
}

function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator;
}

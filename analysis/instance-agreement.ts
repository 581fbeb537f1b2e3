// Two runs instance by instance as agreement counts (both right, only A, only B, neither) over the
// instances both have: what `br compare`'s paired figures summarize, as a 2 × 2 matrix. An instance is
// right when its mean score over the run's repeats is at least one half. Pure.

import type { AgreementCounts } from '../charts/agreement-matrix.js';

export const RIGHT_AT = 0.5;

export interface InstanceAgreement extends AgreementCounts {
  shared: number;
  /** Instances only one run has: left out of the counts. */
  onlyInA: number;
  onlyInB: number;
}

const mean = (scores: number[]) => scores.reduce((a, b) => a + b, 0) / scores.length;

export function instanceAgreement(a: ReadonlyMap<string, number[]>, b: ReadonlyMap<string, number[]>): InstanceAgreement {
  const out: InstanceAgreement = { bothRight: 0, onlyA: 0, onlyB: 0, neither: 0, shared: 0, onlyInA: 0, onlyInB: 0 };
  for (const [id, scoresA] of a) {
    const scoresB = b.get(id);
    if (!scoresB?.length || !scoresA.length) {
      out.onlyInA += 1;
      continue;
    }
    out.shared += 1;
    const rightA = mean(scoresA) >= RIGHT_AT;
    const rightB = mean(scoresB) >= RIGHT_AT;
    if (rightA && rightB) out.bothRight += 1;
    else if (rightA) out.onlyA += 1;
    else if (rightB) out.onlyB += 1;
    else out.neither += 1;
  }
  for (const [id, scores] of b) if (scores.length && !a.get(id)?.length) out.onlyInB += 1;
  return out;
}

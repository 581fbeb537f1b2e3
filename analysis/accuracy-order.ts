// Comparing accuracies and costs without float noise. A macro Acc over 0/1 scores is a ratio of
// counts, kept exactly as a fraction, so two settings with the same Acc compare equal whatever order
// their floats were summed in; anything else (partial credit, costs) compares within a relative tolerance.

/** Acc = num / den exactly: den = D · lcm(n_d), num = Σ_d S_d · lcm / n_d, over the D datasets present. */
export interface ExactAcc {
  num: bigint;
  den: bigint;
}

/** Two accuracies, or two costs, closer than this relative to the larger are equal. */
export const RELATIVE_TOLERANCE = 1e-9;

/** An exact Acc from per-dataset score sums and counts, or null when some sum is not a whole number (partial credit). */
export function exactAccOf(sums: ArrayLike<number>, counts: ArrayLike<number>): ExactAcc | null {
  let lcm = 1n;
  let present = 0n;
  for (let d = 0; d < counts.length; d++) {
    if (!counts[d]) continue;
    if (!Number.isSafeInteger(sums[d]!)) return null;
    present++;
    const n = BigInt(counts[d]!);
    lcm = (lcm / gcd(lcm, n)) * n;
  }
  if (present === 0n) return { num: 0n, den: 1n };
  let num = 0n;
  for (let d = 0; d < counts.length; d++) if (counts[d]) num += BigInt(sums[d]!) * (lcm / BigInt(counts[d]!));
  return { num, den: present * lcm };
}

export interface AccPoint {
  acc: number;
  exactAcc?: ExactAcc | null;
}

/** Sign of a.acc − b.acc: exact when both are fractions of counts, else within RELATIVE_TOLERANCE. */
export function compareAcc(a: AccPoint, b: AccPoint): number {
  if (a.exactAcc && b.exactAcc) {
    const left = a.exactAcc.num * b.exactAcc.den;
    const right = b.exactAcc.num * a.exactAcc.den;
    return left < right ? -1 : left > right ? 1 : 0;
  }
  return compareWithin(a.acc, b.acc);
}

/** Sign of a − b for costs (sums of floats in whatever order): equal within RELATIVE_TOLERANCE. */
export function compareCost(a: number, b: number): number {
  return compareWithin(a, b);
}

function compareWithin(a: number, b: number): number {
  if (Math.abs(a - b) <= RELATIVE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b))) return 0;
  return a < b ? -1 : 1;
}

function gcd(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a;
}

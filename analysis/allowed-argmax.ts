// Picking a model for a query from per-model values when some models have no record for it (missing
// records kept): those models are never chosen there.

/** The first m with the largest values[from + m], skipping models not allowed at allowed[allowedFrom + m]. */
export function argmaxAllowed(values: ArrayLike<number>, from: number, M: number, allowed: Uint8Array | null | undefined, allowedFrom: number): number {
  let best = -1;
  for (let m = 0; m < M; m++) {
    if (allowed && !allowed[allowedFrom + m]) continue;
    if (best === -1 || values[from + m]! > values[from + best]!) best = m;
  }
  return best === -1 ? 0 : best;
}

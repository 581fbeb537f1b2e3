// A reference router: a router run elsewhere whose answers were collected as one more model's records
// (an OpenRouter-style commercial service, as LLMRouterBench collects OpenRouter's). It is no
// candidate the routers choose from: its records are aligned with the pool's queries and scored as
// a row of its own, by the same code as every baseline and router.

import { numberOrZero, type ModelOutcome } from './model-outcome.js';
import type { QueryPool } from './query-pool.js';

export interface ReferenceRouter {
  /** The model name its records carry. */
  name: string;
  /** Per pool query: score and cost (USD) of its answer; `answered` is 0 where it has no record. */
  score: Float64Array;
  cost: Float64Array;
  answered: Uint8Array;
  /** Records for queries not in the pool (dropped, or of datasets the candidates lack): not scored. */
  outsidePool: number;
}

/** Aligns each named reference's records with the pool's queries on (benchmark, index); the first record per query counts. */
export function referenceRouters(pool: QueryPool, records: Iterable<ModelOutcome>, names: readonly string[]): ReferenceRouter[] {
  const Q = pool.queryDataset.length;
  const rowOf = new Map<string, number>();
  for (let q = 0; q < Q; q++) rowOf.set(`${pool.datasets[pool.queryDataset[q]!]}\u0000${pool.queryIndex[q]}`, q);
  const byName = new Map(
    names.map((name) => [name, { name, score: new Float64Array(Q), cost: new Float64Array(Q), answered: new Uint8Array(Q), outsidePool: 0 }]),
  );
  for (const record of records) {
    const reference = byName.get(record.model);
    if (!reference) continue;
    const q = rowOf.get(`${record.benchmark}\u0000${String(record.index)}`);
    if (q === undefined) {
      reference.outsidePool++;
      continue;
    }
    if (reference.answered[q]) continue;
    // As for a candidate model (buildQueryPool): a null or NaN score or cost counts as 0.
    reference.score[q] = numberOrZero(record.score);
    reference.cost[q] = numberOrZero(record.cost);
    reference.answered[q] = 1;
  }
  return [...byName.values()];
}

// The joined score and cost matrices every analysis step reads: one row per query that every model
// answered, one column per model, in typed arrays so the hot loops never touch per-record objects.

import { queryTextOf, type InstanceRecord } from './instance-record.js';

export interface QueryPool {
  /** Benchmarks (datasets) in first-seen order: the order the split walks them in. */
  datasets: string[];
  /** Models sorted by name, so every tie is broken the same way on every run. */
  models: string[];
  /** Per query: its dataset's position in `datasets`. Queries are in first-seen order. */
  queryDataset: Int32Array;
  /** Per query: the instance index it was joined on. */
  queryIndex: string[];
  /** Per query: the text routers embed. */
  queryText: string[];
  /** s(m, q) at [q * models.length + m]. */
  scores: Float64Array;
  /** c(m, q) in USD at [q * models.length + m]. */
  costs: Float64Array;
  /** Queries dropped because some model has no record for them. */
  dropped: { total: number; byDataset: Record<string, number> };
  /** Records for a (benchmark, index, model) already seen; the first one is kept. */
  duplicateRecords: number;
}

/**
 * Joins records on (benchmark, index). A query that some model of the pool has no record for is
 * dropped (and counted), so every model is compared on the same queries.
 */
export function buildQueryPool(records: Iterable<InstanceRecord>): QueryPool {
  const datasetIds = new Map<string, number>();
  const modelIds = new Map<string, number>();
  const queryIds = new Map<string, number>();
  const queryDatasetList: number[] = [];
  const queryIndexList: string[] = [];
  const queryTextList: string[] = [];
  // Records are reduced to four parallel columns in one pass; the matrices are filled afterwards,
  // once the number of models is known.
  let queryCol = new Int32Array(1024);
  let modelCol = new Int32Array(1024);
  let scoreCol = new Float64Array(1024);
  let costCol = new Float64Array(1024);
  let n = 0;

  for (const record of records) {
    let dataset = datasetIds.get(record.benchmark);
    if (dataset === undefined) {
      dataset = datasetIds.size;
      datasetIds.set(record.benchmark, dataset);
    }
    let model = modelIds.get(record.model);
    if (model === undefined) {
      model = modelIds.size;
      modelIds.set(record.model, model);
    }
    const index = String(record.index);
    const key = `${dataset}\u0000${index}`;
    let query = queryIds.get(key);
    if (query === undefined) {
      query = queryIds.size;
      queryIds.set(key, query);
      queryDatasetList.push(dataset);
      queryIndexList.push(index);
      queryTextList.push(queryTextOf(record));
    } else if (!queryTextList[query]) {
      queryTextList[query] = queryTextOf(record);
    }
    if (n === queryCol.length) {
      queryCol = grow(queryCol);
      modelCol = grow(modelCol);
      scoreCol = grow(scoreCol);
      costCol = grow(costCol);
    }
    queryCol[n] = query;
    modelCol[n] = model;
    scoreCol[n] = record.score ?? 0;
    costCol[n] = record.cost ?? 0;
    n++;
  }

  const datasets = [...datasetIds.keys()];
  const byInsertion = [...modelIds.keys()];
  const models = [...byInsertion].sort(compareNames);
  const column = new Int32Array(byInsertion.length);
  byInsertion.forEach((name, i) => (column[i] = models.indexOf(name)));

  const M = models.length;
  const Q = queryIds.size;
  const rawScores = new Float64Array(Q * M);
  const rawCosts = new Float64Array(Q * M);
  const seen = new Uint8Array(Q * M);
  let duplicateRecords = 0;
  for (let r = 0; r < n; r++) {
    const cell = queryCol[r]! * M + column[modelCol[r]!]!;
    if (seen[cell]) {
      duplicateRecords++;
      continue;
    }
    seen[cell] = 1;
    rawScores[cell] = scoreCol[r]!;
    rawCosts[cell] = costCol[r]!;
  }

  const keep: number[] = [];
  const droppedByDataset: Record<string, number> = {};
  for (let q = 0; q < Q; q++) {
    let complete = true;
    for (let m = 0; m < M && complete; m++) complete = seen[q * M + m] === 1;
    if (complete) keep.push(q);
    else {
      const name = datasets[queryDatasetList[q]!]!;
      droppedByDataset[name] = (droppedByDataset[name] ?? 0) + 1;
    }
  }

  const scores = new Float64Array(keep.length * M);
  const costs = new Float64Array(keep.length * M);
  const queryDataset = new Int32Array(keep.length);
  keep.forEach((q, row) => {
    scores.set(rawScores.subarray(q * M, q * M + M), row * M);
    costs.set(rawCosts.subarray(q * M, q * M + M), row * M);
    queryDataset[row] = queryDatasetList[q]!;
  });
  // A dataset whose every query was dropped has nothing left to analyse.
  const present = new Set(queryDataset);
  const kept = datasets.map((_, d) => d).filter((d) => present.has(d));
  const renumber = new Int32Array(datasets.length).fill(-1);
  kept.forEach((d, i) => (renumber[d] = i));
  for (let row = 0; row < queryDataset.length; row++) queryDataset[row] = renumber[queryDataset[row]!]!;

  return {
    datasets: kept.map((d) => datasets[d]!),
    models,
    queryDataset,
    queryIndex: keep.map((q) => queryIndexList[q]!),
    queryText: keep.map((q) => queryTextList[q]!),
    scores,
    costs,
    dropped: { total: Q - keep.length, byDataset: droppedByDataset },
    duplicateRecords,
  };
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function grow<T extends Int32Array | Float64Array>(array: T): T {
  const bigger = new (array.constructor as new (n: number) => T)(array.length * 2);
  bigger.set(array);
  return bigger;
}

// The joined score and cost matrices every analysis step reads: one row per query, one column per
// model, in typed arrays so the hot loops never touch per-record objects.

import { numberOrZero, queryTextOf, type ModelOutcome } from './model-outcome.js';

export interface QueryPool {
  /** Benchmarks (datasets) in first-seen order: the units of the macro mean. */
  datasets: string[];
  /** Per dataset: the group the split shuffles it in (LLMRouterBench's dataset when a dataset is one of its splits). */
  datasetGroup: string[];
  /** Models sorted by name, so every tie is broken the same way on every run. */
  models: string[];
  /** Per query: its dataset's position in `datasets`. Queries are in first-seen order. */
  queryDataset: Int32Array;
  /** Per query: the instance index it was joined on. */
  queryIndex: string[];
  /** Per query: the index as read (a number in LLMRouterBench's files), which orders a group's prompts. */
  queryOrder: Array<number | string>;
  /** Per query: the `prompt` field as read ('' when absent), the unit LLMRouterBench splits on. */
  queryPrompt: string[];
  /** Per query: the text routers embed. */
  queryText: string[];
  /** s(m, q) at [q * models.length + m]. */
  scores: Float64Array;
  /** c(m, q) in USD at [q * models.length + m]. */
  costs: Float64Array;
  /** What a query some model lacks became. */
  missingRecords: MissingRecords;
  /** 1 where model m has a record for query q, at [q * M + m]; null when every model has every query. */
  available: Uint8Array | null;
  /** Queries dropped because some model has no record for them (missing records: drop). */
  dropped: { total: number; byDataset: Record<string, number> };
  /** Datasets some model lacks records for: whole (missing) or in part, before any query was dropped. */
  gaps: DatasetGap[];
  /** Records for a (benchmark, index, model) already seen; the first one is kept. */
  duplicateRecords: number;
  /** Records whose score or cost was NaN (Python's float('nan')), counted as a missing score or cost. */
  nanScores: number;
  nanCosts: number;
}

export interface DatasetGap {
  dataset: string;
  queries: number;
  /** Models with no record at all for the dataset. */
  missingModels: string[];
  /** Models with records for some of its queries, and how many they lack. */
  partialModels: Array<{ model: string; missing: number }>;
  /** True when the dataset was dropped from the analysis (every query lacked some model). */
  dropped: boolean;
}

/**
 * What a query that some model has no record for becomes: `drop` removes it, so every model and
 * router is compared on the same queries; `keep` keeps it with the models that have it (LLMRouterBench).
 */
export type MissingRecords = 'drop' | 'keep';

/**
 * Joins records on (benchmark, index). A query that some model has no record for is dropped and
 * counted (`drop`, the default), or kept with the models that have it (`keep`). Either way the
 * datasets some model lacks are listed in `gaps`.
 */
export function buildQueryPool(records: Iterable<ModelOutcome>, missing: MissingRecords = 'drop'): QueryPool {
  const datasetIds = new Map<string, number>();
  const datasetGroupList: string[] = [];
  const modelIds = new Map<string, number>();
  const queryIds = new Map<string, number>();
  const queryDatasetList: number[] = [];
  const queryIndexList: string[] = [];
  const queryOrderList: Array<number | string> = [];
  const queryPromptList: string[] = [];
  const queryTextList: string[] = [];
  // Records are reduced to four parallel columns in one pass; the matrices are filled afterwards,
  // once the number of models is known.
  let queryCol = new Int32Array(1024);
  let modelCol = new Int32Array(1024);
  let scoreCol = new Float64Array(1024);
  let costCol = new Float64Array(1024);
  let n = 0;
  let nanScores = 0;
  let nanCosts = 0;

  for (const record of records) {
    let dataset = datasetIds.get(record.benchmark);
    if (dataset === undefined) {
      dataset = datasetIds.size;
      datasetIds.set(record.benchmark, dataset);
      datasetGroupList.push(record.group ?? record.benchmark);
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
      queryOrderList.push(record.index);
      queryPromptList.push(record.prompt ?? '');
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
    // NaN is how Python writes a missing number: it counts as missing (0), like null, and is counted.
    if (Number.isNaN(record.score)) nanScores++;
    if (Number.isNaN(record.cost)) nanCosts++;
    scoreCol[n] = numberOrZero(record.score);
    costCol[n] = numberOrZero(record.cost);
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

  // Per dataset and model: how many of the dataset's queries the model answered.
  const answered = new Int32Array(datasets.length * M);
  const datasetQueries = new Int32Array(datasets.length);
  let complete = true;
  for (let q = 0; q < Q; q++) {
    const d = queryDatasetList[q]!;
    datasetQueries[d]!++;
    for (let m = 0; m < M; m++) {
      if (seen[q * M + m]) answered[d * M + m]!++;
      else complete = false;
    }
  }

  const keep: number[] = [];
  const droppedByDataset: Record<string, number> = {};
  for (let q = 0; q < Q; q++) {
    let whole = true;
    for (let m = 0; m < M && whole; m++) whole = seen[q * M + m] === 1;
    if (whole || missing === 'keep') keep.push(q);
    else {
      const name = datasets[queryDatasetList[q]!]!;
      droppedByDataset[name] = (droppedByDataset[name] ?? 0) + 1;
    }
  }

  const scores = new Float64Array(keep.length * M);
  const costs = new Float64Array(keep.length * M);
  const available = missing === 'keep' && !complete ? new Uint8Array(keep.length * M) : null;
  const queryDataset = new Int32Array(keep.length);
  keep.forEach((q, row) => {
    scores.set(rawScores.subarray(q * M, q * M + M), row * M);
    costs.set(rawCosts.subarray(q * M, q * M + M), row * M);
    if (available) available.set(seen.subarray(q * M, q * M + M), row * M);
    queryDataset[row] = queryDatasetList[q]!;
  });
  // A dataset whose every query was dropped has nothing left to analyse.
  const present = new Set(queryDataset);
  const kept = datasets.map((_, d) => d).filter((d) => present.has(d));
  const renumber = new Int32Array(datasets.length).fill(-1);
  kept.forEach((d, i) => (renumber[d] = i));
  for (let row = 0; row < queryDataset.length; row++) queryDataset[row] = renumber[queryDataset[row]!]!;

  const gaps: DatasetGap[] = [];
  datasets.forEach((dataset, d) => {
    const missingModels: string[] = [];
    const partialModels: Array<{ model: string; missing: number }> = [];
    for (let m = 0; m < M; m++) {
      const got = answered[d * M + m]!;
      if (got === 0) missingModels.push(models[m]!);
      else if (got < datasetQueries[d]!) partialModels.push({ model: models[m]!, missing: datasetQueries[d]! - got });
    }
    if (missingModels.length || partialModels.length)
      gaps.push({ dataset, queries: datasetQueries[d]!, missingModels, partialModels, dropped: !present.has(d) });
  });

  return {
    datasets: kept.map((d) => datasets[d]!),
    datasetGroup: kept.map((d) => datasetGroupList[d]!),
    models,
    queryDataset,
    queryIndex: keep.map((q) => queryIndexList[q]!),
    queryOrder: keep.map((q) => queryOrderList[q]!),
    queryPrompt: keep.map((q) => queryPromptList[q]!),
    queryText: keep.map((q) => queryTextList[q]!),
    scores,
    costs,
    missingRecords: missing,
    available,
    dropped: { total: Q - keep.length, byDataset: droppedByDataset },
    gaps,
    duplicateRecords,
    nanScores,
    nanCosts,
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

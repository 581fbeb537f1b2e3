// The whole routing analysis, from joined records to a report: split, baselines, the cluster and kNN
// routers (each also cost-aware over an α sweep), relative metrics, and the cost setting with the
// Pareto frontier. Pure computation: the embedder is handed in.

import { computeBaselines, modelOutcomes, type OracleRule } from './baselines.js';
import { nearestClusters, rankByAccuracy, rankByBalance, routeByRanks, trainClusterRouter } from './cluster-router.js';
import { costSave, perfGain } from './cost-setting.js';
import { normalizeRows, type Embedder } from './embedding-matrix.js';
import type { ModelOutcome } from './model-outcome.js';
import { neighbourStats, routeByNeighbourBalance, routeByNeighbourScore } from './knn-router.js';
import { searchNeighbours } from './analysis-thread.js';
import { outcomeOf, outcomeOfChoice, querySet, type Outcome, type QuerySet } from './outcome.js';
import { paretoDistance, paretoFrontier, type CostAccPoint } from './pareto-frontier.js';
import { buildQueryPool, type DatasetGap, type MissingRecords, type QueryPool } from './query-pool.js';
import { relativeMetrics, type RelativeMetrics } from './relative-metrics.js';
import type { RouterChoices } from './router-choices.js';
import type { ReferenceRouter } from './reference-router.js';
import { splitQueries, type SplitUnit } from './train-test-split.js';

export interface AnalysisOptions {
  seed: number;
  trainRatio: number;
  /** Cluster router: clusters, nearest clusters per query, softmax β, k-means restarts. */
  k: number;
  topK: number;
  beta: number;
  nInit: number;
  /** kNN router: neighbours per query. */
  knnK: number;
  /** α runs over 0, 1/alphaSteps, …, 1 (100 steps: 0.01 apart). */
  alphaSteps: number;
  /** What the split keeps together: a unique prompt text (LLMRouterBench) or an instance. */
  splitUnit: SplitUnit;
  /** What the Oracle counts as solved: any score above 0 (LLMRouterBench) or the best score. */
  oracleRule: OracleRule;
}

export const DEFAULT_ANALYSIS_OPTIONS: AnalysisOptions = {
  seed: 42,
  trainRatio: 0.7,
  k: 32,
  topK: 1,
  beta: 9,
  nInit: 10,
  knnK: 10,
  alphaSteps: 100,
  splitUnit: 'instance',
  oracleRule: 'max-score',
};

/** LLMRouterBench's own definitions, the defaults for its release layout. */
export const LLMROUTERBENCH_DEFINITIONS: Pick<AnalysisOptions, 'splitUnit' | 'oracleRule'> & { missingRecords: MissingRecords } = {
  splitUnit: 'prompt',
  oracleRule: 'any-positive',
  missingRecords: 'keep',
};

export const METHOD = {
  randomExpected: 'Random (expected)',
  randomDraw: 'Random (seeded draw)',
  bestSingle: 'Best Single',
  datasetOracle: 'Dataset Oracle',
  oracle: 'Oracle',
  clusterRouter: 'Avengers (cluster router)',
  knnRouter: 'kNN router',
  clusterCostAware: 'Avengers-Pro (cluster router, cost-aware)',
  knnCostAware: 'kNN router (cost-aware)',
} as const;

export interface MethodResult extends RelativeMetrics {
  name: string;
  /** A reference is a router run elsewhere whose answers were read as records (OpenRouter): not a candidate. */
  kind: 'baseline' | 'router' | 'reference';
  /** A reference's test queries without a record of it: its Acc is over the rest. */
  unanswered?: number;
  /** The model a single-model baseline chose (Best Single). */
  model?: string;
  /**
   * How long a router trained, in seconds: a container's own figure (its result.json), or the in-process
   * router's fit as measured here; null where a container did not say. Absent for baselines and references.
   */
  trainSeconds?: number | null;
  acc: number;
  cost: number;
  datasetAcc: Record<string, number | null>;
}

export interface ModelResult {
  model: string;
  trainAcc: number;
  acc: number;
  cost: number;
  datasetAcc: Record<string, number | null>;
  onFrontier: boolean;
}

export interface SweepSetting {
  alpha: number;
  acc: number;
  cost: number;
  onFrontier: boolean;
}

export interface CostAwareResult {
  name: string;
  /** What a setting is: α (the built-in cost-aware routers), a router container's own number, or 'reference' (one point). */
  settingName?: string;
  perfGain: number | null;
  /** null is "n/a": no setting reaches Best Single's accuracy. */
  costSave: number | null;
  paretoDist: number | null;
  /** How long the router trained (as MethodResult's); null for a reference, or a container that did not say. */
  trainSeconds: number | null;
  settings: SweepSetting[];
}

export interface FrontierPoint {
  label: string;
  cost: number;
  acc: number;
}

export interface RoutingReport {
  options: AnalysisOptions;
  embedder: string;
  pool: {
    models: string[];
    queries: number;
    trainQueries: number;
    testQueries: number;
    datasets: Array<{ name: string; queries: number; train: number; test: number; dropped: number }>;
    /** Queries dropped because some model had no record for them, in total and per dataset. */
    droppedQueries: number;
    droppedByDataset: Record<string, number>;
    /** What a query some model lacks became (dropped, or kept with the models that have it). */
    missingRecords: MissingRecords;
    /** Datasets some model lacks records for, wholly or in part, and whether each was dropped. */
    gaps: DatasetGap[];
    duplicateRecords: number;
    /** Records whose score or cost was NaN, counted as missing (0). */
    nanScores: number;
    nanCosts: number;
  };
  models: ModelResult[];
  /** Baselines, then routers, all on test. */
  methods: MethodResult[];
  costAware: CostAwareResult[];
  /** Non-dominated (cost, Acc) points over single models and every router setting, by cost. */
  frontier: FrontierPoint[];
  /** Router containers run for this report (`--routers`): the job each ran as, and why one has no row. */
  routerJobs?: RouterJobSummary[];
}

export interface RouterJobSummary {
  router: string;
  runId: string;
  jobId: string;
  status: string;
  trainSeconds: number | null;
  /** The router's calls through the gateway (embeddings): requests and prompt tokens, metered as any task's. */
  gatewayRequests?: number;
  gatewayPromptTokens?: number;
  /** Why the router has no row: its job failed, or its choices.jsonl broke the contract. */
  problem?: string;
}

export class UnanalysableInputError extends Error {
  override name = 'UnanalysableInputError';
}

/** Called after each phase with its wall time, for perf reporting. */
export type PhaseListener = (phase: string, milliseconds: number) => void;

export async function analyzeRecords(
  records: Iterable<ModelOutcome>,
  options: Partial<AnalysisOptions>,
  embedder: Embedder,
  onPhase?: PhaseListener,
  missingRecords: MissingRecords = 'drop',
): Promise<RoutingReport> {
  return analyzeRouting(buildQueryPool(records, missingRecords), options, embedder, onPhase);
}

export async function analyzeRouting(
  pool: QueryPool,
  partial: Partial<AnalysisOptions>,
  embedder: Embedder,
  onPhase: PhaseListener = () => {},
  routers: readonly RouterChoices[] = [],
  references: readonly ReferenceRouter[] = [],
): Promise<RoutingReport> {
  const options = { ...DEFAULT_ANALYSIS_OPTIONS, ...partial };
  let started = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    onPhase(name, now - started);
    started = now;
  };

  const M = pool.models.length;
  if (M === 0 || pool.queryDataset.length === 0) {
    throw new UnanalysableInputError(pool.dropped.total ? `no query has a record from every model (${pool.dropped.total} dropped)` : 'no records to analyse');
  }
  const split = splitQueries(pool, options);
  if (split.train.length === 0 || split.test.length === 0) {
    throw new UnanalysableInputError(
      `the split leaves ${split.train.length} training and ${split.test.length} test queries: need at least one of each (train ratio ${options.trainRatio})`,
    );
  }
  const train = querySet(pool, split.train);
  const test = querySet(pool, split.test);
  phase('split');

  const perModel = modelOutcomes(pool, train, test);
  const baselines = computeBaselines(pool, test, perModel, options.seed, options.oracleRule);
  const reference = { random: baselines.randomExpected.acc, bestSingle: baselines.bestSingle.acc, oracle: baselines.oracle.acc };
  phase('baselines');

  const embeddings = normalizeRows(await embedder.embed(pool.queryText, split.train));
  if (embeddings.rows !== pool.queryText.length)
    throw new Error(`embedder ${embedder.name} returned ${embeddings.rows} rows for ${pool.queryText.length} queries`);
  phase('embed');

  // The kNN router's neighbour search starts on a thread of its own and runs beside k-means below.
  const neighbourSearch = searchNeighbours(embeddings, split.train, split.test, options.knnK);
  // Awaited after k-means; should k-means throw first, the search's own failure is not left unhandled.
  neighbourSearch.catch(() => undefined);

  // Each in-process router's training time is measured around its fit on the training queries alone (the
  // embeddings, shared with every router and read from a cache by the containers, are not counted).
  const kmeans = timed(() => trainClusterRouter(pool, embeddings, split.train, options));
  const clusterModel = kmeans.value;
  const accuracyRanks = timed(() => rankByAccuracy(clusterModel, M));
  const affinity = nearestClusters(clusterModel, embeddings, split.test, options.topK, options.beta);
  phase('cluster router: k-means');
  // Where records are missing, a router only chooses among the models that have the query.
  const allowed = pool.available ? gatherAvailable(pool.available, split.test, M) : null;
  const clusterOutcome = outcomeOfChoice(pool, test, routeByRanks(affinity, accuracyRanks.value, M, allowed));
  const alphas = Array.from({ length: options.alphaSteps + 1 }, (_, i) => i / options.alphaSteps);
  const balanceRanks = timed(() => alphas.map((alpha) => rankByBalance(clusterModel, M, alpha)));
  const clusterSweep = balanceRanks.value.map((ranks) => outcomeOfChoice(pool, test, routeByRanks(affinity, ranks, M, allowed)));
  phase('cluster router: α sweep');

  // kNN has no fit step: the training queries are read when test queries arrive, so its training time is
  // that search of them (neighbours and their per-model means, the search timed where it ran); routing on
  // the means is not counted. The phase is what is left of the search once k-means is done.
  const found = await neighbourSearch;
  const knnFit = timed(() => neighbourStats(pool, split.train, found));
  const stats = knnFit.value;
  phase('kNN router: neighbours');
  const trainSeconds = {
    cluster: kmeans.seconds + accuracyRanks.seconds,
    clusterCostAware: kmeans.seconds + balanceRanks.seconds,
    knn: found.seconds + knnFit.seconds,
  };
  const knnOutcome = outcomeOfChoice(pool, test, routeByNeighbourScore(stats, allowed));
  const knnSweep = alphas.map((alpha) => outcomeOfChoice(pool, test, routeByNeighbourBalance(stats, alpha, allowed)));
  phase('kNN router: α sweep');

  const datasetAccOf = (o: Outcome) => Object.fromEntries(pool.datasets.map((name, d) => [name, o.datasetAcc[d] ?? null]));
  const method = (name: string, kind: MethodResult['kind'], o: Outcome, model?: number): MethodResult => ({
    name,
    kind,
    ...(model === undefined ? {} : { model: pool.models[model]! }),
    acc: o.acc,
    cost: o.cost,
    datasetAcc: datasetAccOf(o),
    ...relativeMetrics(o.acc, reference),
  });
  const methods = [
    method(METHOD.randomExpected, 'baseline', baselines.randomExpected),
    method(METHOD.randomDraw, 'baseline', baselines.randomDraw),
    method(METHOD.bestSingle, 'baseline', baselines.bestSingle, baselines.bestSingle.model),
    method(METHOD.datasetOracle, 'baseline', baselines.datasetOracle),
    method(METHOD.oracle, 'baseline', baselines.oracle),
    { ...method(METHOD.clusterRouter, 'router', clusterOutcome), trainSeconds: trainSeconds.cluster },
    { ...method(METHOD.knnRouter, 'router', knnOutcome), trainSeconds: trainSeconds.knn },
    // Router containers' choices, scored by the same code as everything above.
    ...routers.map((r) => ({ ...method(r.name, 'router', outcomeOfChoice(pool, test, r.chosen)), trainSeconds: r.trainSeconds })),
  ];
  // Reference routers (OpenRouter-style records): one row each, and one point in the cost setting.
  const referenceOutcomes = references.map((r) => ({ name: r.name, ...referenceOutcome(r, test) }));
  for (const r of referenceOutcomes) methods.push({ ...method(r.name, 'reference', r.outcome), unanswered: r.unanswered });

  // The cost setting: one point per single model and per router setting.
  const sweeps = [
    { name: METHOD.clusterCostAware, outcomes: clusterSweep, trainSeconds: trainSeconds.clusterCostAware },
    { name: METHOD.knnCostAware, outcomes: knnSweep, trainSeconds: trainSeconds.knn },
  ];
  const routerSweeps = [
    ...routers
      .filter((r) => r.settings.length)
      .map((r) => ({
        name: `${r.name} (cost settings)`,
        settingName: 'setting',
        values: r.settings.map((s) => s.setting),
        outcomes: r.settings.map((s) => outcomeOfChoice(pool, test, s.chosen)),
        trainSeconds: r.trainSeconds,
      })),
    ...referenceOutcomes.map((r) => ({ name: r.name, settingName: 'reference', values: [0], outcomes: [r.outcome], trainSeconds: null })),
  ];
  const points: Array<CostAccPoint & { label: string }> = [
    ...pool.models.map((model, m) => ({ label: model, cost: perModel.test[m]!.cost, acc: perModel.test[m]!.acc, exactAcc: perModel.test[m]!.exactAcc })),
    ...sweeps.flatMap(({ name, outcomes }) =>
      outcomes.map((o, i) => ({ label: `${name} α=${formatAlpha(alphas[i]!)}`, cost: o.cost, acc: o.acc, exactAcc: o.exactAcc })),
    ),
    ...routerSweeps.flatMap(({ name, values, outcomes, settingName }) =>
      outcomes.map((o, i) => ({ label: settingName === 'reference' ? name : `${name} ${values[i]}`, cost: o.cost, acc: o.acc, exactAcc: o.exactAcc })),
    ),
  ];
  const frontierIndex = paretoFrontier(points);
  const onFrontier = new Set(frontierIndex);
  const bs = { acc: baselines.bestSingle.acc, cost: baselines.bestSingle.cost, exactAcc: baselines.bestSingle.exactAcc };
  let offset = M;
  const costAware = [
    ...sweeps.map(({ name, outcomes, trainSeconds }) => ({ name, values: alphas, outcomes, settingName: undefined, trainSeconds })),
    ...routerSweeps,
  ].map(({ name, values, outcomes, settingName, trainSeconds }): CostAwareResult => {
    const settings = outcomes.map((o, i) => ({ alpha: values[i]!, acc: o.acc, cost: o.cost, onFrontier: onFrontier.has(offset + i) }));
    const exact = outcomes.map((o, i) => ({ ...settings[i]!, exactAcc: o.exactAcc }));
    offset += outcomes.length;
    return {
      name,
      ...(settingName ? { settingName } : {}),
      perfGain: perfGain(settings, bs.acc),
      costSave: costSave(exact, bs),
      paretoDist: paretoDistance(exact, points),
      trainSeconds,
      settings,
    };
  });
  phase('cost setting');

  return {
    options,
    embedder: embedder.name,
    pool: {
      models: pool.models,
      queries: pool.queryDataset.length,
      trainQueries: split.train.length,
      testQueries: split.test.length,
      datasets: pool.datasets.map((name, d) => ({
        name,
        queries: train.datasetCount[d]! + test.datasetCount[d]!,
        train: train.datasetCount[d]!,
        test: test.datasetCount[d]!,
        dropped: pool.dropped.byDataset[name] ?? 0,
      })),
      droppedQueries: pool.dropped.total,
      droppedByDataset: pool.dropped.byDataset,
      missingRecords: pool.missingRecords,
      gaps: pool.gaps,
      duplicateRecords: pool.duplicateRecords,
      nanScores: pool.nanScores,
      nanCosts: pool.nanCosts,
    },
    models: pool.models.map((model, m) => ({
      model,
      trainAcc: perModel.train[m]!.acc,
      acc: perModel.test[m]!.acc,
      cost: perModel.test[m]!.cost,
      datasetAcc: datasetAccOf(perModel.test[m]!),
      onFrontier: onFrontier.has(m),
    })),
    methods,
    costAware,
    frontier: frontierIndex.map((i) => ({ label: points[i]!.label, cost: points[i]!.cost, acc: points[i]!.acc })),
  };
}

/** A reference router's outcome on the test set: the queries it has no record for count nowhere. */
function referenceOutcome(reference: ReferenceRouter, test: QuerySet): { outcome: Outcome; unanswered: number } {
  const n = test.rows.length;
  const score = new Float64Array(n);
  const cost = new Float64Array(n);
  const answered = new Uint8Array(n);
  let unanswered = 0;
  for (let i = 0; i < n; i++) {
    const q = test.rows[i]!;
    score[i] = reference.score[q]!;
    cost[i] = reference.cost[q]!;
    answered[i] = reference.answered[q]!;
    if (!answered[i]) unanswered++;
  }
  return { outcome: outcomeOf(test, score, cost, unanswered ? answered : undefined), unanswered };
}

/** The availability rows of the given queries, at [i * M + m]. */
function gatherAvailable(available: Uint8Array, rows: Int32Array, M: number): Uint8Array {
  const out = new Uint8Array(rows.length * M);
  for (let i = 0; i < rows.length; i++) out.set(available.subarray(rows[i]! * M, rows[i]! * M + M), i * M);
  return out;
}

/**
 * The report without its training times, which are wall-clock and differ from run to run: every figure a
 * rerun on the same input and options must reproduce exactly.
 */
export function reportFigures(report: RoutingReport): RoutingReport {
  const strip = <T extends { trainSeconds?: number | null }>(row: T): T => ({ ...row, trainSeconds: undefined });
  return {
    ...report,
    methods: report.methods.map(strip),
    costAware: report.costAware.map((r) => ({ ...r, trainSeconds: null })),
    ...(report.routerJobs ? { routerJobs: report.routerJobs.map((j) => ({ ...j, trainSeconds: null })) } : {}),
  };
}

/** What fn returns, and how long it took in seconds. */
function timed<T>(fn: () => T): { value: T; seconds: number } {
  const started = performance.now();
  const value = fn();
  return { value, seconds: (performance.now() - started) / 1000 };
}

export function formatAlpha(alpha: number): string {
  return alpha.toFixed(2);
}

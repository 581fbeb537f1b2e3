// `br analyze`: the routing analysis of several models' per-instance records (an LLMRouterBench
// release directory and/or JSON Lines files): baselines, routers, the cost setting and the Pareto
// frontier, in every output format (tables, JSON, CSV, Markdown, XLSX) and as an SVG + PNG plot.

import os from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { renderAccuracyCostSvg } from '../../analysis/accuracy-cost-plot.js';
import { DEFAULT_EMBEDDING_DIM, hashedTfidfEmbedder } from '../../analysis/hashed-tfidf-embedder.js';
import type { Embedder } from '../../analysis/embedding-matrix.js';
import type { ModelOutcome } from '../../analysis/model-outcome.js';
import { loadLlmRouterBench } from '../../analysis/load-llmrouterbench.js';
import { loadRecordsJsonl } from '../../analysis/load-records-jsonl.js';
import { openAiEmbedder } from '../../analysis/openai-embeddings-client.js';
import { cachedEmbedder, embeddingCacheFile } from '../../analysis/embedding-cache.js';
import { buildQueryPool } from '../../analysis/query-pool.js';
import { referenceRouters } from '../../analysis/reference-router.js';
import { renderReportText } from '../../analysis/report-text.js';
import { analyzeRouting, DEFAULT_ANALYSIS_OPTIONS, UnanalysableInputError, type AnalysisOptions } from '../../analysis/routing-analysis.js';
import { formatProblem, InputError } from '../../contract/problems.js';
import { settingsFrom } from '../../config/settings.js';
import { addOutputFlags, emitOutput, type OutputFlags } from '../output-flags.js';
import { routingReportTables } from '../../analysis/routing-report-tables.js';
import { writeOutputFile } from '../table-export.js';
import type { OracleRule } from '../../analysis/baselines.js';
import type { MissingRecords, QueryPool } from '../../analysis/query-pool.js';
import { LLMROUTERBENCH_DEFINITIONS } from '../../analysis/routing-analysis.js';
import { splitQueries, type SplitUnit } from '../../analysis/train-test-split.js';
import { parseRouterChoices, RouterChoicesError, type RouterChoices } from '../../analysis/router-choices.js';
import { ROUTER_EMBEDDINGS_FILE, writeRouterInput } from '../../analysis/router-input.js';
import type { RouterJobSummary } from '../../analysis/routing-analysis.js';
import { loadRouter, resolveRouterDirs } from '../../contract/load-router.js';
import type { RouterDefinition } from '../../contract/router-schema.js';
import type { RouterJobOutcome, RouterJobsOptions } from '../../client/router-jobs.js';
import { copyFileSync, mkdirSync } from 'node:fs';
import { saveAnalysis } from '../../analysis/saved-analyses.js';
import path from 'node:path';

export interface AnalyzeCommandDeps {
  /** Where the report goes (tables or JSON). */
  stdout(text: string): void | Promise<void>;
  /** Progress and notes, one line each. */
  say(line: string): void;
  /** Environment variables, for the embeddings API key. */
  env?: NodeJS.ProcessEnv;
  /**
   * Records of BenchRouter runs, from their artifacts: the given run ids, or 'latest' for the latest
   * finished run per model and benchmark. Absent where no Temporal cluster is configured.
   */
  runRecords?: (runs: string[] | 'latest') => Promise<{ records: ModelOutcome[]; notes: string[] }>;
  /**
   * Runs router containers as the jobs of one run, on the exported input in `inputDir`, staged under
   * `workDir`. Absent where no Temporal cluster is configured.
   */
  runRouters?: (
    workDir: string,
    inputDir: string,
    routers: RouterDefinition[],
    options: RouterJobsOptions,
    onSubmitted: (runId: string) => void,
  ) => Promise<{ runId: string; outcomes: RouterJobOutcome[] }>;
}

/** The analysis options come from AnalysisOptions; the definitions are optional, their default depends on the input. */
interface AnalyzeFlags
  extends
    OutputFlags,
    Pick<AnalysisOptions, 'seed' | 'trainRatio' | 'k' | 'topK' | 'beta' | 'nInit' | 'knnK'>,
    Partial<Pick<AnalysisOptions, 'splitUnit' | 'oracleRule'>> {
  llmrouterbenchDir?: string;
  records?: string[];
  runs?: string[];
  latestRuns?: boolean;
  missingRecords?: MissingRecords;
  embeddingDim: number;
  embeddingsEndpoint?: string;
  embeddingsModel: string;
  embeddingsApiKeyEnv?: string;
  plot?: string;
  routers?: string[];
  referenceRouter?: string[];
  /** false with --no-save. */
  save: boolean;
}

/** Endpoint embeddings (per text hash) and what router containers read are kept under BENCHROUTER_HOME. */
const benchrouterHome = (env: Record<string, string | undefined>) => settingsFrom(env, os.homedir()).home;

const defaultDeps: AnalyzeCommandDeps = {
  stdout: (text) => void process.stdout.write(text),
  say: (line) => process.stderr.write(`${line}\n`),
};

export function registerAnalyzeCommand(program: Command, deps: AnalyzeCommandDeps = defaultDeps): Command {
  const d = DEFAULT_ANALYSIS_OPTIONS;
  const command = program
    .command('analyze')
    .description('routing analysis of several models on the same benchmarks: baselines, routers, cost setting, Pareto frontier')
    .option('--llmrouterbench-dir <dir>', "a directory in LLMRouterBench's layout: results/bench/<dataset>/<split>/<model>/*.json")
    .option('--records <file.jsonl...>', 'JSON Lines of records {benchmark, model, index, prompt, score, cost, ...}')
    .option('--runs <run...>', "BenchRouter runs whose jobs' records.jsonl to analyze (one model per run)")
    .option('--latest-runs', 'the latest finished BenchRouter run per model and benchmark')
    .option('--seed <n>', 'seed of the train/test split, the random baseline and k-means', wholeNumber, d.seed)
    .option('--train-ratio <r>', "share of each dataset's queries used for training", ratio, d.trainRatio)
    .option('--k <n>', 'cluster router: number of k-means clusters', positiveInt, d.k)
    .option('--top-k <n>', 'cluster router: nearest clusters a query is routed by', positiveInt, d.topK)
    .option('--beta <x>', 'cluster router: softmax sharpness over cluster distances', nonNegative, d.beta)
    .option('--n-init <n>', 'cluster router: k-means restarts (best inertia wins)', positiveInt, d.nInit)
    .option('--knn-k <n>', 'kNN router: neighbours per query', positiveInt, d.knnK)
    .option(
      '--split-unit <unit>',
      'what the train/test split keeps together: prompt (unique prompt text, LLMRouterBench) or instance (benchmark, index); default prompt for --llmrouterbench-dir alone, else instance',
      oneOf<SplitUnit>('prompt', 'instance'),
    )
    .option(
      '--oracle-rule <rule>',
      'what the Oracle counts as solved: any-positive (any score > 0, LLMRouterBench) or max-score (the best score); default any-positive for --llmrouterbench-dir alone, else max-score',
      oneOf<OracleRule>('any-positive', 'max-score'),
    )
    .option(
      '--missing-records <what>',
      'a query some model has no record for: keep (with the models that have it, LLMRouterBench) or drop; default keep for --llmrouterbench-dir alone, else drop',
      oneOf<MissingRecords>('keep', 'drop'),
    )
    .option('--embedding-dim <n>', 'dimensions of the built-in offline embedder (even)', evenInt, DEFAULT_EMBEDDING_DIM)
    .option('--embeddings-endpoint <url>', 'embed queries with this OpenAI-compatible base URL (…/v1) instead of the offline embedder')
    .option('--embeddings-model <name>', 'model name sent to --embeddings-endpoint', 'text-embedding-3-small')
    .option('--embeddings-api-key-env <VAR>', 'environment variable holding the embeddings API key')
    .option('--plot <file.svg>', 'also write the accuracy–cost plot as SVG, and as PNG next to it')
    .option(
      '--reference-router <model...>',
      "models whose records are a router's own answers (an OpenRouter-style service, collected as one more model): scored as a reference row, not a candidate the routers choose from",
    )
    .option('--no-save', "don't keep the report under BENCHROUTER_HOME/analyses (where the dashboard lists it)")
    .option(
      '--routers <router...>',
      'also run these router containers as jobs and score their choices: router directories, built-in router names (routers/), or all (every directory under routers/); the baselines and the in-process Avengers, Avengers-Pro and kNN routers always run',
    );
  return addOutputFlags(command, 'routing-analysis')
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  $ br analyze --llmrouterbench-dir ./LLMRouterBench --plot out/routing.svg --format xlsx --out out/routing.xlsx',
        '  $ br analyze --records runs/a.jsonl runs/b.jsonl --seed 7 --json',
        '  $ br analyze --records runs/a.jsonl runs/b.jsonl --routers all --embeddings-endpoint http://host:8000/v1 --embeddings-model bge-m3',
        '  $ br analyze --llmrouterbench-dir ./LLMRouterBench --reference-router openrouter',
        '',
        'Records are joined on (benchmark, index). An LLMRouterBench directory on its own is analysed with',
        "LLMRouterBench's definitions (--split-unit prompt --oracle-rule any-positive --missing-records keep);",
        "other inputs with BenchRouter's (--split-unit instance --oracle-rule max-score --missing-records drop).",
        'Exit codes: 0 done, 2 bad input (the message names the file, field and problem), 1 other errors.',
      ].join('\n'),
    )
    .action(async (flags: AnalyzeFlags) => runAnalyze(flags, deps));
}

async function runAnalyze(flags: AnalyzeFlags, deps: AnalyzeCommandDeps): Promise<void> {
  if (!flags.llmrouterbenchDir && !flags.records?.length && !flags.runs?.length && !flags.latestRuns) {
    throw new InputError([
      { file: 'br analyze', field: '', message: 'no input: give --llmrouterbench-dir DIR, --records FILE.jsonl..., --runs RUN... or --latest-runs' },
    ]);
  }
  if (flags.plot && !flags.plot.toLowerCase().endsWith('.svg')) {
    throw new InputError([{ file: '--plot', field: '', message: `expected a file name ending in .svg (the PNG is written next to it), got "${flags.plot}"` }]);
  }
  if (flags.embeddingsEndpoint && !/^https?:\/\//.test(flags.embeddingsEndpoint)) {
    throw new InputError([
      { file: '--embeddings-endpoint', field: '', message: `expected an http(s) base URL ending in /v1, got "${flags.embeddingsEndpoint}"` },
    ]);
  }
  const env = deps.env ?? process.env;
  const routers = flags.routers?.length ? resolveRouterDirs(flags.routers).map(loadRouter) : [];
  if (routers.length && !deps.runRouters)
    throw new InputError([{ file: '--routers', field: '', message: 'router containers run as jobs: this needs a Temporal cluster (br runs against one)' }]);
  const needEmbeddings = routers.filter((r) => r.needs.embeddings).map((r) => r.name);
  if (needEmbeddings.length && !flags.embeddingsEndpoint)
    throw new InputError([
      {
        file: '--routers',
        field: '',
        message: `${needEmbeddings.join(', ')} need${needEmbeddings.length === 1 ? 's' : ''} embeddings: give --embeddings-endpoint (and --embeddings-model)`,
      },
    ]);
  if (flags.embeddingsApiKeyEnv && !env[flags.embeddingsApiKeyEnv]) {
    throw new InputError([{ file: '--embeddings-api-key-env', field: '', message: `environment variable ${flags.embeddingsApiKeyEnv} is not set` }]);
  }

  // Each source is kept as its own array and walked in turn: copying 400,000 records into one array
  // with push(...records) overflows the call stack.
  const sources: ModelOutcome[][] = [];
  if (flags.llmrouterbenchDir) {
    const load = await loadLlmRouterBench(flags.llmrouterbenchDir);
    deps.say(
      `${flags.llmrouterbenchDir}: ${load.records.length} records from ${load.files.length} result files (skipped ${load.skippedDemo.length} demo, ${load.superseded.length} superseded by newer files)${load.threads === 2 ? ', read on 2 threads' : ''}`,
    );
    sources.push(load.records);
  }
  if (flags.records?.length) {
    const loaded = loadRecordsJsonl(flags.records);
    deps.say(`${flags.records.join(', ')}: ${loaded.length} records`);
    sources.push(loaded);
  }

  if (flags.runs?.length || flags.latestRuns) {
    if (!deps.runRecords) throw new InputError([{ file: '--runs', field: '', message: 'reading runs needs a Temporal cluster (br runs against one)' }]);
    const fromRuns = await deps.runRecords(flags.latestRuns ? 'latest' : flags.runs!);
    for (const note of fromRuns.notes) deps.say(note);
    sources.push(fromRuns.records);
  }

  // LLMRouterBench's own definitions for its release layout, BenchRouter's for everything else.
  const upstream = Boolean(flags.llmrouterbenchDir) && !flags.records?.length && !flags.runs?.length && !flags.latestRuns;
  const definitions = upstream
    ? LLMROUTERBENCH_DEFINITIONS
    : { splitUnit: DEFAULT_ANALYSIS_OPTIONS.splitUnit, oracleRule: DEFAULT_ANALYSIS_OPTIONS.oracleRule, missingRecords: 'drop' as const };
  const splitUnit = flags.splitUnit ?? definitions.splitUnit;
  const oracleRule = flags.oracleRule ?? definitions.oracleRule;
  const missingRecords = flags.missingRecords ?? definitions.missingRecords;
  deps.say(
    `definitions: --split-unit ${splitUnit} --oracle-rule ${oracleRule} --missing-records ${missingRecords}${upstream ? " (LLMRouterBench's for its layout)" : ''}`,
  );

  // A reference router's records are set aside: it is scored against the pool, never chosen from it.
  const referenceNames = new Set(flags.referenceRouter ?? []);
  const referenceRecords: ModelOutcome[] = [];
  const seenModels = new Set<string>();
  const pool = buildQueryPool(
    (function* () {
      for (const source of sources)
        for (const record of source) {
          seenModels.add(record.model);
          if (referenceNames.has(record.model)) referenceRecords.push(record);
          else yield record;
        }
    })(),
    missingRecords,
  );
  const unknownReferences = [...referenceNames].filter((name) => !seenModels.has(name));
  if (unknownReferences.length)
    throw new InputError([
      {
        file: '--reference-router',
        field: '',
        message: `no records of ${unknownReferences.join(', ')}: expected the name of a model in the records (${[...seenModels].sort().join(', ')})`,
      },
    ]);
  const references = referenceRouters(pool, referenceRecords, [...referenceNames]);
  for (const r of references) {
    const answered = r.answered.reduce((n, a) => n + a, 0);
    deps.say(
      `reference router ${r.name}: records for ${answered} of ${pool.queryDataset.length} queries${r.outsidePool ? `, ${r.outsidePool} records for queries outside the pool (not scored)` : ''}; not a candidate`,
    );
  }
  for (const line of poolNotes(pool)) deps.say(line);
  const pair = routers.filter((r) => r.needs.pair).map((r) => r.name);
  if (pair.length && pool.models.length !== 2)
    throw new InputError([
      {
        file: '--routers',
        field: '',
        message: `${pair.join(', ')} route between a pair of models: the records hold ${pool.models.length} (${pool.models.join(', ')})`,
      },
    ]);

  const cacheFile = flags.embeddingsEndpoint ? embeddingCacheFile(path.join(benchrouterHome(env), 'embeddings'), flags.embeddingsModel) : undefined;
  const embedder: Embedder = flags.embeddingsEndpoint
    ? cachedEmbedder(
        openAiEmbedder({
          endpoint: flags.embeddingsEndpoint,
          model: flags.embeddingsModel,
          apiKey: flags.embeddingsApiKeyEnv ? env[flags.embeddingsApiKeyEnv] : undefined,
        }),
        cacheFile!,
        ({ cached, embedded }) =>
          deps.say(`embeddings: ${flags.embeddingsModel}: ${cached} from ${cacheFile}, ${embedded} embedded by ${flags.embeddingsEndpoint}`),
      )
    : hashedTfidfEmbedder({ dim: flags.embeddingDim });
  if (!flags.embeddingsEndpoint) deps.say(`embeddings: ${embedder.name}, offline (no --embeddings-endpoint)`);
  const analysisOptions = {
    seed: flags.seed,
    trainRatio: flags.trainRatio,
    k: flags.k,
    topK: flags.topK,
    beta: flags.beta,
    nInit: flags.nInit,
    knnK: flags.knnK,
    splitUnit,
    oracleRule,
  };
  const cached = cacheFile && routers.some((r) => r.needs.embeddings) ? { embedder, cacheFile } : undefined;
  const routed = routers.length ? await runRouterContainers(deps, flags, env, pool, analysisOptions, routers, cached) : { choices: [], jobs: [] };
  let report;
  try {
    report = await analyzeRouting(pool, analysisOptions, embedder, undefined, routed.choices, references);
    if (routers.length) report.routerJobs = routed.jobs;
  } catch (error) {
    if (error instanceof UnanalysableInputError)
      throw new InputError([{ file: [flags.llmrouterbenchDir, ...(flags.records ?? [])].filter(Boolean).join(', '), field: '', message: error.message }]);
    throw error;
  }

  if (flags.plot) {
    const svg = renderAccuracyCostSvg(report);
    // Loaded here, not with the command: resvg's native binding costs every other `br` command ~12 ms at start.
    const { renderPng } = await import('../../analysis/plot-png.js');
    for (const [file, content] of [
      [flags.plot, svg],
      [flags.plot.replace(/\.svg$/i, '.png'), renderPng(svg)],
    ] as const) {
      writeOutputFile(file, content);
      deps.say(`wrote ${file}`);
    }
  }
  if (flags.save) {
    // Kept so that the dashboard shows this report as printed, router containers and all, without running them again.
    const saved = saveAnalysis(benchrouterHome(env), report, analysisInputs(flags));
    deps.say(`saved analysis ${saved.id} (${saved.file}): the dashboard shows it at /ui/analysis?id=${saved.id}`);
  }
  await emitOutput({ tables: routingReportTables(report), json: report, text: `${renderReportText(report)}\n` }, flags, 'routing-analysis', deps);
}

/** What an analysis read and ran, as its flags said it: the saved analysis's description. */
function analysisInputs(flags: AnalyzeFlags): string[] {
  return [
    ...(flags.llmrouterbenchDir ? [`--llmrouterbench-dir ${flags.llmrouterbenchDir}`] : []),
    ...(flags.records?.length ? [`--records ${flags.records.join(' ')}`] : []),
    ...(flags.runs?.length ? [`--runs ${flags.runs.join(' ')}`] : []),
    ...(flags.latestRuns ? ['--latest-runs'] : []),
    ...(flags.routers?.length ? [`--routers ${flags.routers.join(' ')}`] : []),
    ...(flags.referenceRouter?.length ? [`--reference-router ${flags.referenceRouter.join(' ')}`] : []),
    ...(flags.embeddingsEndpoint ? [`--embeddings-model ${flags.embeddingsModel}`] : []),
  ];
}

/**
 * Exports the training records and test queries of the split the analysis will use, runs the router
 * containers as the jobs of one run, and reads their choices back. A router whose job failed or whose
 * choices break the contract gets no row; what happened is said and kept in the report.
 */
async function runRouterContainers(
  deps: AnalyzeCommandDeps,
  flags: AnalyzeFlags,
  env: NodeJS.ProcessEnv,
  pool: QueryPool,
  options: Pick<AnalysisOptions, 'seed' | 'trainRatio' | 'splitUnit'>,
  routers: RouterDefinition[],
  cached?: { embedder: Embedder; cacheFile: string },
): Promise<{ choices: RouterChoices[]; jobs: RouterJobSummary[] }> {
  if (pool.models.length === 0 || pool.queryDataset.length === 0) return { choices: [], jobs: [] };
  const split = splitQueries(pool, options);
  const workDir = path.join(benchrouterHome(env), 'routing', new Date().toISOString().replace(/[:.]/g, '-'));
  const inputDir = path.join(workDir, 'input');
  mkdirSync(inputDir, { recursive: true });
  writeRouterInput(inputDir, pool, split, {
    seed: options.seed,
    trainRatio: options.trainRatio,
    splitUnit: options.splitUnit,
    embeddingsModel: flags.embeddingsEndpoint ? flags.embeddingsModel : null,
  });
  if (cached) {
    // The routers read the queries' vectors from the analysis's own cache (per text hash), so a rerun makes
    // no embedding call; the in-process routers need these same vectors anyway.
    await cached.embedder.embed(pool.queryText, new Int32Array(0));
    copyFileSync(cached.cacheFile, path.join(inputDir, ROUTER_EMBEDDINGS_FILE));
  }
  deps.say(`routers: ${routers.map((r) => r.name).join(', ')} on ${split.train.length} training and ${split.test.length} test queries (input in ${inputDir})`);
  const { runId, outcomes } = await deps.runRouters!(
    workDir,
    inputDir,
    routers,
    {
      // A router that needs no embeddings still gets an endpoint: the run contract asks for one.
      endpoint: flags.embeddingsEndpoint ?? 'http://127.0.0.1:9/v1',
      preflight: flags.embeddingsEndpoint !== undefined,
      model: flags.embeddingsModel,
      ...(flags.embeddingsApiKeyEnv ? { apiKeyEnv: flags.embeddingsApiKeyEnv } : {}),
      seed: options.seed,
    },
    (id) => deps.say(`routers: run ${id}`),
  );
  const choices: RouterChoices[] = [];
  const jobs: RouterJobSummary[] = [];
  for (const o of outcomes) {
    const summary: RouterJobSummary = {
      router: o.router.name,
      runId,
      jobId: o.job.jobId,
      status: o.job.status,
      trainSeconds: o.trainSeconds,
      ...(o.job.usage ? { gatewayRequests: o.job.usage.model.requests, gatewayPromptTokens: o.job.usage.model.promptTokens } : {}),
    };
    let problem: string | undefined;
    if (o.job.status !== 'SUCCEEDED') problem = `job ${o.job.status}${o.job.reason ? ` (${o.job.reason})` : ''}${o.job.message ? `: ${o.job.message}` : ''}`;
    else if (o.choices === undefined)
      problem = `${o.choicesFile}: not written (a router writes one choice per test query to $BENCHROUTER_OUTPUT_DIR/choices.jsonl)`;
    else {
      try {
        choices.push(parseRouterChoices(o.choices, o.choicesFile, pool, split.test, o.router.name, o.trainSeconds));
      } catch (error) {
        if (!(error instanceof RouterChoicesError)) throw error;
        problem = error.problems.map(formatProblem).join('; ');
      }
    }
    deps.say(
      `router ${o.router.name}: ${problem ? `no row: ${problem}` : `${o.job.status}, trained in ${o.trainSeconds === null ? '?' : o.trainSeconds.toFixed(1)} s`}`,
    );
    jobs.push(problem ? { ...summary, problem } : summary);
  }
  return { choices, jobs };
}

/** What the join did to the input, one line each: dropped and partial datasets, duplicates, NaN values. */
export function poolNotes(pool: QueryPool): string[] {
  const notes: string[] = [];
  for (const gap of pool.gaps) {
    const lacking = [
      ...gap.missingModels.map((m) => `${m} (all ${gap.queries})`),
      ...gap.partialModels.map((p) => `${p.model} (${p.missing} of ${gap.queries})`),
    ].join(', ');
    const fate = gap.dropped
      ? 'dataset dropped'
      : pool.dropped.byDataset[gap.dataset]
        ? `${pool.dropped.byDataset[gap.dataset]} queries dropped`
        : 'kept with the models that have its queries';
    notes.push(`${gap.dataset}: records missing for ${lacking}: ${fate}`);
  }
  if (pool.dropped.total) {
    const where = Object.entries(pool.dropped.byDataset)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
    notes.push(`dropped ${pool.dropped.total} queries that some model has no record for (${where})`);
  }
  if (pool.duplicateRecords) notes.push(`ignored ${pool.duplicateRecords} duplicate records (the first per benchmark, index and model is kept)`);
  if (pool.nanCosts) notes.push(`${pool.nanCosts} records have a NaN cost (Python's missing value): counted as missing, cost 0`);
  if (pool.nanScores) notes.push(`${pool.nanScores} records have a NaN score: counted as missing, score 0`);
  return notes;
}

function oneOf<T extends string>(...allowed: T[]): (value: string) => T {
  return (value) => {
    if (!(allowed as string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}, got "${value}"`);
    return value as T;
  };
}

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`expected a whole number, got "${value}"`);
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`expected a positive whole number, got "${value}"`);
  return n;
}

function evenInt(value: string): number {
  const n = positiveInt(value);
  if (n % 2) throw new InvalidArgumentError(`expected an even number (half the dimensions hold words, half character n-grams), got "${value}"`);
  return n;
}

function ratio(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 1)) throw new InvalidArgumentError(`expected a number strictly between 0 and 1, got "${value}"`);
  return n;
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`expected a non-negative number, got "${value}"`);
  return n;
}

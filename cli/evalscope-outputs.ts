// An EvalScope output folder read back as BenchRouter results: each report's headline score (the metric named
// by primary_metric_identity), its subset scores, and one record per reviewed sample, as the bridge writes them.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../contract/problems.js';

/** One dataset's result for one model, from `reports/<model>/<dataset>.json` and its reviews. */
export interface EvalScopeResult {
  model: string;
  dataset: string;
  score: number;
  metric: string;
  num: number;
  subsets: Record<string, number>;
  records: Array<Record<string, unknown>>;
  /** The report file it came from. */
  reportFile: string;
}

interface ReportMetric {
  identity?: { name?: string; aggregation?: string; dimensions?: Record<string, unknown> };
  score?: number;
  num?: number;
  categories?: Array<{ subsets?: Array<{ name: string; score: number }> }>;
}

interface Report {
  dataset_name?: string;
  model_name?: string;
  metrics?: ReportMetric[];
  primary_metric_identity?: unknown;
}

/** Every `reports/<model>/<dataset>.json` under dir (a work dir, or a folder of timestamped work dirs). */
function reportFiles(dir: string, depth = 0): string[] {
  if (depth > 4) return [];
  const reports = path.join(dir, 'reports');
  const found: string[] = [];
  if (existsSync(reports) && statSync(reports).isDirectory()) {
    for (const model of readdirSync(reports, { withFileTypes: true }).filter((e) => e.isDirectory())) {
      for (const file of readdirSync(path.join(reports, model.name)).filter((f) => f.endsWith('.json'))) found.push(path.join(reports, model.name, file));
    }
  }
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && !['reports', 'predictions', 'reviews', 'logs', 'configs'].includes(entry.name))
      found.push(...reportFiles(path.join(dir, entry.name), depth + 1));
  }
  return found;
}

function metricLabel(metric: ReportMetric): string {
  const identity = metric.identity ?? {};
  let label = identity.name ?? 'score';
  if (identity.aggregation && identity.aggregation !== 'mean') label += `_${identity.aggregation}`;
  for (const [key, value] of Object.entries(identity.dimensions ?? {}).sort(([a], [b]) => a.localeCompare(b))) label += `_${key}=${String(value)}`;
  return label;
}

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );

const readJsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Record<string, unknown>);

interface Review {
  index: number;
  target?: unknown;
  messages?: Array<{ role?: string; content?: unknown }>;
  sample_score?: { score?: { value?: Record<string, number | boolean>; main_score_name?: string; prediction?: unknown; extracted_prediction?: unknown } };
}

const textOf = (content: unknown) =>
  Array.isArray(content) ? content.map((p) => (p as { text?: string }).text ?? '').join('') : typeof content === 'string' ? content : '';

/** One record per reviewed sample, in the bridge's shape (the bridge is the reference: evalscope_bridge.py). */
function recordsOf(workDir: string, model: string, dataset: string): Array<Record<string, unknown>> {
  const reviewsDir = path.join(workDir, 'reviews', model);
  if (!existsSync(reviewsDir)) return [];
  const records: Array<Record<string, unknown>> = [];
  for (const file of readdirSync(reviewsDir)
    .filter((f) => f.startsWith(`${dataset}_`) && f.endsWith('.jsonl'))
    .sort()) {
    const subset = file.slice(dataset.length + 1, -'.jsonl'.length);
    const predictionsFile = path.join(workDir, 'predictions', model, file);
    const usage = new Map<number, { input_tokens?: number; output_tokens?: number }>();
    if (existsSync(predictionsFile))
      for (const p of readJsonl(predictionsFile))
        usage.set(p.index as number, ((p.model_output as { usage?: object } | null)?.usage ?? {}) as { input_tokens?: number });
    for (const review of readJsonl(path.join(reviewsDir, file)) as unknown as Review[]) {
      const score = review.sample_score?.score ?? {};
      const value = score.value ?? {};
      const name = score.main_score_name && score.main_score_name in value ? score.main_score_name : Object.keys(value)[0];
      const messages = review.messages ?? [];
      const last = messages[messages.length - 1];
      const tokens = usage.get(review.index) ?? {};
      records.push({
        index: `${subset}/${review.index}`,
        subset,
        sample_index: review.index,
        prompt: messages
          .filter((m) => m.role !== 'assistant')
          .map((m) => textOf(m.content))
          .join('\n'),
        prediction: score.prediction ?? null,
        extracted_prediction: score.extracted_prediction ?? null,
        ground_truth: review.target ?? null,
        score: name === undefined ? 0 : Number(value[name]),
        prompt_tokens: tokens.input_tokens ?? null,
        completion_tokens: tokens.output_tokens ?? null,
        cost: null,
        raw_output: last?.role === 'assistant' ? textOf(last.content) : null,
      });
    }
  }
  return records.sort((a, b) => String(a.subset).localeCompare(String(b.subset)) || (a.sample_index as number) - (b.sample_index as number));
}

/**
 * Every (model, dataset) result under dir. Where one appears in several work dirs (timestamped reruns),
 * the one in the last folder by name, that is the newest timestamp, wins.
 */
export function readEvalScopeOutputs(dir: string): EvalScopeResult[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new InputError([{ file: dir, field: '', message: 'expected an EvalScope output folder (a directory with reports/<model>/<dataset>.json)' }]);
  const byKey = new Map<string, EvalScopeResult>();
  const problems: Array<{ file: string; field: string; message: string }> = [];
  for (const reportFile of reportFiles(dir).sort()) {
    const model = path.basename(path.dirname(reportFile));
    const workDir = path.dirname(path.dirname(path.dirname(reportFile)));
    let report: Report;
    try {
      report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
    } catch (error) {
      problems.push({ file: reportFile, field: '', message: `not valid JSON (${(error as Error).message})` });
      continue;
    }
    const primary = (report.metrics ?? []).filter(
      (m) => report.primary_metric_identity !== undefined && canonical(m.identity) === canonical(report.primary_metric_identity),
    );
    if (primary.length !== 1 || typeof primary[0]!.score !== 'number') {
      problems.push({ file: reportFile, field: 'primary_metric_identity', message: 'expected exactly one metric with this identity and a numeric score' });
      continue;
    }
    const metric = primary[0]!;
    const dataset = report.dataset_name ?? path.basename(reportFile, '.json');
    const subsets: Record<string, number> = {};
    for (const category of metric.categories ?? []) for (const subset of category.subsets ?? []) subsets[subset.name] = subset.score;
    byKey.set(`${model}\u0000${dataset}`, {
      model,
      dataset,
      score: metric.score!,
      metric: metricLabel(metric),
      num: metric.num ?? 0,
      subsets,
      records: recordsOf(workDir, model, dataset),
      reportFile,
    });
  }
  if (problems.length) throw new InputError(problems);
  if (byKey.size === 0)
    throw new InputError([
      { file: dir, field: '', message: 'no EvalScope report found: expected reports/<model>/<dataset>.json in it or in a folder below it' },
    ]);
  return [...byKey.values()];
}

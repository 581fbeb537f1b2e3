// Writes result files in LLMRouterBench's release layout, results/bench/<dataset>/<split>/<model>/
// <dataset>-<split>-<model>-<stamp>.json, the way its data collector does, for tests and perf.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ReleaseRecord {
  index: number;
  prompt: string;
  score: number | null;
  cost: number | null;
  origin_query?: string;
  prediction?: string;
  ground_truth?: string;
  raw_output?: string;
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** One result file; `text` replaces the JSON body (to write Python's NaN, say). */
export function writeReleaseFile(
  root: string,
  dataset: string,
  split: string,
  model: string,
  records: ReleaseRecord[],
  stamp = '20250101_000000',
  text?: string,
): string {
  const dir = path.join(root, 'results', 'bench', dataset, split, model);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${dataset}-${split}-${model}-${stamp}.json`);
  const body = {
    performance: 0,
    time_taken: 1,
    prompt_tokens: 0,
    completion_tokens: 0,
    cost: 0,
    counts: records.length,
    model_name: model,
    dataset_name: dataset,
    split,
    demo: false,
    records,
  };
  writeFileSync(file, text ?? JSON.stringify(body));
  return file;
}

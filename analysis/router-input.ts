// What a router container reads (docs/routing-analysis.md, "Routers"): the training queries'
// records in LLMRouterBench's own layout, results/bench/<dataset>/<split>/<model>/*.json, the test
// queries without any outcome, a manifest, and routing_io.py, a reader of all this for Python routers.
// Test scores never leave BenchRouter, so no router can choose an epoch or a threshold on them.

import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { QueryPool } from './query-pool.js';
import type { TrainTestSplit } from './train-test-split.js';

export const ROUTING_IO_PY = fileURLToPath(new URL('./routing_io.py', import.meta.url));
/**
 * The analysis's embeddings cache (`{"h": sha256 of the text, "v": base64 little-endian float32}` per line),
 * copied beside the input when the analysis has an embeddings endpoint: routing_io reads a text's vector
 * from it and calls the endpoint only for texts it lacks.
 */
export const ROUTER_EMBEDDINGS_FILE = 'embeddings.jsonl';

export interface RouterInputManifest {
  models: string[];
  datasets: string[];
  seed: number;
  train_ratio: number;
  split_unit: string;
  train_queries: number;
  test_queries: number;
  /** The model BENCHROUTER_MODEL_ENDPOINT embeds with, when the router has an embeddings endpoint. */
  embeddings_model: string | null;
}

/** The id a router names a query by in choices.jsonl: `<dataset>:<index>`. */
export function queryId(pool: QueryPool, row: number): string {
  return `${pool.datasets[pool.queryDataset[row]!]}:${pool.queryIndex[row]}`;
}

/** Where a dataset's files go: `a/b` (a BenchRouter benchmark/task, or LLMRouterBench's dataset/split) as dataset a, split b. */
function datasetAndSplit(name: string): { dataset: string; split: string } {
  const cut = name.lastIndexOf('/');
  return cut > 0 ? { dataset: name.slice(0, cut), split: name.slice(cut + 1) } : { dataset: name, split: 'test' };
}

/** A directory name for a model or dataset name (`openai/gpt-4o` → `openai__gpt-4o`); the files carry the real names. */
function pathName(name: string): string {
  return name.replace(/[/\\]/g, '__');
}

export function writeRouterInput(
  dir: string,
  pool: QueryPool,
  split: TrainTestSplit,
  settings: { seed: number; trainRatio: number; splitUnit: string; embeddingsModel: string | null },
): RouterInputManifest {
  const M = pool.models.length;
  const ids = new Set<string>();
  for (let row = 0; row < pool.queryIndex.length; row++) {
    const id = queryId(pool, row);
    if (ids.has(id)) throw new Error(`two queries share the router id "${id}": dataset names must not make <dataset>:<index> ambiguous`);
    ids.add(id);
  }

  // One file per (dataset, model), training queries only, in the split's order.
  const byDataset = new Map<number, number[]>();
  for (const row of split.train) {
    const d = pool.queryDataset[row]!;
    let rows = byDataset.get(d);
    if (!rows) byDataset.set(d, (rows = []));
    rows.push(row);
  }
  for (const [d, rows] of byDataset) {
    const { dataset, split: datasetSplit } = datasetAndSplit(pool.datasets[d]!);
    for (let m = 0; m < M; m++) {
      const records = rows
        .filter((row) => !pool.available || pool.available[row * M + m])
        .map((row) => ({
          id: queryId(pool, row),
          index: pool.queryOrder[row],
          prompt: pool.queryText[row],
          score: pool.scores[row * M + m],
          cost: pool.costs[row * M + m],
        }));
      if (!records.length) continue;
      const where = path.join(dir, 'results', 'bench', pathName(dataset), pathName(datasetSplit), pathName(pool.models[m]!));
      mkdirSync(where, { recursive: true });
      const body = {
        model_name: pool.models[m],
        dataset_name: dataset,
        split: datasetSplit,
        benchrouter_dataset: pool.datasets[d],
        demo: false,
        counts: records.length,
        records,
      };
      writeFileSync(path.join(where, `${pathName(dataset)}-${pathName(datasetSplit)}-${pathName(pool.models[m]!)}-20000101_000000.json`), JSON.stringify(body));
    }
  }

  const test = Array.from(split.test, (row) =>
    JSON.stringify({
      id: queryId(pool, row),
      dataset: pool.datasets[pool.queryDataset[row]!],
      index: pool.queryOrder[row],
      prompt: pool.queryText[row],
      models: pool.available ? pool.models.filter((_, m) => pool.available![row * M + m]) : undefined,
    }),
  );
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'test.jsonl'), test.length ? `${test.join('\n')}\n` : '');
  const manifest: RouterInputManifest = {
    models: pool.models,
    datasets: pool.datasets,
    seed: settings.seed,
    train_ratio: settings.trainRatio,
    split_unit: settings.splitUnit,
    train_queries: split.train.length,
    test_queries: split.test.length,
    embeddings_model: settings.embeddingsModel,
  };
  writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  copyFileSync(ROUTING_IO_PY, path.join(dir, 'routing_io.py'));
  return manifest;
}

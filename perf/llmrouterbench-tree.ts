// Writes a release-shaped tree for `npm run perf:routing`: LLMRouterBench's layout
// (results/bench/<dataset>/test/<model>/<file>.json) with every record's full text, as its data
// collector writes it: the original query, the prompt as sent, the raw output, prediction and truth.

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { syntheticPool } from '../analysis/synthetic-pool.js';

export interface TreeShape {
  models: number;
  datasets: number;
  promptsPerDataset: number;
}

/** Writes the tree under `root`; returns the number of files, records and bytes written. */
export function writeLlmRouterBenchTree(root: string, shape: TreeShape): { files: number; records: number; bytes: number } {
  const { records } = syntheticPool({
    models: shape.models,
    datasets: shape.datasets,
    queriesPerDataset: shape.promptsPerDataset,
    topics: 24,
    generalistEvery: 8,
    seed: 1,
  });
  // Records come query by query, every model's in turn: gather each (dataset, model) file's.
  const byFile = new Map<string, typeof records>();
  for (const r of records) {
    const key = `${r.benchmark}\u0000${r.model}`;
    const list = byFile.get(key);
    if (list) list.push(r);
    else byFile.set(key, [r]);
  }
  let bytes = 0;
  for (const list of byFile.values()) {
    const { benchmark, model } = list[0]!;
    const dir = path.join(root, 'results', 'bench', benchmark, 'test', model);
    mkdirSync(dir, { recursive: true });
    const body = {
      performance: list.reduce((s, r) => s + (r.score ?? 0), 0) / list.length,
      time_taken: 1234.5,
      prompt_tokens: list.reduce((s, r) => s + (r.prompt_tokens ?? 0), 0),
      completion_tokens: list.reduce((s, r) => s + (r.completion_tokens ?? 0), 0),
      cost: list.reduce((s, r) => s + (r.cost ?? 0), 0),
      counts: list.length,
      model_name: model,
      dataset_name: benchmark,
      split: 'test',
      demo: false,
      records: list.map((r) => {
        const answer = 'ABCD'[(r.index as number) % 4]!;
        const given = r.score ? answer : 'ABCD'[((r.index as number) + 1) % 4]!;
        return {
          index: r.index,
          origin_query: r.prompt,
          prompt: `Answer the following multiple choice question. The last line of your response should be of the form "ANSWER: $LETTER".\n\n${r.prompt}\nA) yes B) no C) both D) neither`,
          prediction: given,
          ground_truth: answer,
          raw_output: `Let me work through this step by step. ${r.prompt!.slice(-90)}\n\nANSWER: ${given}`,
          score: r.score,
          prompt_tokens: r.prompt_tokens,
          completion_tokens: r.completion_tokens,
          cost: r.cost ?? null,
        };
      }),
    };
    const text = JSON.stringify(body);
    bytes += Buffer.byteLength(text);
    writeFileSync(path.join(dir, `${benchmark}-test-${model}-20250101_000000.json`), text);
  }
  return { files: byFile.size, records: records.length, bytes };
}

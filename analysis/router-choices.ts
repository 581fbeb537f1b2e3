// A router container's answer, choices.jsonl, read against the test split: one {"id", "model"} per
// test query, and for a cost-aware router one more per query and cost setting ({"id", "model",
// "setting": <number>}). Every problem names the file and line; BenchRouter scores the choices itself.

import { parsePythonJson } from './python-json.js';
import type { QueryPool } from './query-pool.js';
import { queryId } from './router-input.js';
import { formatProblem, type Problem } from '../contract/problems.js';

export interface RouterChoices {
  /** The router's name, its rows' label. */
  name: string;
  /** What the router said training took (result.json's train_seconds), when it said. */
  trainSeconds: number | null;
  /** Per test position: the chosen model's column. */
  chosen: Int32Array;
  /** Per cost setting, ascending: the choices under it. */
  settings: Array<{ setting: number; chosen: Int32Array }>;
}

export class RouterChoicesError extends Error {
  override name = 'RouterChoicesError';
  constructor(readonly problems: Problem[]) {
    super(problems.map(formatProblem).join('\n'));
  }
}

const MAX_PROBLEMS = 20;

export function parseRouterChoices(text: string, file: string, pool: QueryPool, test: Int32Array, name: string, trainSeconds: number | null): RouterChoices {
  const M = pool.models.length;
  const position = new Map<string, number>();
  test.forEach((row, i) => position.set(queryId(pool, row), i));
  const modelColumn = new Map(pool.models.map((m, j) => [m, j]));
  const problems: Problem[] = [];
  const add = (line: number, field: string, message: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push({ file: `${file}:${line}`, field, message });
  };
  const bySetting = new Map<number | null, Int32Array>();

  text.split('\n').forEach((raw, at) => {
    const line = at + 1;
    if (!raw.trim()) return;
    let value: unknown;
    try {
      value = parsePythonJson(raw);
    } catch (error) {
      add(line, '', `not valid JSON (${(error as Error).message})`);
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return add(line, '', 'expected an object {"id", "model"}');
    const { id, model, setting } = value as Record<string, unknown>;
    if (typeof id !== 'string') return add(line, 'id', `expected a test query id (a string like "<dataset>:<index>"), got ${JSON.stringify(id)}`);
    const i = position.get(id);
    if (i === undefined) return add(line, 'id', `"${id}" is not a test query of this split`);
    if (typeof model !== 'string' || !modelColumn.has(model))
      return add(line, 'model', `expected one of the pool's models (${pool.models.join(', ')}), got ${JSON.stringify(model)}`);
    if (setting !== undefined && (typeof setting !== 'number' || !Number.isFinite(setting)))
      return add(line, 'setting', `expected a number (α, a threshold…), got ${JSON.stringify(setting)}`);
    const m = modelColumn.get(model)!;
    if (pool.available && !pool.available[test[i]! * M + m]) return add(line, 'model', `${model} has no record for "${id}": choose among the query's models`);
    const key = setting === undefined ? null : (setting as number);
    let chosen = bySetting.get(key);
    if (!chosen) bySetting.set(key, (chosen = new Int32Array(test.length).fill(-1)));
    if (chosen[i] !== -1) return add(line, 'id', `a second choice for "${id}"${key === null ? '' : ` at setting ${key}`}`);
    chosen[i] = m;
  });

  if (!bySetting.has(null) && problems.length === 0)
    problems.push({ file, field: '', message: 'no choice without a "setting": expected one {"id", "model"} per test query' });
  for (const [setting, chosen] of bySetting) {
    const missing = chosen.reduce((n, m) => n + (m === -1 ? 1 : 0), 0);
    if (missing && problems.length < MAX_PROBLEMS)
      problems.push({
        file,
        field: '',
        message: `${missing} of ${test.length} test queries have no choice${setting === null ? '' : ` at setting ${setting}`} (the first: "${queryId(pool, test[chosen.indexOf(-1)]!)}")`,
      });
  }
  if (problems.length) throw new RouterChoicesError(problems);
  return {
    name,
    trainSeconds,
    chosen: bySetting.get(null)!,
    settings: [...bySetting.entries()]
      .filter((e): e is [number, Int32Array] => e[0] !== null)
      .sort((a, b) => a[0] - b[0])
      .map(([setting, chosen]) => ({ setting, chosen })),
  };
}

// Reads a directory in LLMRouterBench's release layout, `results/bench/<dataset>/<split>/<model>/*.json`,
// the way its own loader does: files with `demo: true` are skipped, the newest remaining file per
// (dataset, split, model) is used (by its `YYYYMMDD_HHMMSS` suffix, else its modification time), a
// null score counts as 0, and Python's NaN / Infinity tokens are read. File I/O lives here, not in the analysis.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseModelOutcome, type ModelOutcome } from './model-outcome.js';
import { parsePythonJson } from './python-json.js';
import { ProblemList } from './record-problems.js';
import type { z } from 'zod';

export interface LlmRouterBenchLoad {
  records: ModelOutcome[];
  /** The files used, one per (dataset, split, model), in the order read. */
  files: string[];
  /** Files skipped for `demo: true`, and older files superseded by a newer one. */
  skippedDemo: string[];
  superseded: string[];
}

interface Candidate {
  file: string;
  dataset: string;
  split: string;
  model: string;
  stamp: number;
  /**
   * The file's records, validated as soon as the file is read, so the parsed file (raw outputs and
   * all, most of a release's bytes) is garbage at once rather than held until every file is read:
   * less live heap for the collector to walk. Problems are kept and reported only if the file is used.
   */
  records: ModelOutcome[];
  problems: Array<{ field: string; error: z.ZodError } | { field: string; message: string }>;
}

/** `dir` may be the release root (holding results/bench), `results`, or `results/bench` itself. */
export function loadLlmRouterBench(dir: string): LlmRouterBenchLoad {
  const problems = new ProblemList();
  const bench = [path.join(dir, 'results', 'bench'), path.join(dir, 'bench'), dir].find((d) => existsSync(d) && statSync(d).isDirectory());
  if (!bench) {
    problems.add({ file: dir, field: '', message: 'not a directory: expected a directory in the layout results/bench/<dataset>/<split>/<model>/*.json' });
    problems.throwIfAny();
  }

  // Directories are walked in sorted order, as LLMRouterBench reads its files sorted by path: the
  // query order, and so the split, follow from it.
  const groups = new Map<string, Candidate[]>();
  const skippedDemo: string[] = [];
  let seen = 0;
  for (const datasetDir of subdirectories(bench!)) {
    for (const splitDir of subdirectories(path.join(bench!, datasetDir))) {
      for (const modelDir of subdirectories(path.join(bench!, datasetDir, splitDir))) {
        const where = path.join(bench!, datasetDir, splitDir, modelDir);
        for (const name of readdirSync(where)
          .filter((n) => n.endsWith('.json'))
          .sort()) {
          const file = path.join(where, name);
          seen++;
          let data: Record<string, unknown>;
          try {
            data = parsePythonJson(readFileSync(file, 'utf8')) as Record<string, unknown>;
          } catch (error) {
            problems.add({ file, field: '', message: `not valid JSON (${(error as Error).message})` });
            continue;
          }
          if (typeof data !== 'object' || data === null || Array.isArray(data)) {
            problems.add({ file, field: '', message: 'expected a JSON object with "records"' });
            continue;
          }
          if (data['demo'] === true) {
            skippedDemo.push(file);
            continue;
          }
          const text = (key: string, fallback: string) => (typeof data[key] === 'string' && data[key] ? (data[key] as string) : fallback);
          const dataset = text('dataset_name', datasetDir);
          const candidate: Candidate = {
            file,
            dataset,
            split: text('split', splitDir),
            model: text('model_name', modelDir),
            stamp: timestampOf(file),
            records: [],
            problems: [],
          };
          const raw = data['records'];
          if (!Array.isArray(raw)) candidate.problems.push({ field: 'records', message: 'expected an array of per-instance records' });
          else {
            // The benchmark is named once every file is read (dataset or dataset/split); the dataset stands in.
            const origin = { benchmark: dataset, group: dataset, model: candidate.model };
            for (let i = 0; i < raw.length; i++) {
              const parsed = parseModelOutcome(raw[i], origin);
              if (parsed.success) candidate.records.push(parsed.data);
              else candidate.problems.push({ field: `records[${i}]`, error: parsed.error });
            }
          }
          const key = `${candidate.dataset}\u0000${candidate.split}\u0000${candidate.model}`;
          groups.set(key, [...(groups.get(key) ?? []), candidate]);
        }
      }
    }
  }
  if (seen === 0) problems.add({ file: bench!, field: '', message: 'no result files: expected <dataset>/<split>/<model>/*.json under it' });

  const chosen: Candidate[] = [];
  const superseded: string[] = [];
  for (const candidates of groups.values()) {
    // Python's max(): the first of equal stamps wins.
    const newest = candidates.reduce((best, c) => (c.stamp > best.stamp ? c : best));
    chosen.push(newest);
    for (const c of candidates) if (c !== newest) superseded.push(c.file);
  }
  chosen.sort((a, b) => comparePaths(a.file, b.file));

  // A dataset evaluated on several splits is analysed as LLMRouterBench does: each (dataset, split)
  // is a dataset of its own, `dataset/split`, in the macro mean, while the train/test split shuffles
  // the dataset's prompts together (its group).
  const splitsOf = new Map<string, Set<string>>();
  for (const c of chosen) splitsOf.set(c.dataset, (splitsOf.get(c.dataset) ?? new Set()).add(c.split));

  const records: ModelOutcome[] = [];
  for (const c of chosen) {
    for (const p of c.problems) {
      if ('error' in p) problems.addIssues(c.file, p.field, p.error);
      else problems.add({ file: c.file, ...p });
    }
    if (splitsOf.get(c.dataset)!.size > 1) for (const r of c.records) r.benchmark = `${c.dataset}/${c.split}`;
    for (const r of c.records) records.push(r);
  }
  problems.throwIfAny();
  return { records, files: chosen.map((c) => c.file), skippedDemo, superseded };
}

/** YYYYMMDDHHMMSS from a `…-YYYYMMDD_HHMMSS.json` name, else the modification time in seconds (as LLMRouterBench). */
export function timestampOf(file: string): number {
  const match = /(\d{8})_(\d{6})\.json$/.exec(path.basename(file));
  if (match) return Number(match[1]! + match[2]!);
  return Math.floor(statSync(file).mtimeMs / 1000);
}

function subdirectories(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/** Python's Path ordering: component by component. */
function comparePaths(a: string, b: string): number {
  const pa = a.split(path.sep);
  const pb = b.split(path.sep);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) if (pa[i] !== pb[i]) return pa[i]! < pb[i]! ? -1 : 1;
  return pa.length - pb.length;
}

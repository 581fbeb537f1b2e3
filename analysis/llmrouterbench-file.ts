// One result file of LLMRouterBench's release layout, read and validated on its own: what the loader
// (load-llmrouterbench.ts) makes of every file, wherever it is read. A large release is read on two
// threads (analysis-thread.ts), and a file read on the other thread crosses over packed into columns:
// 396,000 records as objects took about 2.4 µs each to copy across, as columns about 1.1 µs.

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Problem } from '../contract/problems.js';
import { parseModelOutcome, type ModelOutcome } from './model-outcome.js';
import { parsePythonJson } from './python-json.js';
import { issueProblems } from './record-problems.js';

/** A `results/bench/<dataset>/<split>/<model>/*.json` file, with the names of the directories it is in. */
export interface ResultFile {
  file: string;
  datasetDir: string;
  splitDir: string;
  modelDir: string;
}

/** A problem of one file, its field relative to the file. */
export type FileProblem = Omit<Problem, 'file'>;

/** What reading one file gave: unreadable (a problem of the whole file), a demo file, or its records. */
export type FileReading =
  | { kind: 'unreadable'; file: string; message: string }
  | { kind: 'demo'; file: string }
  | {
      kind: 'records';
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
      problems: FileProblem[];
    };

export function readResultFile({ file, datasetDir, splitDir, modelDir }: ResultFile): FileReading {
  let data: Record<string, unknown>;
  try {
    data = parsePythonJson(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    return { kind: 'unreadable', file, message: `not valid JSON (${(error as Error).message})` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { kind: 'unreadable', file, message: 'expected a JSON object with "records"' };
  if (data['demo'] === true) return { kind: 'demo', file };
  const text = (key: string, fallback: string) => (typeof data[key] === 'string' && data[key] ? (data[key] as string) : fallback);
  const dataset = text('dataset_name', datasetDir);
  const model = text('model_name', modelDir);
  const records: ModelOutcome[] = [];
  const problems: FileProblem[] = [];
  const raw = data['records'];
  if (!Array.isArray(raw)) problems.push({ field: 'records', message: 'expected an array of per-instance records' });
  else {
    const origin = originOf({ dataset, model });
    for (let i = 0; i < raw.length; i++) {
      const parsed = parseModelOutcome(raw[i], origin);
      if (parsed.success) records.push(parsed.data);
      else problems.push(...issueProblems(`records[${i}]`, parsed.error));
    }
  }
  return { kind: 'records', file, dataset, split: text('split', splitDir), model, stamp: timestampOf(file), records, problems };
}

/** YYYYMMDDHHMMSS from a `…-YYYYMMDD_HHMMSS.json` name, else the modification time in seconds (as LLMRouterBench). */
export function timestampOf(file: string): number {
  const match = /(\d{8})_(\d{6})\.json$/.exec(path.basename(file));
  if (match) return Number(match[1]! + match[2]!);
  return Math.floor(statSync(file).mtimeMs / 1000);
}

/**
 * A file's records as columns, one array per field. What every record of a file shares (its origin: the
 * file's dataset as benchmark and group, its model) is the reading's own and does not cross per record.
 */
interface PackedRecords {
  index: Array<number | string>;
  score: Array<number | null>;
  /** Each record's prompt and raw query as a number in the sender's TextTable, -1 where it has none. */
  texts: { [K in TextField]: Int32Array };
  /** The other optional fields, each `undefined` where a record lacks it (a key that is absent stays absent). */
  optional: { [K in OtherField]: Array<ModelOutcome[K]> };
  /** The texts first seen in this file, numbered on from those of the files sent before it. */
  newTexts: string[];
}

const TEXT_FIELDS = ['origin_query', 'prompt'] as const;
const OTHER_FIELDS = ['prediction', 'ground_truth', 'prompt_tokens', 'completion_tokens', 'cost'] as const;
type TextField = (typeof TEXT_FIELDS)[number];
type OtherField = (typeof OTHER_FIELDS)[number];

export type PackedReading =
  Exclude<FileReading, { kind: 'records' }> | (Omit<Extract<FileReading, { kind: 'records' }>, 'records'> & { packed: PackedRecords });

/**
 * The sender's numbering of texts, in the order first seen (the receiver keeps the same list by appending
 * each file's newTexts): every model's file of a dataset holds the same prompts, so a prompt crosses once
 * however many files hold it. A text is looked up by where it is (field, dataset, record index) and compared
 * with the text there: no hashing of long texts.
 */
export class TextTable {
  private readonly places = new Map<string, Map<number | string, number>>();
  private readonly texts: string[] = [];

  /** Where texts of this field and dataset are numbered by record index. */
  place(field: string, dataset: string): Map<number | string, number> {
    const key = `${field}\u0000${dataset}`;
    let place = this.places.get(key);
    if (!place) this.places.set(key, (place = new Map()));
    return place;
  }

  /** The number of the text at `index` of `place`; a new one is added to `fresh`. */
  number(text: string | undefined, place: Map<number | string, number>, index: number | string, fresh: string[]): number {
    if (text === undefined) return -1;
    let n = place.get(index);
    if (n === undefined || this.texts[n] !== text) {
      n = this.texts.length;
      place.set(index, n);
      this.texts.push(text);
      fresh.push(text);
    }
    return n;
  }
}

/** The reading in columns, for postMessage, its texts numbered in `table`. */
export function packReading(reading: FileReading, table: TextTable): PackedReading {
  if (reading.kind !== 'records') return reading;
  const { records, ...rest } = reading;
  const newTexts: string[] = [];
  const texts = Object.fromEntries(
    TEXT_FIELDS.map((key) => {
      const place = table.place(key, rest.dataset);
      return [key, Int32Array.from(records, (r) => table.number(r[key], place, r.index, newTexts))];
    }),
  ) as PackedRecords['texts'];
  const optional = Object.fromEntries(OTHER_FIELDS.map((key) => [key, records.map((r) => r[key])])) as PackedRecords['optional'];
  return { ...rest, packed: { index: records.map((r) => r.index), score: records.map((r) => r.score), texts, optional, newTexts } };
}

/**
 * packReading undone, in the order the readings were packed (`texts` holds every text received so far):
 * the same records, their keys in the order readResultFile gives them.
 */
export function unpackReading(reading: PackedReading, texts: string[]): FileReading {
  if (!('packed' in reading)) return reading;
  const { packed, ...rest } = reading;
  for (const text of packed.newTexts) texts.push(text);
  const { benchmark, group, model } = originOf(rest);
  const records: ModelOutcome[] = [];
  for (let i = 0; i < packed.index.length; i++) {
    const record: ModelOutcome = { benchmark, model, index: packed.index[i]!, score: packed.score[i]!, group };
    for (const key of TEXT_FIELDS) {
      const n = packed.texts[key][i]!;
      if (n >= 0) record[key] = texts[n]!;
    }
    for (const key of OTHER_FIELDS) {
      const value = packed.optional[key][i];
      if (value !== undefined) (record as unknown as Record<string, unknown>)[key] = value;
    }
    records.push(record);
  }
  return { ...rest, records };
}

/**
 * What every record of a file is read with: the benchmark is named once every file is read (dataset or
 * dataset/split, load-llmrouterbench.ts); the dataset stands in.
 */
function originOf({ dataset, model }: { dataset: string; model: string }): { benchmark: string; group: string; model: string } {
  return { benchmark: dataset, group: dataset, model };
}

// A seeded synthetic model pool with planted structure, for tests and the perf script: queries fall
// into topics with their own vocabulary, each specialist model is strong on one topic and weak
// elsewhere, a few expensive generalists are fair everywhere, and every score is a Bernoulli draw
// (the noise a router must average away).

import type { ModelOutcome } from './model-outcome.js';
import { PythonRandom } from './python-random.js';

export interface SyntheticPoolOptions {
  models: number;
  datasets: number;
  queriesPerDataset: number;
  /** Topics queries are drawn from uniformly; specialist m is strong on topic m mod topics. */
  topics: number;
  /** Every generalists-th model (1-based) is a generalist; 0 for none. */
  generalistEvery?: number;
  /** P(score = 1) of a specialist on its topic, off it, and of a generalist. */
  strong?: number;
  weak?: number;
  fair?: number;
  wordsPerQuery?: number;
  seed?: number;
}

export interface SyntheticPool {
  records: ModelOutcome[];
  /** Per query, in record order: its planted topic. */
  topicOfQuery: Int32Array;
  /** Per model: the topic it is strong on, or -1 for a generalist. */
  specialty: Int32Array;
}

const SYLLABLES = 'bcdfghjklmnprstvwz'.split('').flatMap((c) => ['a', 'e', 'i', 'o', 'u'].map((v) => c + v));

export function syntheticPool(options: SyntheticPoolOptions): SyntheticPool {
  const rng = new PythonRandom(options.seed ?? 7);
  const { models, datasets, queriesPerDataset, topics } = options;
  const strong = options.strong ?? 0.9;
  const weak = options.weak ?? 0.25;
  const fair = options.fair ?? 0.65;
  const wordsPerQuery = options.wordsPerQuery ?? 24;

  // Each topic writes with its own few syllables, as a domain has its own vocabulary and spelling
  // (code, math, dialogue), so both word and character n-gram features carry the topic.
  const syllable = (t: number, j: number) => SYLLABLES[(t * 4 + j) % SYLLABLES.length]!;
  const topicWords = Array.from({ length: topics }, (_, t) =>
    Array.from({ length: 40 }, (_, j) => syllable(t, j % 4) + syllable(t, (j >> 2) % 4) + syllable(t, (j >> 4) % 4) + (j >> 6 ? String(j) : '')),
  );
  const commonWords = ['the', 'of', 'and', 'what', 'is', 'which', 'how', 'many', 'given', 'find', 'a', 'in', 'for', 'with', 'value', 'answer'];

  const modelNames = Array.from({ length: models }, (_, m) => `model-${String(m).padStart(2, '0')}`);
  const specialty = Int32Array.from({ length: models }, (_, m) => (options.generalistEvery && (m + 1) % options.generalistEvery === 0 ? -1 : m % topics));
  // Specialists are cheap, generalists ten times dearer: the trade-off the cost setting is about.
  const pricePerToken = Float64Array.from({ length: models }, (_, m) => (specialty[m] === -1 ? 10 : 1) * (0.5 + (m % 5) * 0.25) * 1e-6);

  const total = datasets * queriesPerDataset;
  const topicOfQuery = new Int32Array(total);
  const records: ModelOutcome[] = new Array(total * models);
  let r = 0;
  for (let d = 0; d < datasets; d++) {
    const benchmark = `dataset-${String(d).padStart(2, '0')}`;
    for (let i = 0; i < queriesPerDataset; i++) {
      const q = d * queriesPerDataset + i;
      const topic = rng.randbelow(topics);
      topicOfQuery[q] = topic;
      const words: string[] = [];
      for (let w = 0; w < wordsPerQuery; w++)
        words.push(rng.random() < 0.6 ? topicWords[topic]![rng.randbelow(40)]! : commonWords[rng.randbelow(commonWords.length)]!);
      const prompt = `${benchmark} question ${i}: ${words.join(' ')}?`;
      const promptTokens = wordsPerQuery + 4;
      for (let m = 0; m < models; m++) {
        const p = specialty[m] === -1 ? fair : specialty[m] === topic ? strong : weak;
        const completionTokens = 50 + rng.randbelow(200);
        records[r++] = {
          benchmark,
          model: modelNames[m]!,
          index: i,
          prompt,
          score: rng.random() < p ? 1 : 0,
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          cost: (promptTokens + completionTokens) * pricePerToken[m]!,
        };
      }
    }
  }
  return { records, topicOfQuery, specialty };
}

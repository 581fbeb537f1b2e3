// A small release in LLMRouterBench's layout that exercises every place where its definitions and
// BenchRouter's part: a dataset with two splits that share prompts, duplicated prompts, a
// model without a whole dataset, and partial-credit scores.

import { writeReleaseFile, type ReleaseRecord } from './llmrouterbench-release.js';

export const AGREEMENT_MODELS = ['ma', 'mb', 'mc'];

const PRICE = [0.001, 0.01, 0.003];

/** Prompts that repeat (within a split, across splits) or are empty, by [dataset/split][index]. */
const SHARED: Record<string, Record<number, string>> = {
  'alpha/test': { 7: 'alpha question 2', 20: 'alpha question 11' },
  'alpha/valid': { 3: 'alpha question 4', 10: 'alpha question 29' },
  'beta/test': { 24: 'beta question 3' },
};

const SIZE: Record<string, number> = { 'alpha/test': 30, 'alpha/valid': 12, 'beta/test': 25 };

export function agreementRelease(root: string): void {
  for (const key of Object.keys(SIZE)) {
    const [dataset, split] = key.split('/') as [string, string];
    AGREEMENT_MODELS.forEach((model, m) => {
      if (model === 'mc' && dataset === 'beta') return; // mc has no result file for beta at all
      const records: ReleaseRecord[] = Array.from({ length: SIZE[key]! }, (_, i) => {
        const prompt = SHARED[key]![i] ?? `${dataset} question ${split === 'test' ? '' : `${split} `}${i}`;
        // On every sixth beta query ma gets partial credit and mb fails: the two Oracle rules part there.
        const partial = dataset === 'beta' && i % 6 === 0;
        const score = partial ? (model === 'ma' ? 0.5 : 0) : (i * 7 + m * 3 + dataset.length + (split === 'valid' ? 1 : 0)) % 5 < 2 ? 1 : 0;
        return { index: i, prompt, origin_query: prompt, score, cost: PRICE[m]! * (1 + (i % 3)) };
      });
      writeReleaseFile(root, dataset, split, model, records);
    });
  }
}

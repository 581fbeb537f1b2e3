// What model calls cost when the upstream does not say (`usage.cost`): a table of US dollars per
// million input and output tokens, built in and overridable per run with a YAML file.

import { z } from 'zod';
import { fieldPath, InputError } from '../contract/problems.js';
import { readYamlFile } from '../contract/yaml-file.js';

export interface Price {
  /** $ per 1M prompt tokens. */
  input: number;
  /** $ per 1M completion tokens. */
  output: number;
}

export type PriceTable = Record<string, Price>;

/** A few well-known list prices, and the reference model's made-up ones (so tests see real sums). */
export const BUILT_IN_PRICES: PriceTable = {
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  reference: { input: 1, output: 2 },
};

const PriceFileSchema = z.strictObject({
  models: z.record(z.string(), z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() })),
});

export function loadPriceFile(file: string): PriceTable {
  const read = readYamlFile(file);
  if (!read.ok) throw new InputError([read.problem]);
  const parsed = PriceFileSchema.safeParse(read.data);
  if (!parsed.success) {
    throw new InputError(
      parsed.error.issues.map((issue) => ({
        file,
        field: fieldPath(issue.path),
        message: `${issue.message} (expected models: {<name>: {input: $/1M tokens, output: $/1M tokens}})`,
      })),
    );
  }
  return parsed.data.models;
}

/** The price of a model: an exact name first, else the longest table name the model starts with. */
export function priceOf(table: PriceTable, model: string): Price | undefined {
  if (table[model]) return table[model];
  let best: string | undefined;
  for (const name of Object.keys(table)) if (model.startsWith(name) && (!best || name.length > best.length)) best = name;
  return best ? table[best] : undefined;
}

export function costOf(table: PriceTable, model: string, promptTokens: number, completionTokens: number, upstreamCost?: unknown): number {
  if (typeof upstreamCost === 'number' && Number.isFinite(upstreamCost)) return upstreamCost;
  const price = priceOf(table, model);
  return price ? (promptTokens * price.input + completionTokens * price.output) / 1e6 : 0;
}

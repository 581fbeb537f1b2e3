// Query embeddings from an OpenAI-compatible `/v1/embeddings` endpoint, used only when the user names
// one. The network lives in this file alone; the rest of analysis/ is pure computation.

import { setTimeout as sleep } from 'node:timers/promises';
import pMap from 'p-map';
import type { EmbeddingMatrix, Embedder } from './embedding-matrix.js';

export interface OpenAiEmbeddingsOptions {
  /** Base URL ending in /v1, as for BENCHROUTER_MODEL_ENDPOINT. */
  endpoint: string;
  model: string;
  apiKey?: string;
  /** Texts per request. Default 64. */
  batchSize?: number;
  /** Requests in flight at once. Default 4. */
  concurrency?: number;
  /** Attempts per request on 429, 5xx and network errors. Default 4. */
  attempts?: number;
}

export function openAiEmbedder(options: OpenAiEmbeddingsOptions): Embedder {
  return {
    name: `${options.model}@${options.endpoint}`,
    embed: (texts) => embedViaEndpoint(texts, options),
  };
}

export async function embedViaEndpoint(texts: readonly string[], options: OpenAiEmbeddingsOptions): Promise<EmbeddingMatrix> {
  const batchSize = options.batchSize ?? 64;
  const url = `${options.endpoint.replace(/\/+$/, '')}/embeddings`;
  const batches: number[] = [];
  for (let from = 0; from < texts.length; from += batchSize) batches.push(from);
  const vectors: number[][] = new Array(texts.length);
  await pMap(
    batches,
    async (from) => {
      // Empty strings are rejected by some servers; a single space embeds as "no content".
      const input = texts.slice(from, from + batchSize).map((t) => t || ' ');
      let got: number[][];
      try {
        got = await requestBatch(url, input, options);
      } catch (error) {
        // Never a zero vector in its place: the analysis stops, naming the query.
        throw new Error(
          `embedding query ${from} (prompt ${JSON.stringify(texts[from]!.slice(0, 60))}) and ${input.length - 1} more in its batch failed: ${(error as Error).message}`,
        );
      }
      got.forEach((v, i) => {
        if (!v.some((x) => x !== 0) || !v.every(Number.isFinite))
          throw new Error(
            `${url}: embedding query ${from + i} (prompt ${JSON.stringify(texts[from + i]!.slice(0, 60))}): the endpoint returned a zero or non-finite vector`,
          );
        vectors[from + i] = v;
      });
    },
    { concurrency: options.concurrency ?? 4 },
  );

  const dim = vectors[0]?.length ?? 0;
  const data = new Float32Array(texts.length * dim);
  vectors.forEach((v, row) => {
    if (v.length !== dim) throw new Error(`${url}: embedding ${row} has ${v.length} dimensions, the first had ${dim}`);
    data.set(v, row * dim);
  });
  return { rows: texts.length, dim, data };
}

async function requestBatch(url: string, input: string[], options: OpenAiEmbeddingsOptions): Promise<number[][]> {
  const attempts = options.attempts ?? 4;
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
        body: JSON.stringify({ model: options.model, input }),
      });
    } catch (error) {
      if (attempt >= attempts) throw new Error(`${url}: ${error instanceof Error ? error.message : String(error)}`);
      await backoff(attempt);
      continue;
    }
    if ((response.status === 429 || response.status >= 500) && attempt < attempts) {
      await backoff(attempt);
      continue;
    }
    const text = await response.text();
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}: ${text.slice(0, 300)}`);
    return parseEmbeddings(url, text, input.length);
  }
}

function parseEmbeddings(url: string, text: string, expected: number): number[][] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${url}: expected a JSON response, got ${JSON.stringify(text.slice(0, 100))}`);
  }
  const data = (body as { data?: unknown }).data;
  if (!Array.isArray(data) || data.length !== expected)
    throw new Error(`${url}: data: expected ${expected} embeddings, got ${Array.isArray(data) ? data.length : typeof data}`);
  const out: number[][] = new Array(expected);
  data.forEach((item: { index?: unknown; embedding?: unknown }, position) => {
    const index = typeof item?.index === 'number' ? item.index : position;
    if (!Number.isInteger(index) || index < 0 || index >= expected || out[index])
      throw new Error(`${url}: data[${position}].index: expected a distinct whole number below ${expected}, got ${index}`);
    const embedding = item?.embedding;
    if (!Array.isArray(embedding) || !embedding.every((x) => typeof x === 'number'))
      throw new Error(`${url}: data[${position}].embedding: expected an array of numbers`);
    out[index] = embedding as number[];
  });
  return out;
}

function backoff(attempt: number): Promise<void> {
  return sleep(250 * 2 ** (attempt - 1));
}

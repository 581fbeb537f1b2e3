// The built-in offline embedder, so the analysis runs anywhere: TF-IDF over hashed word uni/bigrams
// and character 3–5-grams, folded into a small dense vector by signed feature hashing, L2-normalized.
// Deterministic, no model, no network.

import { extractTermsOnTwoThreads } from './analysis-thread.js';
import type { EmbeddingMatrix, Embedder } from './embedding-matrix.js';
import { CHAR, extractTerms, fmix32, type SparseTerms } from './hashed-terms.js';

export interface HashedTfidfOptions {
  /** Output dimensions: half for word features, half for character n-grams. Default 128. */
  dim?: number;
  /** Only the first maxChars characters are read, as embedding APIs truncate long inputs. Default 4000. */
  maxChars?: number;
}

export const DEFAULT_EMBEDDING_DIM = 128;
const DF_BITS = 20; // document frequencies are counted in 2^20 hash buckets, far more than dim
/** From this many texts on, the embedder extracts their terms on two threads (analysis-thread.ts). */
export const TWO_THREADS_MIN_TEXTS = 4000;

export function hashedTfidfEmbedder(options: HashedTfidfOptions = {}): Embedder {
  const dim = options.dim ?? DEFAULT_EMBEDDING_DIM;
  return {
    name: `hashed-tfidf-${dim}`,
    embed: async (texts, fitRows) => {
      checkDim(dim);
      const maxChars = options.maxChars ?? 4000;
      const terms = texts.length >= TWO_THREADS_MIN_TEXTS ? await extractTermsOnTwoThreads(texts, maxChars) : extractTerms(texts, maxChars);
      return embedTerms(terms, fitRows, dim);
    },
  };
}

/** The embedder's vectors, computed on this thread alone. */
export function embedHashedTfidf(texts: readonly string[], fitRows: Int32Array, options: HashedTfidfOptions = {}): EmbeddingMatrix {
  const dim = options.dim ?? DEFAULT_EMBEDDING_DIM;
  checkDim(dim);
  return embedTerms(extractTerms(texts, options.maxChars ?? 4000), fitRows, dim);
}

function checkDim(dim: number): void {
  if (!Number.isInteger(dim) || dim < 2 || dim % 2) throw new RangeError(`embedding dim must be an even whole number ≥ 2, got ${dim}`);
}

/** TF-IDF weights of the terms, idf fitted on fitRows, folded into `dim` dimensions and normalized. */
function embedTerms(terms: SparseTerms, fitRows: Int32Array, dim: number): EmbeddingMatrix {
  const rows = terms.start.length - 1;

  // Smoothed IDF (as scikit-learn's) over the fit rows only: ln((1 + n) / (1 + df)) + 1.
  const mask = (1 << DF_BITS) - 1;
  const df = new Int32Array(1 << DF_BITS);
  for (const row of fitRows) for (let p = terms.start[row]!; p < terms.start[row + 1]!; p++) df[(terms.features[p]! >>> 1) & mask]!++;
  const idfBase = Math.log(1 + fitRows.length);
  // ln(1 + df) per df that occurs (a bucket's df can pass the fit rows: features share buckets), looked
  // up rather than computed for each of the millions of feature occurrences: the same numbers, far fewer logarithms.
  let maxDf = 0;
  for (let b = 0; b < df.length; b++) if (df[b]! > maxDf) maxDf = df[b]!;
  const logOnePlus = new Float64Array(maxDf + 1);
  for (let d = 0; d <= maxDf; d++) logOnePlus[d] = Math.log(1 + d);

  const half = dim / 2;
  const data = new Float32Array(rows * dim);
  for (let t = 0; t < rows; t++) {
    const base = t * dim;
    for (let p = terms.start[t]!; p < terms.start[t + 1]!; p++) {
      const feature = terms.features[p]!;
      const weight = terms.tf[p]! * (idfBase - logOnePlus[df[(feature >>> 1) & mask]!]! + 1);
      // A second, independent hash picks the dense slot and its sign, so collisions cancel on average.
      const slotHash = fmix32(feature);
      const slot = ((slotHash >>> 1) % half) + ((feature & 1) === CHAR ? half : 0);
      data[base + slot]! += slotHash & 1 ? -weight : weight;
    }
    // Each half gets unit norm, so words and the far more numerous character n-grams weigh the same.
    normalizeSpan(data, base, half);
    normalizeSpan(data, base + half, half);
    normalizeSpan(data, base, dim);
  }
  return { rows, dim, data };
}

function normalizeSpan(data: Float32Array, from: number, length: number): void {
  let sum = 0;
  for (let j = from; j < from + length; j++) sum += data[j]! * data[j]!;
  if (sum === 0) return;
  const scale = 1 / Math.sqrt(sum);
  for (let j = from; j < from + length; j++) data[j]! *= scale;
}

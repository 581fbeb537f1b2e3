// Query embeddings as one row-major Float32Array, and the embedder interface routers are given: the
// built-in offline embedder or an OpenAI-compatible endpoint.

export interface EmbeddingMatrix {
  rows: number;
  dim: number;
  /** Row r is data[r * dim, (r + 1) * dim). */
  data: Float32Array;
}

export interface Embedder {
  /** Shown in reports, e.g. `hashed-tfidf-256` or `text-embedding-3-small@http://…/v1`. */
  readonly name: string;
  /**
   * One row per text. `fitRows` are the texts an embedder that learns corpus statistics (IDF) may
   * learn from: the training queries, so nothing is learnt from test.
   */
  embed(texts: readonly string[], fitRows: Int32Array): Promise<EmbeddingMatrix>;
}

/** Scales every row to unit L2 norm in place (an all-zero row stays zero). */
export function normalizeRows(matrix: EmbeddingMatrix): EmbeddingMatrix {
  const { rows, dim, data } = matrix;
  for (let r = 0; r < rows; r++) {
    const base = r * dim;
    let sum = 0;
    for (let j = 0; j < dim; j++) sum += data[base + j]! * data[base + j]!;
    if (sum === 0) continue;
    const scale = 1 / Math.sqrt(sum);
    for (let j = 0; j < dim; j++) data[base + j]! *= scale;
  }
  return matrix;
}

/** The given rows, copied into a contiguous matrix (for the matrix products of k-means and kNN). */
export function gatherRows(matrix: EmbeddingMatrix, rows: Int32Array): EmbeddingMatrix {
  const { dim } = matrix;
  const data = new Float32Array(rows.length * dim);
  for (let i = 0; i < rows.length; i++) data.set(matrix.data.subarray(rows[i]! * dim, rows[i]! * dim + dim), i * dim);
  return { rows: rows.length, dim, data };
}

// Embeddings kept per text hash, so that a rerun of an analysis makes no call and gives the same
// result: one append-only JSON Lines file per (endpoint model), `{"h": sha256(text), "v": base64
// float32}`. Only texts not in the file are sent to the endpoint. File I/O lives here.

import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Embedder, EmbeddingMatrix } from './embedding-matrix.js';

export interface EmbeddingCacheStats {
  cached: number;
  embedded: number;
}

/** The cache file of one embeddings model: named by the model, so another model never reads its vectors. */
export function embeddingCacheFile(dir: string, model: string): string {
  const safe = model.replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(dir, `${safe}-${createHash('sha256').update(model).digest('hex').slice(0, 12)}.jsonl`);
}

/** `inner` embeds only the texts the file lacks; `onStats` hears how many came from where. */
export function cachedEmbedder(inner: Embedder, file: string, onStats: (stats: EmbeddingCacheStats) => void = () => {}): Embedder {
  // The file is read once per embedder and kept in step with what it appends: an analysis that embeds the
  // pool for its router containers and again for its own routers parses it once.
  let loaded: Map<string, Float32Array> | undefined;
  return {
    name: inner.name,
    // The fit rows are not passed on: an endpoint learns nothing from the corpus.
    async embed(texts): Promise<EmbeddingMatrix> {
      const known = (loaded ??= readCache(file));
      const hashes = texts.map(textHash);
      const missing: number[] = [];
      const seen = new Set<string>();
      hashes.forEach((h, i) => {
        if (!known.has(h) && !seen.has(h)) {
          seen.add(h);
          missing.push(i);
        }
      });
      if (missing.length) {
        const fresh = await inner.embed(
          missing.map((i) => texts[i]!),
          Int32Array.from(missing.keys()),
        );
        const lines: string[] = [];
        missing.forEach((i, r) => {
          const v = fresh.data.slice(r * fresh.dim, (r + 1) * fresh.dim);
          known.set(hashes[i]!, v);
          lines.push(JSON.stringify({ h: hashes[i], v: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') }));
        });
        mkdirSync(path.dirname(file), { recursive: true });
        appendFileSync(file, `${lines.join('\n')}\n`);
      }
      onStats({ cached: texts.length - missing.length, embedded: missing.length });
      const dim = texts.length ? known.get(hashes[0]!)!.length : 0;
      const data = new Float32Array(texts.length * dim);
      hashes.forEach((h, row) => {
        const v = known.get(h)!;
        if (v.length !== dim) throw new Error(`${file}: cached embeddings have ${v.length} and ${dim} dimensions: remove the file to embed again`);
        data.set(v, row * dim);
      });
      return { rows: texts.length, dim, data };
    },
  };
}

function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function readCache(file: string): Map<string, Float32Array> {
  const known = new Map<string, Float32Array>();
  if (!existsSync(file)) return known;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, at) => {
      if (!line) return;
      let entry: { h?: unknown; v?: unknown };
      try {
        entry = JSON.parse(line) as { h?: unknown; v?: unknown };
      } catch {
        // A line cut short by an interrupted run: its text is embedded again.
        return;
      }
      if (typeof entry.h !== 'string' || typeof entry.v !== 'string') throw new Error(`${file}:${at + 1}: expected {"h", "v"}`);
      const bytes = Buffer.from(entry.v, 'base64');
      known.set(entry.h, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
    });
  return known;
}

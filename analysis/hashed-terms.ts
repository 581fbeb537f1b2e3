// The features of the built-in offline embedder (hashed-tfidf-embedder.ts): each text's hashed word uni- and
// bigrams and character 3–5-grams with their term frequencies, 1 + ln(count). Each text's are its own, so
// a large pool's texts are split between two threads (analysis-thread.ts) and the parts joined in order.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
export const CHAR = 1;
const CROWDED_BUCKET = 64;

/** Sparse term frequencies of every text: features[start[t], start[t+1]) with weights 1 + ln(count). */
export interface SparseTerms {
  start: Int32Array;
  features: Int32Array;
  tf: Float32Array;
}

/** The terms of texts[from, to). */
export function extractTerms(texts: readonly string[], maxChars: number, from = 0, to = texts.length): SparseTerms {
  const start = new Int32Array(to - from + 1);
  let features = new Int32Array(1 << 16);
  let tf = new Float32Array(1 << 16);
  let scratch = new Int32Array(1 << 12);
  let sortedScratch = new Int32Array(1 << 12);
  const bucketStarts = new Int32Array((1 << 16) + 1);
  let size = 0;
  for (let t = from; t < to; t++) {
    const text = texts[t]!.slice(0, maxChars).toLowerCase();
    // Upper bound on this text's features: 3 character n-grams per character, 2 word features per word.
    const bound = 3 * (text.length + 2) + 2 * text.length + 2;
    if (scratch.length < bound) {
      scratch = new Int32Array(bound * 2);
      sortedScratch = new Int32Array(bound * 2);
    }
    const n = hashFeatures(text, scratch);
    const sorted = sortAscending(scratch, n, sortedScratch, bucketStarts);
    if (features.length < size + n) {
      const bigger = Math.max(features.length * 2, size + n);
      features = copyInto(new Int32Array(bigger), features, size);
      tf = copyInto(new Float32Array(bigger), tf, size);
    }
    for (let i = 0; i < n;) {
      let j = i + 1;
      while (j < n && sorted[j] === sorted[i]) j++;
      features[size] = sorted[i]!;
      tf[size] = 1 + Math.log(j - i);
      size++;
      i = j;
    }
    start[t - from + 1] = size;
  }
  return { start, features: features.subarray(0, size), tf: tf.subarray(0, size) };
}

/**
 * values[0, n) in ascending order (as Int32Array's own sort), written to `into`: feature hashes are
 * spread evenly over the int32 range, so a stable scatter into about n buckets by their top bits leaves
 * every value a few places at most from where it belongs, and an insertion sort finishes the job. About
 * a third of the time of the built-in sort on a release's 12.8 million features.
 */
export function sortAscending(values: Int32Array, n: number, into: Int32Array, starts: Int32Array): Int32Array {
  let bits = 1;
  while (1 << bits < n && bits < 16) bits++;
  const shift = 32 - bits;
  const buckets = 1 << bits;
  starts.fill(0, 0, buckets + 1);
  // Flipping the sign bit makes the unsigned order of the key the signed order of the value.
  let fullest = 0;
  for (let i = 0; i < n; i++) {
    const b = ((values[i]! ^ 0x80000000) >>> shift) + 1;
    if (++starts[b]! > fullest) fullest = starts[b]!;
  }
  // A crowded bucket (a text that repeats a few features thousands of times) could make the insertion
  // sort quadratic: the built-in sort takes that text.
  if (fullest > CROWDED_BUCKET) {
    into.set(values.subarray(0, n));
    return into.subarray(0, n).sort();
  }
  for (let b = 0; b < buckets; b++) starts[b + 1]! += starts[b]!;
  for (let i = 0; i < n; i++) into[starts[(values[i]! ^ 0x80000000) >>> shift]!++] = values[i]!;
  for (let i = 1; i < n; i++) {
    const v = into[i]!;
    let j = i - 1;
    while (j >= 0 && into[j]! > v) {
      into[j + 1] = into[j]!;
      j--;
    }
    into[j + 1] = v;
  }
  return into.subarray(0, n);
}

/** Writes the text's feature hashes into out; the low bit tells word (0) from character n-gram (1). */
function hashFeatures(text: string, out: Int32Array): number {
  let n = 0;
  let previousWord = 0;
  let word = FNV_OFFSET;
  let inWord = false;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 32;
    if (isWordChar(code)) {
      word = Math.imul(word ^ code, FNV_PRIME);
      inWord = true;
    } else if (inWord) {
      out[n++] = word & ~1;
      if (previousWord !== 0) out[n++] = fmix32(previousWord ^ Math.imul(word, 0x9e3779b1)) & ~1;
      previousWord = word;
      word = FNV_OFFSET;
      inWord = false;
    }
  }
  // Character n-grams run over the text with whitespace collapsed and a space at either end.
  const spaced = ` ${text.replace(/\s+/g, ' ').trim()} `;
  for (let i = 0; i + 3 <= spaced.length; i++) {
    let h = 0x01000193 ^ 0x5bd1e995; // a different basis from words, so "abc" the word and the 3-gram differ
    for (let len = 1; len <= 5 && i + len <= spaced.length; len++) {
      h = Math.imul(h ^ spaced.charCodeAt(i + len - 1), FNV_PRIME);
      if (len >= 3) out[n++] = h | CHAR;
    }
  }
  return n;
}

function isWordChar(code: number): boolean {
  if (code < 128) return (code >= 48 && code <= 57) || (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
  // Outside ASCII every letter-like code unit counts (CJK, accents): no word splitting there.
  return code > 0xbf && !(code >= 0x2000 && code <= 0x206f) && !(code >= 0x3000 && code <= 0x303f);
}

/** MurmurHash3's finalizer: spreads every input bit over the output. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The terms of consecutive runs of texts, as one. */
export function joinTerms(parts: readonly SparseTerms[]): SparseTerms {
  let texts = 0;
  let size = 0;
  for (const p of parts) {
    texts += p.start.length - 1;
    size += p.features.length;
  }
  const joined: SparseTerms = { start: new Int32Array(texts + 1), features: new Int32Array(size), tf: new Float32Array(size) };
  let t = 0;
  let at = 0;
  for (const p of parts) {
    joined.features.set(p.features, at);
    joined.tf.set(p.tf, at);
    for (let i = 1; i < p.start.length; i++) joined.start[++t] = at + p.start[i]!;
    at += p.features.length;
  }
  return joined;
}

function copyInto<T extends Int32Array | Float32Array>(target: T, source: T, count: number): T {
  target.set(source.subarray(0, count));
  return target;
}

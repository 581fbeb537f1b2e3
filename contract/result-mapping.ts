// result_mapping: dot/bracket paths into a benchmark's result.json, and the normalization of that
// file into `{ overall, raw_metrics }`. Pure: no I/O.

import { showValue } from './problems.js';

export type PathSegment = string | number;

/**
 * Parses `a.b[0]["pass@1"]` into segments. Throws an Error whose message says what is wrong,
 * for the caller to attach to a file and field.
 */
export function parseResultPath(path: string): PathSegment[] {
  if (path.trim() === '') throw new Error('expected a path like "metrics.accuracy", got an empty string');
  const segments: PathSegment[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`invalid path ${showValue(path)}: ${why} at character ${i + 1}`);
  };
  while (i < path.length) {
    const ch = path[i];
    if (ch === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) fail('unclosed "["');
      const inner = path.slice(i + 1, close).trim();
      if (/^\d+$/.test(inner)) segments.push(Number(inner));
      else if (/^"[^"]*"$/.test(inner) || /^'[^']*'$/.test(inner)) segments.push(inner.slice(1, -1));
      else fail('expected a number or a quoted key inside "[ ]"');
      i = close + 1;
      if (i < path.length && path[i] !== '.' && path[i] !== '[') fail('expected "." or "[" after "]"');
      if (path[i] === '.') {
        i += 1;
        if (i >= path.length) fail('path ends with "."');
      }
    } else {
      let end = i;
      while (end < path.length && path[end] !== '.' && path[end] !== '[') end += 1;
      const key = path.slice(i, end);
      if (key === '') fail('empty key');
      segments.push(key);
      i = end;
      if (path[i] === '.') {
        i += 1;
        if (i >= path.length) fail('path ends with "."');
      }
    }
  }
  return segments;
}

export function lookupPath(value: unknown, segments: PathSegment[]): unknown {
  let current: unknown = value;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    if (typeof segment === 'number') {
      if (!Array.isArray(current)) return undefined;
      current = current[segment];
    } else {
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

export interface NormalizedResult {
  overall: number;
  raw_metrics: Record<string, unknown>;
}

export type NormalizeOutcome = { ok: true; result: NormalizedResult } | { ok: false; error: string };

/**
 * Applies a result_mapping to a parsed result.json. `overall` must resolve to a finite number.
 * The other names are copied into raw_metrics; one that resolves to nothing becomes null, since a
 * missing secondary metric should not fail an evaluation whose score is there.
 */
export function normalizeResult(resultJson: unknown, mapping: Record<string, string>): NormalizeOutcome {
  if (resultJson === null || typeof resultJson !== 'object' || Array.isArray(resultJson)) {
    return { ok: false, error: `expected a JSON object, got ${showValue(resultJson)}` };
  }
  const overallPath = mapping.overall ?? 'overall';
  const overall = lookupPath(resultJson, parseResultPath(overallPath));
  if (overall === undefined) {
    return { ok: false, error: `overall: path ${showValue(overallPath)} not found in result.json` };
  }
  if (typeof overall !== 'number' || !Number.isFinite(overall)) {
    return { ok: false, error: `overall: path ${showValue(overallPath)}: expected a number, got ${showValue(overall)}` };
  }
  const raw_metrics: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(mapping)) {
    if (name === 'overall') continue;
    raw_metrics[name] = lookupPath(resultJson, parseResultPath(path)) ?? null;
  }
  return { ok: true, result: { overall, raw_metrics } };
}

// result_mapping paths and the normalization of result.json into { overall, raw_metrics }.

import { describe, expect, it } from 'vitest';
import { normalizeResult, parseResultPath } from '../../contract/result-mapping.js';

describe('parseResultPath', () => {
  it('splits a dotted path into keys', () => {
    expect(parseResultPath('metrics.accuracy')).toEqual(['metrics', 'accuracy']);
  });

  it('reads [0] as an array index', () => {
    expect(parseResultPath('runs[0].score')).toEqual(['runs', 0, 'score']);
  });

  it('reads a double-quoted key in brackets, so keys may hold "@" and "."', () => {
    expect(parseResultPath('metrics["pass@1"]')).toEqual(['metrics', 'pass@1']);
    expect(parseResultPath('["a.b"]')).toEqual(['a.b']);
  });

  it('reads a single-quoted key in brackets, so keys may hold spaces', () => {
    expect(parseResultPath("scores['a b'][2]")).toEqual(['scores', 'a b', 2]);
  });

  it('rejects two dots in a row, pointing at the empty key', () => {
    expect(() => parseResultPath('a..b')).toThrow('invalid path "a..b": empty key at character 3');
  });

  it('rejects an unclosed bracket', () => {
    expect(() => parseResultPath('a[')).toThrow('invalid path "a[": unclosed "[" at character 2');
  });

  it('rejects an unquoted word inside brackets', () => {
    expect(() => parseResultPath('a[x]')).toThrow('invalid path "a[x]": expected a number or a quoted key inside "[ ]" at character 2');
  });

  it('rejects an empty path', () => {
    expect(() => parseResultPath('')).toThrow('expected a path like "metrics.accuracy", got an empty string');
    expect(() => parseResultPath('   ')).toThrow('expected a path like "metrics.accuracy", got an empty string');
  });

  it('rejects a trailing dot', () => {
    expect(() => parseResultPath('a.')).toThrow('invalid path "a.": path ends with "." at character 3');
    expect(() => parseResultPath('a[0].')).toThrow('invalid path "a[0].": path ends with "." at character 6');
  });

  it('rejects text glued to a closing bracket', () => {
    expect(() => parseResultPath('a[0]b')).toThrow('invalid path "a[0]b": expected "." or "[" after "]" at character 5');
  });
});

describe('normalizeResult', () => {
  it('takes overall from a nested path', () => {
    expect(normalizeResult({ metrics: { accuracy: 0.85 } }, { overall: 'metrics.accuracy' })).toEqual({
      ok: true,
      result: { overall: 0.85, raw_metrics: {} },
    });
  });

  it('takes overall from an array element', () => {
    expect(normalizeResult({ runs: [{ score: 0.5 }, { score: 0.9 }] }, { overall: 'runs[1].score' })).toEqual({
      ok: true,
      result: { overall: 0.9, raw_metrics: {} },
    });
  });

  it('takes overall from a quoted key', () => {
    expect(normalizeResult({ 'pass@1': 0.25 }, { overall: '["pass@1"]' })).toEqual({ ok: true, result: { overall: 0.25, raw_metrics: {} } });
  });

  it('fails with the path when overall is missing', () => {
    expect(normalizeResult({ accuracy: 1 }, { overall: 'overall' })).toEqual({ ok: false, error: 'overall: path "overall" not found in result.json' });
  });

  it('uses "overall" as the path when the mapping has none', () => {
    expect(normalizeResult({ overall: 0.5 }, {})).toEqual({ ok: true, result: { overall: 0.5, raw_metrics: {} } });
  });

  it('rejects a string overall, quoting it', () => {
    expect(normalizeResult({ overall: 'high' }, { overall: 'overall' })).toEqual({
      ok: false,
      error: 'overall: path "overall": expected a number, got "high"',
    });
  });

  it('rejects a numeric-looking string overall', () => {
    expect(normalizeResult({ overall: '0.8' }, { overall: 'overall' })).toEqual({ ok: false, error: 'overall: path "overall": expected a number, got "0.8"' });
  });

  it('rejects "NaN" written as a string', () => {
    expect(normalizeResult({ overall: 'NaN' }, { overall: 'overall' })).toEqual({ ok: false, error: 'overall: path "overall": expected a number, got "NaN"' });
  });

  it('rejects an infinite overall (JSON 1e999 parses to Infinity) and names it', () => {
    expect(normalizeResult(JSON.parse('{"overall": 1e999}'), { overall: 'overall' })).toEqual({
      ok: false,
      error: 'overall: path "overall": expected a number, got Infinity',
    });
  });

  it('rejects a NaN overall and names it', () => {
    expect(normalizeResult({ overall: Number.NaN }, { overall: 'overall' })).toEqual({
      ok: false,
      error: 'overall: path "overall": expected a number, got NaN',
    });
  });

  it('rejects a boolean overall', () => {
    expect(normalizeResult({ passed: true }, { overall: 'passed' })).toEqual({ ok: false, error: 'overall: path "passed": expected a number, got true' });
  });

  it('rejects an overall of null', () => {
    expect(normalizeResult({ overall: null }, { overall: 'overall' })).toEqual({ ok: false, error: 'overall: path "overall": expected a number, got null' });
  });

  it('rejects a result.json that is an array', () => {
    expect(normalizeResult([0.5], { overall: '[0]' })).toEqual({ ok: false, error: 'expected a JSON object, got [0.5]' });
  });

  it('rejects a result.json that is a bare number', () => {
    expect(normalizeResult(0.85, { overall: 'overall' })).toEqual({ ok: false, error: 'expected a JSON object, got 0.85' });
  });

  it('rejects a result.json that is null', () => {
    expect(normalizeResult(null, { overall: 'overall' })).toEqual({ ok: false, error: 'expected a JSON object, got null' });
  });

  it('copies the other mapped names into raw_metrics and makes missing ones null', () => {
    const resultJson = { accuracy: 0.8, counts: { correct: 16, total: 20 }, per_category: [{ name: 'easy', acc: 1 }] };
    const mapping = {
      overall: 'accuracy',
      correct: 'counts.correct',
      total: 'counts.total',
      easy: 'per_category[0]',
      f1: 'metrics.f1',
      hard: 'per_category[1].acc',
    };
    expect(normalizeResult(resultJson, mapping)).toEqual({
      ok: true,
      result: { overall: 0.8, raw_metrics: { correct: 16, total: 20, easy: { name: 'easy', acc: 1 }, f1: null, hard: null } },
    });
  });

  it('does not treat inherited properties as present', () => {
    expect(normalizeResult({}, { overall: 'constructor' })).toEqual({ ok: false, error: 'overall: path "constructor" not found in result.json' });
  });
});

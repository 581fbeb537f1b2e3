// The visibility query behind `br list` and the leaderboard (client/runs.ts runsQuery): each filter is
// one clause, and a filter's value is always one quoted literal, so no value can change the query.

import { describe, expect, it } from 'vitest';
import { runsQuery } from '../../client/runs.js';

type Token = { literal: string } | { word: string };

/**
 * Splits a visibility query as its SQL-like grammar reads it: quoted literals with backslash escapes,
 * words and punctuation. (The dev server keeps a doubled backslash as two characters: see
 * test/visibility-query.test.ts. For the shape of the query that makes no difference.)
 */
function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i]!;
    if (c === ' ') i++;
    else if (c === "'") {
      let value = '';
      for (i++; query[i] !== "'"; i++) {
        if (i >= query.length) throw new Error(`unterminated literal in: ${query}`);
        if (query[i] === '\\') i++;
        value += query[i];
      }
      i++;
      tokens.push({ literal: value });
    } else if ('(),='.includes(c)) tokens.push({ word: query[i++]! });
    else {
      let word = '';
      while (i < query.length && !" '(),=".includes(query[i]!)) word += query[i++];
      tokens.push({ word });
    }
  }
  return tokens;
}

/** The query with every literal replaced by a placeholder: what a value must never change. */
const shape = (query: string) => tokenize(query).map((t) => ('word' in t ? t.word : '?'));
const literals = (query: string) => tokenize(query).flatMap((t) => ('literal' in t ? [t.literal] : []));

const hostile = [
  "x' OR WorkflowType = 'suiteWorkflow",
  "x\\' OR 1=1 OR BenchRouterModel = '",
  '\\',
  "'",
  "it's",
  "a\\\\' ) OR (WorkflowType != '",
  'spaces and = signs, (parens)',
  'ünïcødé 模型',
];

describe('runsQuery', () => {
  it('lists only run workflows without filters', () => {
    expect(runsQuery()).toBe("WorkflowType = 'runWorkflow' AND ExecutionStatus != 'ContinuedAsNew'");
  });

  it('adds one clause per filter on the search attributes, joined with AND', () => {
    expect(runsQuery({ model: 'gpt-4o', benchmark: 'arith', status: 'PARTIAL' })).toBe(
      "WorkflowType = 'runWorkflow' AND ExecutionStatus != 'ContinuedAsNew' AND BenchRouterModel = 'gpt-4o' AND BenchRouterBenchmark = 'arith' AND BenchRouterStatus = 'PARTIAL'",
    );
    expect(runsQuery({ statuses: ['COMPLETED', 'PARTIAL'] })).toBe(
      "WorkflowType = 'runWorkflow' AND ExecutionStatus != 'ContinuedAsNew' AND BenchRouterStatus IN ('COMPLETED', 'PARTIAL')",
    );
  });

  it('escapes quotes and backslashes inside a value', () => {
    expect(runsQuery({ model: "it's" })).toBe("WorkflowType = 'runWorkflow' AND ExecutionStatus != 'ContinuedAsNew' AND BenchRouterModel = 'it\\'s'");
    expect(runsQuery({ model: 'a\\b' })).toBe("WorkflowType = 'runWorkflow' AND ExecutionStatus != 'ContinuedAsNew' AND BenchRouterModel = 'a\\\\b'");
  });

  it('keeps the shape of the query whatever the values, each value read back exactly as given', () => {
    const benign = { model: 'm', benchmark: 'b', status: 's', statuses: ['c', 'p'] };
    for (const value of hostile) {
      const query = runsQuery({ model: value, benchmark: value, status: value, statuses: [value, value] });
      expect(shape(query), value).toEqual(shape(runsQuery(benign)));
      expect(literals(query), value).toEqual(['runWorkflow', 'ContinuedAsNew', value, value, value, value, value]);
    }
  });

  it('has a shape that tells filters apart, so the check above would see an injected clause', () => {
    expect(shape(runsQuery({ model: 'm' }))).not.toEqual(shape(runsQuery({ model: 'm', benchmark: 'b' })));
    // Unescaped, the first hostile value would add a clause: the tokenizer notices.
    expect(shape(`WorkflowType = 'runWorkflow' AND BenchRouterModel = '${hostile[0]}'`)).not.toEqual(shape(runsQuery({ model: 'm' })));
  });

  it('skips empty filters', () => {
    expect(runsQuery({ model: '', benchmark: undefined, statuses: [] })).toBe("WorkflowType = 'runWorkflow' AND ExecutionStatus != 'ContinuedAsNew'");
  });
});

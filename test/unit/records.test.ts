// records.jsonl validation (contract/records.ts) as a host reads the file (activities/records-file.ts): bad
// lines named by line number and field, scores normalized, and the summary counted exactly.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRecordsFile, summarizeRecordsFile } from '../../activities/records-file.js';
import { BAD_LINE_EXAMPLES, parseRecordLine, recordBySchema, type BadRecordLine, type InstanceRecord, type RecordsSummary } from '../../contract/records.js';

const line = (value: unknown) => JSON.stringify(value);
const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-records-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let written = 0;

/** `text` as a task's records.jsonl, in a results folder of its own. */
function resultsDirWith(text: string): string {
  const dir = path.join(scratch, String(++written));
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'records.jsonl'), text);
  return dir;
}

/** The records and bad lines a host reads from `text`. */
async function parseRecords(text: string): Promise<{ records: InstanceRecord[]; badLines: BadRecordLine[] }> {
  const records: InstanceRecord[] = [];
  const badLines: BadRecordLine[] = [];
  await readRecordsFile(resultsDirWith(text), (outcome) => {
    if ('record' in outcome) records.push(outcome.record);
    else badLines.push({ line: Number(/^line (\d+)/.exec(outcome.problem)![1]), problem: outcome.problem });
  });
  return { records, badLines };
}

async function summarizeRecords(text: string): Promise<RecordsSummary> {
  return (await summarizeRecordsFile(resultsDirWith(text)))!.summary;
}

describe('records.jsonl validation', () => {
  it('reports two bad lines by line number and field, and counts and summarizes the rest exactly', async () => {
    const text = [
      line({
        index: 0,
        origin_query: 'q0',
        prompt: 'p0',
        prediction: '4',
        ground_truth: '4',
        score: 1,
        prompt_tokens: 10,
        completion_tokens: 2,
        cost: 0.001,
        raw_output: '4',
      }),
      line({ index: 1, prediction: '5', ground_truth: '6', score: 0, prompt_tokens: 12, completion_tokens: 3, cost: 0.002 }),
      '',
      '{"index": 2, "score": 1, "prompt_tokens": 11', // cut off: not JSON
      line({ index: 3, score: 0.5, prompt_tokens: 9, completion_tokens: null, cost: null }),
      line({ index: 'q-4', score: true, prompt_tokens: 8, completion_tokens: 1, cost: 0.004 }),
      line({ index: 5, score: 'high', prompt_tokens: 7 }),
      line({ index: 6, score: false, completion_tokens: 4 }),
      '',
    ].join('\n');

    const parsed = await parseRecords(text);

    expect(parsed.badLines).toEqual([
      { line: 4, problem: 'line 4: not valid JSON' },
      { line: 7, problem: 'line 7: score: expected a number in [0, 1] or a boolean, got "high"' },
    ]);
    expect(parsed.records.map((r) => r.index)).toEqual([0, 1, 3, 'q-4', 6]);
    expect(await summarizeRecords(text)).toEqual({
      count: 5,
      badLines: 2,
      badLineExamples: ['line 4: not valid JSON', 'line 7: score: expected a number in [0, 1] or a boolean, got "high"'],
      meanScore: 0.5, // (1 + 0 + 0.5 + 1 + 0) / 5
      scoreSquares: 2.25, // 1 + 0 + 0.25 + 1 + 0
      promptTokens: { total: 39, missing: 1 },
      completionTokens: { total: 10, missing: 1 },
      cost: { total: 0.007, missing: 2 },
    });
  });

  it('turns boolean scores into 1 and 0 and keeps fields beyond the contract', async () => {
    const { records, badLines } = await parseRecords(`${line({ index: 'a', score: true, judge: { verdict: 'ok' } })}\n${line({ index: 'b', score: false })}`);
    expect(badLines).toEqual([]);
    expect(records[0]).toMatchObject({ index: 'a', score: 1, judge: { verdict: 'ok' }, prompt_tokens: null, completion_tokens: null, cost: null });
    expect(records[1]!.score).toBe(0);
  });

  it('reads CRLF line endings and a byte-order mark', async () => {
    const { records, badLines } = await parseRecords(`\uFEFF${line({ index: 0, score: 1 })}\r\n${line({ index: 1, score: 0 })}\r\n`);
    expect(badLines).toEqual([]);
    expect(records).toHaveLength(2);
  });

  it('names every bad field of a line, and the value it got', async () => {
    const { badLines } = await parseRecords(line({ score: null, prompt_tokens: -3, cost: 'free' }));
    expect(badLines).toEqual([
      {
        line: 1,
        problem:
          'line 1: index: expected a number or a non-empty string, got nothing; score: expected a number in [0, 1] or a boolean, got null; prompt_tokens: expected a non-negative number or null, got -3; cost: expected a non-negative number or null, got "free"',
      },
    ]);
  });

  it('rejects scores outside [0, 1], overflowing numbers and lines that are not objects', async () => {
    const { records, badLines } = await parseRecords(
      [line({ index: 0, score: 1.5 }), '{"index": 1, "score": 1e999}', '[1, 2]', '"text"', line({ index: 2, score: 0.25 })].join('\n'),
    );
    expect(records.map((r) => r.score)).toEqual([0.25]);
    expect(badLines.map((b) => b.problem)).toEqual([
      'line 1: score: expected a number in [0, 1] or a boolean, got 1.5',
      'line 2: score: expected a number in [0, 1] or a boolean, got Infinity',
      'line 3: expected a JSON object, got [1,2]',
      'line 4: expected a JSON object, got "text"',
    ]);
  });

  it(`keeps the first ${BAD_LINE_EXAMPLES} problems as examples and counts all bad lines`, async () => {
    const text = Array.from({ length: 8 }, (_, i) => `not json ${i}`).join('\n');
    const summary = await summarizeRecords(text);
    expect(summary.badLines).toBe(8);
    expect(summary.badLineExamples).toEqual([1, 2, 3, 4, 5].map((n) => `line ${n}: not valid JSON`));
    expect(summary.count).toBe(0);
    expect(summary.meanScore).toBeNull();
  });

  it('judges every line as the schema does, field order included, on the quick path for plain records too', async () => {
    const indexes = [0, 7, 2.5, -1, Infinity, '', 'q-1', null, true];
    const scores = [0, 1, 0.5, -0.1, 1.5, Infinity, true, false, '1', null, undefined];
    const counts = [undefined, null, 0, 12, -3, Infinity, '5'];
    let compared = 0;
    for (const index of indexes)
      for (const score of scores)
        for (const count of counts) {
          const fields = { extra: 'x', score, index, ...(count === undefined ? {} : { prompt_tokens: count, cost: count }) };
          // An overflowing number is written as 1e999, which JSON.parse reads as Infinity.
          const text = JSON.stringify(fields, (_key, value: unknown) => (value === Infinity ? '<inf>' : value)).replace(/"<inf>"/g, '1e999');
          const quick = parseRecordLine(text, 3);
          const reference = recordBySchema(JSON.parse(text) as Record<string, unknown>, 3);
          expect(quick, text).toEqual(reference);
          if (quick && 'record' in quick && 'record' in reference) expect(Object.keys(quick.record), text).toEqual(Object.keys(reference.record));
          compared += 1;
        }
    expect(compared).toBe(indexes.length * scores.length * counts.length);
  });
});

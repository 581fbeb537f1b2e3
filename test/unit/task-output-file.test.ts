// Reading what a task wrote: FIFOs, links and oversized files are refused by name and never block,
// and records.jsonl is summarized line by line. Real files, FIFOs and links in a temp directory.

import { execFileSync } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { RECORD_LINE_CAP_BYTES, summarizeRecordsFile } from '../../activities/records-file.js';
import { linesOfTaskOutput, openTaskOutputFile, readCapped, readTaskOutputText } from '../../activities/task-output-file.js';
import { BAD_LINE_EXAMPLES } from '../../contract/records.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'br-task-output-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let results: string;
let n = 0;
beforeEach(() => {
  results = path.join(scratch, `job-${n++}`, 'results');
  mkdirSync(results, { recursive: true });
});

const record = (index: number, score: number) => JSON.stringify({ index, score, prompt_tokens: 10, completion_tokens: 2, cost: 0.001 });

describe('openTaskOutputFile', () => {
  it('refuses a FIFO at once, naming it, without waiting for a writer', () => {
    execFileSync('mkfifo', [path.join(results, 'result.json')]);
    const started = Date.now();
    expect(readTaskOutputText(results, 'result.json', 1024)).toEqual({ kind: 'refused', problem: 'result.json is a FIFO, not a regular file' });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a symbolic link to a host file and never reads the file', () => {
    const host = path.join(scratch, 'host-secret.json');
    writeFileSync(host, '{"overall": 0.99, "host": "marker-7f3a"}');
    symlinkSync(host, path.join(results, 'result.json'));
    const read = readTaskOutputText(results, 'result.json', 1024);
    expect(read).toEqual({ kind: 'refused', problem: 'result.json is a symbolic link; links are not followed' });
    expect(JSON.stringify(read)).not.toContain('marker-7f3a');
  });

  it("refuses a relative link to a sibling job's result", () => {
    const sibling = path.join(path.dirname(path.dirname(results)), 'sibling', 'results');
    mkdirSync(sibling, { recursive: true });
    writeFileSync(path.join(sibling, 'result.json'), '{"overall": 1}');
    symlinkSync('../../sibling/results/result.json', path.join(results, 'result.json'));
    expect(readTaskOutputText(results, 'result.json', 1024)).toMatchObject({
      kind: 'refused',
      problem: 'result.json is a symbolic link; links are not followed',
    });
  });

  it('refuses a results directory that is itself a link', () => {
    const real = path.join(scratch, 'elsewhere');
    mkdirSync(real, { recursive: true });
    writeFileSync(path.join(real, 'result.json'), '{"overall": 1}');
    const linked = path.join(path.dirname(results), 'linked-results');
    symlinkSync(real, linked);
    expect(openTaskOutputFile(linked, 'result.json')).toEqual({ kind: 'refused', problem: 'linked-results/ is a symbolic link; links are not followed' });
  });

  it('refuses a directory where a file belongs, and reports a missing file as missing', () => {
    mkdirSync(path.join(results, 'result.json'));
    expect(openTaskOutputFile(results, 'result.json')).toEqual({ kind: 'refused', problem: 'result.json is a directory, not a regular file' });
    expect(openTaskOutputFile(results, 'records.jsonl')).toEqual({ kind: 'missing' });
  });

  it('reads a regular file, and refuses one over the cap by its size', () => {
    writeFileSync(path.join(results, 'result.json'), '{"overall": 0.5}');
    expect(readTaskOutputText(results, 'result.json', 1024)).toEqual({ kind: 'text', text: '{"overall": 0.5}' });
    expect(readTaskOutputText(results, 'result.json', 8)).toEqual({ kind: 'refused', problem: 'result.json is 16 bytes; expected at most 8' });
  });

  it('reads a file that grew after its size was taken, up to the cap and not a byte past it', () => {
    // A /proc file says size 0 and has content: a file that grew after fstat.
    const whole = readFileSync('/proc/self/environ');
    expect(whole.length).toBeGreaterThan(100);
    const fd = openSync('/proc/self/environ', 'r');
    try {
      expect(fstatSync(fd).size).toBe(0);
      expect(readCapped(fd, 0, 1 << 20)?.toString()).toBe(whole.toString());
      expect(readCapped(fd, 0, 50)).toBeUndefined();
      expect(readCapped(fd, 0, whole.length)?.length).toBe(whole.length);
      expect(readCapped(fd, 0, whole.length - 1)).toBeUndefined();
    } finally {
      closeSync(fd);
    }
  });
});

describe('records.jsonl read from a task', () => {
  it('is summarized line by line with the same figures as parsing it whole', async () => {
    writeFileSync(path.join(results, 'records.jsonl'), `\uFEFF${record(0, 1)}\r\n{broken\n\n${record(1, 0)}\n${record(2, 0.5)}`);
    expect(await summarizeRecordsFile(results)).toEqual({
      summary: {
        count: 3,
        badLines: 1,
        badLineExamples: ['line 2: not valid JSON'],
        meanScore: 0.5,
        scoreSquares: 1.25, // 1 + 0 + 0.25
        promptTokens: { total: 30, missing: 0 },
        completionTokens: { total: 6, missing: 0 },
        cost: { total: 0.003, missing: 0 },
      },
    });
  });

  it('reports a FIFO records.jsonl as refused instead of blocking', async () => {
    execFileSync('mkfifo', [path.join(results, 'records.jsonl')]);
    const summary = await summarizeRecordsFile(results);
    expect(summary?.refused).toBe('records.jsonl is a FIFO, not a regular file');
    expect(summary?.summary).toMatchObject({ count: 0, badLines: 1, badLineExamples: ['records.jsonl is a FIFO, not a regular file; not read'] });
  });

  it('reports a line longer than the cap as bad without buffering it, and reads on past it', async () => {
    const fd = openSync(path.join(results, 'records.jsonl'), 'w');
    writeSync(fd, `${record(0, 1)}\n`);
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    for (let i = 0; i < 3; i++) writeSync(fd, chunk); // one 3 MiB line
    writeSync(fd, `\n${record(1, 0)}\n`);
    closeSync(fd);
    const summary = await summarizeRecordsFile(results);
    expect(summary?.summary).toMatchObject({ count: 2, badLines: 1, badLineExamples: [`line 2: longer than ${RECORD_LINE_CAP_BYTES} bytes; not read`] });
  });

  it(`keeps ${BAD_LINE_EXAMPLES} examples however many lines are bad`, async () => {
    writeFileSync(path.join(results, 'records.jsonl'), Array.from({ length: 5000 }, () => '{').join('\n'));
    const summary = await summarizeRecordsFile(results);
    expect(summary?.summary.badLines).toBe(5000);
    expect(summary?.summary.badLineExamples).toHaveLength(BAD_LINE_EXAMPLES);
  });

  it('streams lines split across read chunks exactly', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `line-${i}-${'y'.repeat(i % 97)}`);
    writeFileSync(path.join(results, 'records.jsonl'), lines.join('\n'));
    const opened = openTaskOutputFile(results, 'records.jsonl');
    if (opened.kind !== 'opened') throw new Error(`expected the file to open, got ${JSON.stringify(opened)}`);
    const seen: string[] = [];
    for await (const { text } of linesOfTaskOutput(opened.fd, 1024, Number.MAX_SAFE_INTEGER)) seen.push(text ?? '<too long>');
    expect(seen).toEqual(lines);
  });
});

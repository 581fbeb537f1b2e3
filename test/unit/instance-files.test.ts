// An instance's own files (a record's `artifacts`, or harbor's `trial`): the path checked before any read,
// the row's link to them, the types they are served as (never HTML), how a page shows one (JSON
// pretty-printed, text escaped, bytes offered for download), and this host's reads under a prefix, with
// links, missing files and large ones. Real files in a temp directory; no Temporal.

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { InstanceRecord } from '../../contract/records.js';
import { instanceRow, recordArtifacts, resultsPath } from '../../runs/instance-list.js';
import type { JobResult } from '../../runs/run-spec.js';
import type { ApiContext } from '../../api/api-context.js';
import { ApiError } from '../../api/api-error.js';
import { filePage, filesLink, filesPage, fileView, instancesPage } from '../../api/instance-pages.js';
import { isText, listResultFiles, readResultFile, resultFileHeaders, resultFileType, resultsPathOr400 } from '../../api/result-files.js';

const record = (extra: Partial<InstanceRecord> = {}): InstanceRecord => ({
  index: 'i-1',
  score: 1,
  prompt_tokens: null,
  completion_tokens: null,
  cost: null,
  ...extra,
});
const job: JobResult = { jobId: 'br-run.000-files', task: 'files', status: 'SUCCEEDED' } as unknown as JobResult;

describe('resultsPath', () => {
  it('makes a path inside the results canonical', () => {
    expect(resultsPath('instances/3')).toEqual({ path: 'instances/3' });
    expect(resultsPath('./instances//3/')).toEqual({ path: 'instances/3' });
    expect(resultsPath('harbor-jobs/run/t__a b')).toEqual({ path: 'harbor-jobs/run/t__a b' });
    expect(resultsPath('')).toEqual({ path: '' });
    expect(resultsPath('a/..b/c..')).toEqual({ path: 'a/..b/c..' });
  });

  it('refuses a way out: `..`, an absolute path, a drive, a backslash, a control character, a very long path', () => {
    for (const bad of ['..', '../x', 'a/../../x', 'a/..', '/etc/passwd', '//host/share', 'C:/x', 'a\\..\\x', 'a\u0000b', 'a\nb', 'x'.repeat(1025)])
      expect(resultsPath(bad), JSON.stringify(bad)).toHaveProperty('problem');
  });

  it('is a 400 naming the query field at the API', () => {
    expect(resultsPathOr400('a//b', 'query.path')).toBe('a/b');
    let error: unknown;
    try {
      resultsPathOr400('../../etc/passwd', 'query.path');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, field: 'query.path', message: expect.stringMatching(/^path: expected a path inside the job's results/) });
  });
});

describe("a record's files", () => {
  it("are named by `artifacts`, else by harbor's `trial`; a path that leaves the results names none", () => {
    expect(recordArtifacts(record({ artifacts: 'instances/1/' }))).toBe('instances/1');
    expect(recordArtifacts(record({ trial: 'harbor-jobs/run/t__x' }))).toBe('harbor-jobs/run/t__x');
    expect(recordArtifacts(record({ artifacts: 'mine', trial: 'harbor' }))).toBe('mine');
    expect(recordArtifacts(record({ artifacts: { not: 'a path' }, trial: 'harbor' }))).toBe('harbor');
    for (const none of [{}, { artifacts: '../../etc' }, { artifacts: '/etc' }, { artifacts: '.' }, { artifacts: '  ' }, { artifacts: 3 }])
      expect(recordArtifacts(record(none)), JSON.stringify(none)).toBeUndefined();
  });

  it("are on the instance's row only when named", () => {
    expect(instanceRow({ jobId: 'j', task: 't' }, record({ artifacts: 'instances/1' })).artifacts).toBe('instances/1');
    expect(instanceRow({ jobId: 'j', task: 't' }, record())).not.toHaveProperty('artifacts');
  });

  it('are linked from the instances page, the path escaped and encoded, and a row without files shows none', () => {
    const base = instanceRow({ jobId: job.jobId, task: 'files' }, record());
    const named = { ...base, id: 'i-2', artifacts: 'a b/"><script>x</script>' };
    const text = instancesPage('br-run', [job], { failed: false, offset: 0, limit: 50 }, { rows: [base, named], total: 2 });
    expect(text.match(/class="files"/g)).toHaveLength(1);
    expect(text).toContain(`href="${filesLink('br-run', job.jobId, named.artifacts).replace(/&/g, '&amp;')}"`);
    expect(filesLink('br-run', job.jobId, 'a b/x')).toBe('/ui/runs/br-run/jobs/br-run.000-files/files?prefix=a%20b%2Fx');
    expect(text).not.toContain('<script>x');
    expect(text).toContain('<th>Files</th>');
  });
});

describe('how a result file is served and shown', () => {
  const bytes = (text: string) => Buffer.from(text, 'utf8');

  it('is JSON for .json, plain text for any other text, HTML and SVG included, and bytes otherwise', () => {
    expect(resultFileType('r/result.json', bytes('{"a": 1}'))).toBe('application/json; charset=utf-8');
    expect(resultFileType('r/trial.log', bytes('ok\n'))).toBe('text/plain; charset=utf-8');
    expect(resultFileType('page.html', bytes('<script>alert(1)</script>'))).toBe('text/plain; charset=utf-8');
    expect(resultFileType('p.svg', bytes('<svg onload="x()"/>'))).toBe('text/plain; charset=utf-8');
    expect(resultFileType('blob.json', Buffer.from([0x7b, 0, 0x7d]))).toBe('application/octet-stream');
    expect(isText(Buffer.from([0xc3, 0x28]))).toBe(false);
    expect(isText(bytes('é ✓'))).toBe(true);
  });

  it('is never sniffed nor run, and its name cannot break the header', () => {
    const headers = resultFileHeaders('dir/we"ird\r\nname\'s (1).html', bytes('<b>x</b>'));
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['content-security-policy']).toContain('sandbox');
    expect(headers['content-disposition']).toBe("inline; filename*=UTF-8''we%22ird%0D%0Aname%27s%20%281%29.html");
    expect(resultFileHeaders('blob.bin', Buffer.from([0, 1]))['content-disposition']).toMatch(/^attachment; /);
  });

  it('is JSON pretty-printed, other text as it is, bad JSON as text with a note, bytes not at all', () => {
    expect(fileView('a.json', bytes('{"a":[1,2]}'))).toEqual({ kind: 'json', text: '{\n  "a": [\n    1,\n    2\n  ]\n}' });
    expect(fileView('a.log', bytes('{"a":1}'))).toEqual({ kind: 'text', text: '{"a":1}' });
    expect(fileView('a.json', bytes('{"a":'))).toMatchObject({ kind: 'text', note: expect.stringMatching(/^not valid JSON/) });
    expect(fileView('a.bin', Buffer.from([1, 0, 2]))).toEqual({ kind: 'binary', bytes: 3 });
  });

  it('escapes what a file holds and its name, and folds a long one', () => {
    const page = filePage('br-run', job, 'i/<b>.log', fileView('i/<b>.log', bytes(`<script>alert("x")</script>\n${'line\n'.repeat(200)}`)));
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(page).toContain('<details class="fold">');
    expect(page).toContain(`class="folder" href="${filesLink('br-run', job.jobId, 'i')}"`);
    const listing = filesPage('br-run', job, 'i', [{ file: 'i/<img src=x>.txt', bytes: 1234 }]);
    expect(listing).not.toContain('<img');
    expect(listing).toContain('1,234 bytes');
    expect(listing).toContain('/runs/br-run/jobs/br-run.000-files/file?path=i%2F%3Cimg%20src%3Dx%3E.txt');
  });
});

describe("a job's results on this host", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'br-instance-files-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const context = { settings: { artifactsRoot: root } } as unknown as ApiContext;
  const results = path.join(root, 'br-run', job.jobId, 'results');
  mkdirSync(path.join(results, 'instances', '1', 'agent'), { recursive: true });
  mkdirSync(path.join(results, 'instances', '10'), { recursive: true });
  writeFileSync(path.join(results, 'records.jsonl'), '{}\n');
  writeFileSync(path.join(results, 'instances', '1', 'result.json'), '{"reward": 1}');
  writeFileSync(path.join(results, 'instances', '1', 'agent', 'log.txt'), 'x'.repeat(1_300_000));
  writeFileSync(path.join(results, 'instances', '10', 'result.json'), '{}');
  writeFileSync(path.join(root, 'secret.txt'), 'OPENAI_API_KEY=marker\n');
  symlinkSync(path.join(root, 'secret.txt'), path.join(results, 'instances', '1', 'leak.txt'));
  symlinkSync(root, path.join(results, 'instances', '1', 'up'));

  const refusal = async (read: Promise<unknown>) => {
    try {
      await read;
    } catch (error) {
      if (error instanceof ApiError) return { status: error.status, message: error.message };
      throw error;
    }
    throw new Error('expected the read to be refused');
  };

  it("lists a folder's files (not a sibling's that shares its name's start), links left out, relative to results/", async () => {
    expect(await listResultFiles(context, 'br-run', job, 'instances/1')).toEqual([
      { file: 'instances/1/agent/log.txt', bytes: 1_300_000 },
      { file: 'instances/1/result.json', bytes: 13 },
    ]);
    expect((await listResultFiles(context, 'br-run', job, 'instances/1/result.json')).map((f) => f.file)).toEqual(['instances/1/result.json']);
    expect((await listResultFiles(context, 'br-run', job, '')).map((f) => f.file)).toContain('records.jsonl');
    expect(await refusal(listResultFiles(context, 'br-run', { ...job, jobId: 'br-run.001-none' }, ''))).toMatchObject({ status: 404 });
  });

  it('reads a file whole across pages, and refuses a link, a folder, a missing file and one past the limit', async () => {
    expect((await readResultFile(context, 'br-run', job, 'instances/1/result.json')).toString()).toBe('{"reward": 1}');
    expect((await readResultFile(context, 'br-run', job, 'instances/1/agent/log.txt')).length).toBe(1_300_000);
    expect(await refusal(readResultFile(context, 'br-run', job, 'instances/1/leak.txt'))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/link/),
    });
    expect(await refusal(readResultFile(context, 'br-run', job, 'instances/1/up/secret.txt'))).toMatchObject({ status: 400 });
    expect(await refusal(readResultFile(context, 'br-run', job, 'instances/1'))).toMatchObject({ status: 400, message: expect.stringMatching(/directory/) });
    expect(await refusal(readResultFile(context, 'br-run', job, 'instances/1/none.txt'))).toMatchObject({ status: 404 });
    expect(await refusal(readResultFile(context, 'br-run', job, 'instances/1/agent/log.txt', 1000))).toMatchObject({ status: 413 });
  });
});

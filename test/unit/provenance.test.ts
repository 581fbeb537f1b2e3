// A run's provenance (runs/provenance.ts): built from the pinned spec and what the jobs reported, free of
// secrets, hashed over what makes scores comparable, and compared field by field for `br compare`.

import { describe, expect, it } from 'vitest';
import { gitCommit } from '../../config/benchrouter-version.js';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { datasetDigest } from '../../activities/dataset-digest.js';
import { provenanceNotes } from '../../cli/commands/compare.js';
import os from 'node:os';
import path from 'node:path';
import { runOptions } from '../../runs/run-options.js';
import { emptyHarvest, harvestProvenance, provenanceDifferences, provenanceEntries, provenanceHash, provenanceOf, REDACTED } from '../../runs/provenance.js';
import type { RunSpec } from '../../runs/run-spec.js';

const IMG_A = `sha256:${'a'.repeat(64)}`;
const IMG_B = `sha256:${'b'.repeat(64)}`;

const spec = (options: Parameters<typeof runOptions>[0], resolved: RunSpec['resolved'] = { prices: {} }) => ({
  benchmark: { name: 'arith', dir: '/b/arith', digest: 'd'.repeat(64) },
  options: runOptions(options),
  resolved,
  benchrouter: { version: '0.1.0', commit: 'c'.repeat(40) },
});

const harvest = harvestProvenance(emptyHarvest(), [
  { task: 'multiplication', imageId: IMG_A, dataset: { dir: '/srv/data', digest: 'sha256:01' } },
  { task: 'addition', imageId: IMG_A, dataset: { dir: '/srv/data', digest: 'sha256:01' } },
  { task: 'addition', imageId: IMG_A },
]);

describe('provenanceOf', () => {
  it('pins benchmark digest, image ids per task, datasets, generation, judge, seeds and version', () => {
    const options = {
      model: 'm',
      endpoint: 'http://m/v1',
      repeats: 3,
      seed: 7,
      gen: { temperature: 0 },
      maxTokens: 256,
      thinking: false,
      truncationTokens: 4096,
      tokenizer: '/models/tokenizer.json',
      judgeModel: 'judge-1',
      judgeEndpoint: 'http://j/v1',
    };
    expect(provenanceOf(spec(options, { prices: {}, tokenizer: { path: '/models/tokenizer.json', sha256: 'e'.repeat(64) } }), harvest)).toEqual({
      benchrouter: { version: '0.1.0', commit: 'c'.repeat(40) },
      benchmark: { name: 'arith', digest: 'd'.repeat(64) },
      images: { addition: [IMG_A], multiplication: [IMG_A] },
      datasets: [{ dir: '/srv/data', digest: 'sha256:01' }],
      gateway: true,
      generation: { set: { temperature: 0 }, maxTokens: 256, thinking: false, truncation: { maxTokens: 4096, tokenizerSha256: 'e'.repeat(64) } },
      judge: { model: 'judge-1' },
      seeds: [7, 8, 9],
    });
  });

  it('without the gateway has no generation (none is applied), and one unseeded repeat has no seeds', () => {
    expect(provenanceOf(spec({ model: 'm', endpoint: 'http://m/v1', gateway: false, gen: { temperature: 0 } }))).toEqual({
      benchrouter: { version: '0.1.0', commit: 'c'.repeat(40) },
      benchmark: { name: 'arith', digest: 'd'.repeat(64) },
      images: {},
      gateway: false,
      seeds: [],
    });
  });

  it('holds no secret: no key variable, no endpoint, and generation fields named like credentials are redacted', () => {
    const secret = 'sk-live-0123456789';
    const p = provenanceOf(
      spec({
        model: 'm',
        endpoint: `https://user:${secret}@m.example/v1`,
        apiKeyEnv: 'OPENAI_API_KEY',
        judgeModel: 'j',
        judgeEndpoint: `https://j.example/v1?key=${secret}`,
        judgeApiKeyEnv: 'JUDGE_KEY',
        gen: { temperature: 0, api_key: secret, extra_headers: { Authorization: `Bearer ${secret}` }, user_token: secret },
      }),
      harvest,
    );
    const text = JSON.stringify(p);
    for (const forbidden of [secret, 'OPENAI_API_KEY', 'JUDGE_KEY', 'm.example', 'j.example']) expect(text).not.toContain(forbidden);
    expect(p.generation?.set).toEqual({ temperature: 0, api_key: REDACTED, extra_headers: { Authorization: REDACTED }, user_token: REDACTED });
  });

  it('shows settings that only mention tokens, and --strip-thinking, which change what is measured', () => {
    const p = provenanceOf(
      spec({ model: 'm', endpoint: 'http://m/v1', stripThinking: true, gen: { max_completion_tokens: 64, thinking: { budget_tokens: 512 }, apiKey: 'x' } }),
      harvest,
    );
    expect(p.generation).toMatchObject({ set: { max_completion_tokens: 64, thinking: { budget_tokens: 512 }, apiKey: REDACTED }, stripThinking: true });
    expect(provenanceHash(p)).not.toBe(
      provenanceHash(
        provenanceOf(spec({ model: 'm', endpoint: 'http://m/v1', gen: { max_completion_tokens: 64, thinking: { budget_tokens: 512 } } }), harvest),
      ),
    );
  });
});

describe('provenanceHash', () => {
  const base = provenanceOf(spec({ model: 'm', endpoint: 'http://m/v1', gen: { temperature: 0 } }), harvest);

  it('is 16 hex digits, the same for equal provenance whatever the key order, seeds or version', () => {
    expect(provenanceHash(base)).toMatch(/^[0-9a-f]{16}$/);
    const reordered = { ...base, images: { multiplication: [IMG_A], addition: [IMG_A] }, seeds: [1, 2], benchrouter: { version: '9.9.9' } };
    expect(provenanceHash(reordered)).toBe(provenanceHash(base));
  });

  it('differs with the benchmark digest, an image, the dataset, a generation setting, the judge or the gateway', () => {
    const variants = [
      { ...base, benchmark: { ...base.benchmark, digest: 'f'.repeat(64) } },
      { ...base, images: { ...base.images, addition: [IMG_B] } },
      { ...base, datasets: [{ dir: '/srv/data', digest: 'sha256:02' }] },
      { ...base, generation: { set: { temperature: 0.7 } } },
      { ...base, judge: { model: 'j' } },
      { ...base, gateway: false },
    ];
    const hashes = new Set([base, ...variants].map(provenanceHash));
    expect(hashes.size).toBe(variants.length + 1);
  });
});

describe('provenanceDifferences', () => {
  it('names each differing field with both values, and nothing for equal provenance', () => {
    const a = provenanceOf(spec({ model: 'm', endpoint: 'http://m/v1', gen: { temperature: 0 } }), harvest);
    const b = {
      ...provenanceOf(spec({ model: 'm', endpoint: 'http://m/v1', gen: { temperature: 0.7 }, seed: 3 }), harvest),
      images: { addition: [IMG_B], multiplication: [IMG_A] },
    };
    expect(provenanceDifferences(a, a)).toEqual([]);
    expect(provenanceDifferences(a, b)).toEqual([
      `image of task addition differs: sha256:aaaaaaaaaaaa… vs sha256:bbbbbbbbbbbb…`,
      'generation differs: temperature 0 vs 0.7',
      'seeds differ: none vs 3',
    ]);
  });
});

describe('provenanceEntries', () => {
  it('lists what br results and the run page show, a line each', () => {
    const p = provenanceOf(spec({ model: 'm', endpoint: 'http://m/v1', gen: { temperature: 0 } }), harvest);
    expect(provenanceEntries(p)).toEqual([
      ['benchmark', `arith ${'d'.repeat(64)}`],
      ['image addition', IMG_A],
      ['image multiplication', IMG_A],
      ['dataset', '/srv/data sha256:01'],
      ['gateway', 'on'],
      ['generation', 'temperature=0'],
      ['judge', 'none'],
      ['seeds', 'none'],
      ['benchrouter', `0.1.0 (${'c'.repeat(40)})`],
    ]);
  });
});

describe('gitCommit', () => {
  it("reads HEAD through a worktree's .git file, its commondir and packed refs", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'br-git-'));
    const common = path.join(root, 'main.git');
    const worktree = path.join(common, 'worktrees', 'wt');
    mkdirSync(worktree, { recursive: true });
    mkdirSync(path.join(root, 'wt'));
    writeFileSync(path.join(root, 'wt', '.git'), `gitdir: ${worktree}\n`);
    writeFileSync(path.join(worktree, 'HEAD'), 'ref: refs/heads/provenance\n');
    writeFileSync(path.join(worktree, 'commondir'), '../..\n');
    writeFileSync(path.join(common, 'packed-refs'), `# pack-refs\n${'1'.repeat(40)} refs/heads/main\n${'2'.repeat(40)} refs/heads/provenance\n`);
    expect(gitCommit(path.join(root, 'wt'))).toBe('2'.repeat(40));
    mkdirSync(path.join(common, 'refs', 'heads'), { recursive: true });
    writeFileSync(path.join(common, 'refs', 'heads', 'provenance'), `${'3'.repeat(40)}\n`);
    expect(gitCommit(path.join(root, 'wt'))).toBe('3'.repeat(40));
    expect(gitCommit(path.join(root, 'nowhere'))).toBeUndefined();
  });
});

describe('datasetDigest', () => {
  it("is sha256 over the listing's paths, sizes and mtimes: the same until a file changes", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'br-dataset-'));
    mkdirSync(path.join(dir, 'sub'));
    writeFileSync(path.join(dir, 'b.jsonl'), 'bb');
    writeFileSync(path.join(dir, 'sub', 'a.jsonl'), 'a');
    utimesSync(path.join(dir, 'b.jsonl'), 1000, 1000);
    utimesSync(path.join(dir, 'sub', 'a.jsonl'), 2000, 2000);
    const listing = `b.jsonl\0${2}\0${1000n * 1_000_000_000n}\nsub/a.jsonl\0${1}\0${2000n * 1_000_000_000n}\n`;
    expect(datasetDigest(dir)).toBe(`sha256:${createHash('sha256').update(listing).digest('hex')}`);
    const before = datasetDigest(dir);
    expect(datasetDigest(dir)).toBe(before);
    writeFileSync(path.join(dir, 'sub', 'a.jsonl'), 'A');
    expect(datasetDigest(dir)).not.toBe(before);
  });
});

describe('br compare', () => {
  it("names how each run's provenance differs from the first run's, or that it does not, or that a run kept none", () => {
    const a = provenanceOf(spec({ model: 'm', endpoint: 'http://m/v1', gen: { temperature: 0 } }), harvest);
    const b = provenanceOf(spec({ model: 'm', endpoint: 'http://m/v1', gen: { temperature: 0.7 } }), harvest);
    expect(provenanceNotes([{ runId: 'A', provenance: a }, { runId: 'B', provenance: b }, { runId: 'C', provenance: a }, { runId: 'D' }])).toEqual([
      'provenance: A vs B: generation differs: temperature 0 vs 0.7',
      'provenance: C was measured as A was (same benchmark, images, dataset, generation, judge, seeds and version)',
      'provenance: D kept none (run before provenance was recorded): not compared',
    ]);
  });
});

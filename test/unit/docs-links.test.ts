// The README and docs/ are read from a clone: every relative link must resolve inside the repository,
// and every #anchor into a page must name one of its headings. No services needed.

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { headingAnchors, linkProblems, markdownLinks } from '../support/markdown-links.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pages = [
  'README.md',
  ...readdirSync(path.join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('README and docs links', () => {
  it('covers the README and the reference pages in docs/', () => {
    expect(pages).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/benchmark-contract.md',
        'docs/architecture.md',
        'docs/operations.md',
        'docs/gateway.md',
        'docs/results.md',
        'docs/routing-analysis.md',
      ]),
    );
  });

  it.each(pages)('every relative link in %s resolves to a file in the repository, anchors included', (page) => {
    expect(linkProblems(repoRoot, path.join(repoRoot, page))).toEqual([]);
  });

  it('the README links into every page of docs/', () => {
    const targets = markdownLinks(readFileSync(path.join(repoRoot, 'README.md'), 'utf8')).map((link) => link.target.split('#')[0]);
    for (const page of pages.filter((p) => p.startsWith('docs/'))) expect(targets, `README.md: expected a link to ${page}`).toContain(page);
  });
});

describe('the link checker', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'br-docs-links-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports a link out of the repository, a missing file, a missing anchor, an absolute path and a quoted path out of the repository, and passes good links', () => {
    const repo = path.join(dir, 'repo');
    mkdirSync(path.join(repo, 'docs'), { recursive: true });
    writeFileSync(path.join(repo, 'docs', 'page.md'), '# Page\n\n## Using `br` twice\n');
    writeFileSync(
      path.join(repo, 'README.md'),
      [
        '# Readme',
        '[design](../outside/notes.md)',
        '[gone](docs/missing.md)',
        '[anchor](docs/page.md#nowhere)',
        '[root](/etc/passwd)',
        '[good](docs/page.md#using-br-twice) [self](#readme) [web](https://temporal.io) [folder](docs/)',
        'the fixed reference is `../outside/notes.md`, the code is in `./docs/`',
        '```',
        '[in code](../outside.md)',
        '```',
      ].join('\n'),
    );
    expect(linkProblems(repo, path.join(repo, 'README.md'))).toEqual([
      'README.md:2: ../outside/notes.md: points outside the repository (a clone would not have it)',
      'README.md:3: docs/missing.md: expected a file or folder at docs/missing.md, found none',
      'README.md:4: docs/page.md#nowhere: expected a heading with anchor #nowhere in docs/page.md, found none',
      'README.md:5: /etc/passwd: expected a path relative to README.md or an http(s) URL',
      'README.md:7: ../outside/notes.md: points outside the repository (a clone would not have it)',
    ]);
  });

  it('slugs headings as GitHub does: punctuation dropped, repeats numbered', () => {
    expect([...headingAnchors('# DinD mode: tasks with their own Docker daemon\n## Using `br`\n## Using `br`\n```\n# not a heading\n```\n')]).toEqual([
      'dind-mode-tasks-with-their-own-docker-daemon',
      'using-br',
      'using-br-1',
    ]);
  });
});

// Relative links in the repository's Markdown: each must name a file or folder inside the repository,
// a `#anchor` into a Markdown page must name one of its headings (as GitHub slugs them), and no path a
// reader would follow (a link, or a relative path quoted as code) may lead out of the repository.

import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface MarkdownLink {
  target: string;
  line: number;
}

/** Fenced code blocks hold examples, not links or headings: blank them, keeping line numbers. */
function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '));
}

/** Inline code is an example too, in link text; in headings only its backticks go. */
function withoutCode(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, (code) => ' '.repeat(code.length));
}

/** Inline links and images `[text](target "title")` and reference definitions `[name]: target`. */
export function markdownLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  withoutCode(text)
    .split('\n')
    .forEach((lineText, i) => {
      for (const match of lineText.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: match[1]!, line: i + 1 });
      const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(lineText);
      if (definition) links.push({ target: definition[1]!, line: i + 1 });
    });
  return links;
}

/** Relative paths quoted as inline code (`../outside/notes.md`): a reader follows them like links. */
export function quotedPaths(text: string): MarkdownLink[] {
  const paths: MarkdownLink[] = [];
  withoutFences(text)
    .split('\n')
    .forEach((lineText, i) => {
      for (const match of lineText.matchAll(/`(\.\.?\/[^`\s]*)`/g)) paths.push({ target: match[1]!, line: i + 1 });
    });
  return paths;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutFences(text)
    .replace(/`/g, '')
    .matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = match[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

const EXTERNAL = /^(https?:|mailto:)/i;

/** Every problem with the relative links of one Markdown file, as "file:line: target: what is wrong". */
export function linkProblems(repoRoot: string, file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const shown = path.relative(repoRoot, file);
  const problems: string[] = [];
  for (const { target, line } of markdownLinks(text)) {
    if (EXTERNAL.test(target)) continue;
    const where = `${shown}:${line}: ${target}`;
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) {
      problems.push(`${where}: expected a path relative to ${shown} or an http(s) URL`);
      continue;
    }
    const [filePart = '', anchor] = target.split('#', 2);
    const resolved = filePart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(filePart));
    const inside = path.relative(repoRoot, resolved);
    if (inside.startsWith('..') || path.isAbsolute(inside)) {
      problems.push(`${where}: points outside the repository (a clone would not have it)`);
    } else if (!existsSync(resolved)) {
      problems.push(`${where}: expected a file or folder at ${inside}, found none`);
    } else if (anchor !== undefined && resolved.endsWith('.md') && statSync(resolved).isFile()) {
      if (!headingAnchors(readFileSync(resolved, 'utf8')).has(anchor))
        problems.push(`${where}: expected a heading with anchor #${anchor} in ${inside}, found none`);
    }
  }
  for (const { target, line } of quotedPaths(text)) {
    const inside = path.relative(repoRoot, path.resolve(path.dirname(file), target));
    if (inside.startsWith('..') || path.isAbsolute(inside))
      problems.push(`${shown}:${line}: ${target}: points outside the repository (a clone would not have it)`);
  }
  return problems;
}

// Surgical edits to the text of a JSON object: set or delete fields (nested ones too) and leave every
// other byte as it was, so big integers, number spellings (1.0), key order and spacing survive an
// override. JSON.parse then JSON.stringify would round them all. The text editing is jsonc-parser's;
// what is ours is which fields changed (diffJsonObjects) and which of duplicate keys counts.

import { applyEdits, modify, parseTree, type Node } from 'jsonc-parser';

export type JsonEdit = { path: string[]; value: unknown } | { path: string[]; delete: true };

/** The edits that turn `before` into `after`, field by field, descending into objects both sides hold. */
export function diffJsonObjects(before: Record<string, unknown>, after: Record<string, unknown>, prefix: string[] = []): JsonEdit[] {
  const edits: JsonEdit[] = [];
  for (const key of Object.keys(after)) {
    const path = [...prefix, key];
    const was = before[key];
    const now = after[key];
    // JSON has no undefined: a field set to it is a field removed, as JSON.stringify would have it.
    if (now === undefined) {
      if (Object.hasOwn(before, key)) edits.push({ path, delete: true });
    } else if (!Object.hasOwn(before, key)) edits.push({ path, value: now });
    else if (isPlainObject(was) && isPlainObject(now)) edits.push(...diffJsonObjects(was, now, path));
    else if (was !== now && JSON.stringify(was) !== JSON.stringify(now)) edits.push({ path, value: now });
  }
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) edits.push({ path: [...prefix, key], delete: true });
  return edits;
}

/**
 * `text` with the edits applied, in order, by jsonc-parser (`modify` + `applyEdits`): untouched
 * fields keep their exact bytes. The text must already be a valid JSON object.
 */
export function applyJsonEdits(text: string, edits: JsonEdit[]): string {
  let out = text;
  for (const edit of edits) {
    if (!out.trimStart().startsWith('{')) throw new Error(`request body: expected a JSON object, got ${JSON.stringify(out.trim().slice(0, 16))}`);
    // A key spelled once in the whole text cannot be duplicated: the tree is built only when one might be.
    if (edit.path.some((key) => occursTwice(out, JSON.stringify(key)))) out = withLastDuplicateOnly(out, parseTree(out)!, edit.path);
    out = applyEdits(out, modify(out, edit.path, 'delete' in edit ? undefined : edit.value, {}));
  }
  return out;
}

/**
 * jsonc-parser edits the first of duplicate keys, but JSON.parse (and so the upstream) reads the
 * last: an override of the first would be silently ignored. The earlier duplicates of each key on
 * the path are removed, so the member edited is the one read, by any parser.
 */
function withLastDuplicateOnly(text: string, root: Node, path: string[]): string {
  let node: Node | undefined = root;
  for (const [depth, key] of path.entries()) {
    const named: Node[] = node?.type === 'object' ? (node.children ?? []).filter((member) => member.children?.[0]?.value === key) : [];
    if (named.length > 1) {
      // modify() with undefined removes the first member of that name; the tree is read again after.
      const prefix = path.slice(0, depth + 1);
      let out = text;
      for (let i = 1; i < named.length; i++) out = applyEdits(out, modify(out, prefix, undefined, {}));
      return withLastDuplicateOnly(out, parseTree(out)!, path);
    }
    node = named[0]?.children?.[1];
  }
  return text;
}

function occursTwice(text: string, needle: string): boolean {
  const first = text.indexOf(needle);
  return first !== -1 && text.indexOf(needle, first + needle.length) !== -1;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

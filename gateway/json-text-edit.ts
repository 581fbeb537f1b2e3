// Surgical edits to the text of a JSON object: set or delete fields (nested ones too) and leave every
// other byte as it was, so big integers, number spellings (1.0), key order and spacing survive an
// override. JSON.parse then JSON.stringify would round them all. The text must already be valid JSON.

export type JsonEdit = { path: string[]; value: unknown } | { path: string[]; delete: true };

interface Member {
  key: string;
  /** Where the member's key starts. */
  start: number;
  valueStart: number;
  valueEnd: number;
}

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

/** `text` with the edits applied, in order; untouched fields keep their exact bytes. */
export function applyJsonEdits(text: string, edits: JsonEdit[]): string {
  let out = text;
  for (const edit of edits) {
    const start = skipSpace(out, 0);
    if (out[start] !== '{') throw new Error(`request body: expected a JSON object, got ${JSON.stringify(out.slice(start, start + 16))}`);
    out = editObject(out, start, edit.path, edit);
  }
  return out;
}

function editObject(text: string, objectStart: number, path: string[], edit: JsonEdit): string {
  const members = membersOf(text, objectStart);
  const [key, ...rest] = path as [string, ...string[]];
  const named = members.filter((m) => m.key === key);
  if ('delete' in edit) {
    if (rest.length > 0) return named.length && text[named.at(-1)!.valueStart] === '{' ? editObject(text, named.at(-1)!.valueStart, rest, edit) : text;
    // Remove from the last duplicate backwards so earlier offsets stay valid.
    let out = text;
    for (const member of named.reverse()) {
      const index = members.indexOf(member);
      const [from, to] =
        index < members.length - 1
          ? [member.start, members[index + 1]!.start]
          : index > 0
            ? [members[index - 1]!.valueEnd, member.valueEnd]
            : [member.start, member.valueEnd];
      out = out.slice(0, from) + out.slice(to);
    }
    return out;
  }
  // JSON.parse keeps the last of duplicate keys, so the last one is the one the upstream reads.
  const target = named.at(-1);
  if (target && rest.length > 0 && text[target.valueStart] === '{') return editObject(text, target.valueStart, rest, edit);
  const value = JSON.stringify(rest.reduceRight<unknown>((inner, name) => ({ [name]: inner }), edit.value));
  if (target) return text.slice(0, target.valueStart) + value + text.slice(target.valueEnd);
  const member = `${JSON.stringify(key)}:${value}`;
  if (members.length === 0) return text.slice(0, objectStart + 1) + member + text.slice(objectStart + 1);
  const last = members.at(-1)!.valueEnd;
  return text.slice(0, last) + ',' + member + text.slice(last);
}

/** The members of the object whose `{` is at `objectStart`. */
function membersOf(text: string, objectStart: number): Member[] {
  const members: Member[] = [];
  let i = skipSpace(text, objectStart + 1);
  if (text[i] === '}') return members;
  for (;;) {
    const start = i;
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd) + 1; // past ':'
    const valueStart = skipSpace(text, i);
    const valueEnd = skipValue(text, valueStart);
    members.push({ key, start, valueStart, valueEnd });
    i = skipSpace(text, valueEnd);
    if (text[i] === '}') return members;
    i = skipSpace(text, i + 1); // past ','
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  return i;
}

/** The index just past the string whose opening quote is at `i`. */
function skipString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  throw new Error('request body: unterminated string');
}

/** The index just past the value that starts at `i`. */
function skipValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return skipString(text, i);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (c === '"') j = skipString(text, j) - 1;
      else if (c === '{' || c === '[') depth++;
      else if ((c === '}' || c === ']') && --depth === 0) return j + 1;
    }
    throw new Error('request body: unterminated object or array');
  }
  let j = i;
  while (j < text.length && !',}] \n\r\t'.includes(text[j]!)) j++;
  return j;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

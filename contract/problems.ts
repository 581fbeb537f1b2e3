// A problem found in user input: which file, which field, what was expected. Every loader and
// validator reports these, so `br validate` can print them all at once.

export interface Problem {
  /** Path of the file, relative to where the user pointed us (for example `benchmarks/x/tasks/a/task.yaml`). */
  file: string;
  /** Field path inside the file, like `tasks[1].environment`; empty for the file as a whole. */
  field: string;
  message: string;
}

export function formatProblem(p: Problem): string {
  return p.field ? `${p.file}: ${p.field}: ${p.message}` : `${p.file}: ${p.message}`;
}

export class InputError extends Error {
  readonly problems: Problem[];
  constructor(problems: Problem[]) {
    super(problems.map(formatProblem).join('\n'));
    this.name = 'InputError';
    this.problems = problems;
  }
}

export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** Shows a bad value the way a user typed it: strings quoted, long values cut. */
export function showValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  // JSON.stringify shows these as "null", which would misname the bad value.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

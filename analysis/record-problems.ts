// Turns schema failures of input records into Problems (file, field, expectation), capped so a bad
// file of 400,000 records gives a readable message rather than 400,000 lines.

import type { z } from 'zod';
import { fieldPath, InputError, type Problem } from '../contract/problems.js';

export const MAX_PROBLEMS = 20;

export class ProblemList {
  readonly problems: Problem[] = [];
  private more = 0;

  add(problem: Problem): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(problem);
    else this.more++;
  }

  addIssues(file: string, prefix: string, error: z.ZodError): void {
    for (const problem of issueProblems(prefix, error)) this.add({ file, ...problem });
  }

  /** Throws an InputError with every problem collected, if there is any. */
  throwIfAny(): void {
    if (!this.problems.length) return;
    const all = [...this.problems];
    if (this.more) all.push({ file: '…', field: '', message: `and ${this.more} more problems` });
    throw new InputError(all);
  }
}

/** A schema failure's issues as problems of one file: each field under `prefix` (records[3].score). */
export function issueProblems(prefix: string, error: z.ZodError): Array<Omit<Problem, 'file'>> {
  return error.issues.map((issue) => ({ field: joinField(prefix, fieldPath(issue.path)), message: issue.message }));
}

function joinField(prefix: string, field: string): string {
  if (!prefix) return field;
  if (!field) return prefix;
  return field.startsWith('[') ? `${prefix}${field}` : `${prefix}.${field}`;
}

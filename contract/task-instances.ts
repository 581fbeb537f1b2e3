// A task's instances as its task.yaml declares them (`instances`): a list of ids in the benchmark's own
// order, from a file in the task's directory or from what a command prints in the task's image. Both are
// read with one parser: one id per line, or JSON Lines whose objects carry an `index`. Pure.

import { showValue } from './problems.js';

/** Ids a task may declare: far more than any catalogue here, few enough for a run's definition (2 MB per payload). */
export const MAX_TASK_INSTANCES = 100_000;
/** What an instance list may weigh as text: a file read or a command's output kept. */
export const INSTANCE_LIST_CAP_BYTES = 16 * 1024 * 1024;

export type InstanceListParse = { ok: true; ids: string[] } | { ok: false; problems: string[] };

/** Problems reported per list: enough to fix a file, not a page of the same mistake. */
const PROBLEMS_SHOWN = 5;

/**
 * The ids of an instance list. JSON Lines when its first non-blank line starts with `{`: each line an
 * object whose `index` is a number or a non-empty string, the `index` the task's records.jsonl lines carry.
 * Otherwise one id per line; blank lines and lines starting with `#` are skipped. Every id is unique,
 * non-empty, without a comma (BENCHROUTER_INSTANCES is comma-separated) and without surrounding spaces.
 */
export function parseInstanceList(text: string): InstanceListParse {
  const lines = text.split(/\r?\n/);
  const firstLine = lines.find((line) => line.trim() !== '');
  const jsonLines = firstLine?.trimStart().startsWith('{') ?? false;
  const ids: string[] = [];
  const lineOf = new Map<string, number>();
  const problems: string[] = [];
  let more = 0;
  const problem = (message: string) => (problems.length < PROBLEMS_SHOWN ? problems.push(message) : more++);
  lines.forEach((raw, at) => {
    const line = at + 1;
    if (raw.trim() === '' || (!jsonLines && raw.trimStart().startsWith('#'))) return;
    const id = jsonLines ? indexOfJsonLine(raw, line, problem) : raw;
    if (id === undefined) return;
    if (id !== id.trim()) return problem(`line ${line}: ${showValue(id)} has spaces around it`);
    if (id.includes(',')) return problem(`line ${line}: ${showValue(id)} holds a comma (BENCHROUTER_INSTANCES is comma-separated)`);
    const seen = lineOf.get(id);
    if (seen !== undefined) return problem(`line ${line}: duplicate id ${showValue(id)} (also on line ${seen})`);
    lineOf.set(id, line);
    ids.push(id);
  });
  if (more) problems.push(`and ${more} more`);
  if (problems.length) return { ok: false, problems };
  if (ids.length === 0) return { ok: false, problems: ['no instance listed: expected one id per line, or JSON Lines with an "index" on each'] };
  if (ids.length > MAX_TASK_INSTANCES)
    return { ok: false, problems: [`${ids.length.toLocaleString('en-US')} instances: expected at most ${MAX_TASK_INSTANCES.toLocaleString('en-US')}`] };
  return { ok: true, ids };
}

function indexOfJsonLine(raw: string, line: number, problem: (message: string) => void): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    problem(`line ${line}: not valid JSON`);
    return undefined;
  }
  const index = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { index?: unknown }).index : undefined;
  if (typeof index === 'number' && Number.isFinite(index)) return String(index);
  if (typeof index === 'string' && index !== '') return index;
  problem(`line ${line}: expected an object with an "index" (a number or a non-empty string), got ${showValue(index ?? value)}`);
  return undefined;
}

// Every YAML file BenchRouter reads (benchmark.yaml, task.yaml, suites, generation configs, price
// tables), parsed one way: js-yaml's core schema (YAML 1.2 scalars, no dates, duplicate keys
// refused), with a syntax error's line and column in the problem it reports.

import { existsSync, readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import type { Problem } from './problems.js';

export type YamlRead = { ok: true; data: unknown } | { ok: false; problem: Problem };

export function parseYamlText(text: string, file: string): YamlRead {
  try {
    return { ok: true, data: yaml.load(text, { schema: yaml.CORE_SCHEMA, filename: file }) };
  } catch (error) {
    if (!(error instanceof yaml.YAMLException)) throw error;
    const at = error.mark ? ` at line ${error.mark.line + 1}, column ${error.mark.column + 1}` : '';
    return { ok: false, problem: { file, field: '', message: `not valid YAML${at}: ${error.reason}` } };
  }
}

/** Reads and parses `file`; a missing file is a problem too. An empty file reads as `{}`. */
export function readYamlFile(file: string): YamlRead {
  if (!existsSync(file)) return { ok: false, problem: { file, field: '', message: 'file not found' } };
  const read = parseYamlText(readFileSync(file, 'utf8'), file);
  return read.ok ? { ok: true, data: read.data ?? {} } : read;
}

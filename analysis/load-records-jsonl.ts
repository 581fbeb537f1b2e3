// Reads `--records` files: JSON Lines of per-instance records, each with its benchmark and model
// (BenchRouter's records.jsonl lines plus where they came from). File I/O lives here, not in the analysis.

import { readFileSync } from 'node:fs';
import { parseModelOutcome, type ModelOutcome } from './model-outcome.js';
import { parsePythonJson } from './python-json.js';
import { ProblemList } from './record-problems.js';

export function loadRecordsJsonl(files: readonly string[]): ModelOutcome[] {
  const problems = new ProblemList();
  const records: ModelOutcome[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      problems.add({ file, field: '', message: `cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}` });
      continue;
    }
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      const where = `${file}:${i + 1}`;
      let value: unknown;
      try {
        value = parsePythonJson(line);
      } catch (error) {
        problems.add({ file: where, field: '', message: `not valid JSON (${(error as Error).message})` });
        return;
      }
      const parsed = parseModelOutcome(value);
      if (parsed.success) records.push(parsed.data);
      else problems.addIssues(where, '', parsed.error);
    });
  }
  problems.throwIfAny();
  return records;
}

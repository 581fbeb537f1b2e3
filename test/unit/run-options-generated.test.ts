// What is generated from the one definition of a run's options stays in step with it: the Python client's
// option schema and docs/run-options.md. A stale file fails here, naming the command that remakes it.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPTIONS_DOC_FILE, optionsDoc, PYTHON_OPTIONS_FILE, pythonOptionsSchema } from '../../scripts/generate-run-options.js';
import { RunOptionFields } from '../../runs/run-options.js';

const REMAKE = 'stale: run `npm run generate:run-options` and commit the result';

describe('files generated from the run options', () => {
  it("the Python client's option schema is the submit body's JSON Schema of today", () => {
    expect(readFileSync(PYTHON_OPTIONS_FILE, 'utf8'), `${PYTHON_OPTIONS_FILE}: ${REMAKE}`).toBe(pythonOptionsSchema());
  });

  it('docs/run-options.md lists every option of today, with its flag', () => {
    expect(readFileSync(OPTIONS_DOC_FILE, 'utf8'), `${OPTIONS_DOC_FILE}: ${REMAKE}`).toBe(optionsDoc());
    for (const name of Object.keys(RunOptionFields.shape)) expect(optionsDoc()).toContain(`| \`${name}\` |`);
  });

  it('the Python client refuses an unknown option and a value of the wrong type before it sends anything', () => {
    const check = (options: string) =>
      execFileSync(
        'python3',
        [
          '-c',
          `import json, sys\nfrom benchrouter_client import check_run_options\ntry:\n  check_run_options(json.loads(sys.argv[1])); print('ok')\nexcept ValueError as e:\n  print(e)`,
          options,
        ],
        { cwd: path.join(path.dirname(PYTHON_OPTIONS_FILE), '..'), encoding: 'utf8' },
      ).trim();
    expect(check('{"concurrency": 2, "gateway": false, "hostTimeout": 60, "instances": ["0"]}')).toBe('ok');
    expect(check('{"hostTimeoutSeconds": 60}')).toBe("unknown run option 'hostTimeoutSeconds' (did you mean 'hostTimeout'?); see docs/run-options.md");
    expect(check('{"repeats": "3"}')).toMatch(/^run option 'repeats': expected integer, got str '3'/);
  });
});

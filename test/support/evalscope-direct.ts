// `evalscope eval` run straight from a benchmark image, as a team runs it without BenchRouter: the
// baseline the EvalScope fidelity test and perf/evalscope compare `br run` with. Asynchronous, because
// the model answering it usually runs in the caller's own process.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface EvalscopeDirectRun {
  image: string;
  /** Host directory mounted read-only at /data; dataset paths in `datasetArgs` point under it. */
  dataDir: string;
  /** Host directory mounted at /out, EvalScope's work dir. */
  workDir: string;
  endpoint: string;
  model: string;
  datasetArgs: Record<string, Record<string, unknown>>;
  batchSize: number;
}

/** The same generation settings the bridge defaults to. */
const GENERATION = { temperature: 0.0, top_p: 1.0, max_tokens: 32768 };

export async function evalscopeDirect(run: EvalscopeDirectRun): Promise<void> {
  await promisify(execFile)(
    'docker',
    [
      ...['run', '--rm', '--network', 'host', '-v', `${run.dataDir}:/data:ro`, '-v', `${run.workDir}:/out`, '--entrypoint', 'evalscope', run.image, 'eval'],
      ...['--model', run.model, '--api-url', run.endpoint, '--api-key', 'EMPTY', '--eval-type', 'openai_api'],
      ...['--datasets', ...Object.keys(run.datasetArgs), '--dataset-args', JSON.stringify(run.datasetArgs)],
      ...['--generation-config', JSON.stringify(GENERATION), '--eval-batch-size', String(run.batchSize), '--work-dir', '/out', '--no-timestamp'],
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  );
}

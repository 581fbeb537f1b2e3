// A model gateway in a process of its own, with one job's route registered, for perf/gateway.
//   node --import tsx perf/gateway-server.ts <upstream base URL> [transcripts]   → prints "port token"
// With `transcripts`, every call is recorded in a transcript file, as a run's jobs do by default.

import os from 'node:os';
import path from 'node:path';
import { ModelGateway } from '../gateway/model-gateway.js';
import { BUILT_IN_PRICES } from '../gateway/price-table.js';
import { DEFAULT_TRANSCRIPT_MAX_BYTES } from '../gateway/transcript.js';

const gateway = new ModelGateway('perf-secret');
const token = gateway.register({
  jobId: 'perf-job',
  runId: 'perf-run',
  role: 'model',
  upstream: { baseUrl: process.argv[2]!, apiKey: 'sk-perf' },
  generation: { set: {} },
  prices: BUILT_IN_PRICES,
  limits: { concurrency: 1024, maxRetries: 0 },
  usageFile: path.join(os.tmpdir(), `br-perf-gateway-${process.pid}.json`),
  ...(process.argv[3] === 'transcripts'
    ? { transcript: { file: path.join(os.tmpdir(), `br-perf-transcript-${process.pid}.jsonl`), maxCalls: 1_000_000, maxBytes: DEFAULT_TRANSCRIPT_MAX_BYTES } }
    : {}),
});
const port = await gateway.listen(0, '127.0.0.1');
console.log(`${port} ${token}`);

// An inspect_evals task run directly by `inspect eval` in a benchmark's image (docker run, no BenchRouter),
// against an OpenAI-compatible endpoint on this host, and what its log says: the fidelity tests' reference.

import { dockerRun } from './benchmark-image.js';

export interface InspectDirectResult {
  /** Every score's metrics by name, as the log's results give them. */
  scores: Record<string, Record<string, number>>;
  /** Per sample, in the log's order: its id, its score's value and how many messages it ended with. */
  samples: Array<{ id: string; value: unknown; messages: number }>;
}

const READ_LOG = `
import glob, json
from inspect_ai.log import read_eval_log
log = read_eval_log(sorted(glob.glob("/tmp/logs/*.eval"))[-1])
assert log.status == "success", (log.status, log.error)
print(json.dumps({
    "scores": {s.name: {n: m.value for n, m in s.metrics.items()} for s in log.results.scores},
    "samples": [{"id": str(s.id), "value": next(iter(s.scores.values())).value, "messages": len(s.messages)} for s in log.samples],
}))
`;

/**
 * `inspect eval <task> <args> --model openai-api/local/replay` as the task's README says to run it, with the
 * simulated user on its own endpoint when `user` is given (Inspect's "user" model role).
 */
export async function inspectDirect(image: string, task: string, args: string[], endpoint: string, user?: string): Promise<InspectDirectResult> {
  const roles = user ? ['--model-role', 'user=openai-api/sim/replay'] : [];
  const command = ['inspect', 'eval', task, ...args, ...roles, '--model', 'openai-api/local/replay', '--log-dir', '/tmp/logs', '--display', 'plain'];
  const script = `${command.join(' ')} >&2 && python3 -c '${READ_LOG}'`;
  const env = { LOCAL_BASE_URL: endpoint, LOCAL_API_KEY: 'replay', ...(user ? { SIM_BASE_URL: user, SIM_API_KEY: 'replay' } : {}) };
  return JSON.parse(await dockerRun(image, ['sh', '-c', script], { env })) as InspectDirectResult;
}

// An inspect_evals task run directly by `inspect eval` in a benchmark's image (docker run, no BenchRouter),
// against an OpenAI-compatible endpoint on this host, and what its log says: the fidelity tests' reference.

import { dockerRun } from './benchmark-image.js';
import { runWithOwnDaemon } from './dind-direct.js';

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

export interface InspectDirectOptions {
  /** The simulated user's endpoint (Inspect's "user" model role). */
  user?: string;
  /**
   * Run with a Docker daemon of the container's own, for an eval's `docker` sandboxes, with the image archives in
   * this directory loaded: the endpoint must then listen where `host.docker.internal` reaches it (0.0.0.0).
   */
  preload?: string;
  volumes?: string[];
}

/**
 * `inspect eval <task> <args> --model openai-api/local/replay` as the task's README says to run it, with the
 * simulated user on its own endpoint when `options.user` is given.
 */
export async function inspectDirect(
  image: string,
  task: string,
  args: string[],
  endpoint: string,
  options: InspectDirectOptions = {},
): Promise<InspectDirectResult> {
  const { user, preload, volumes } = options;
  const roles = user ? ['--model-role', 'user=openai-api/sim/replay'] : [];
  const command = ['inspect', 'eval', task, ...args, ...roles, '--model', 'openai-api/local/replay', '--log-dir', '/tmp/logs', '--display', 'plain'];
  const script = `${command.join(' ')} >&2 && python3 -c '${READ_LOG}'`;
  const env = { LOCAL_BASE_URL: endpoint, LOCAL_API_KEY: 'replay', ...(user ? { SIM_BASE_URL: user, SIM_API_KEY: 'replay' } : {}) };
  if (preload) {
    const fromInside = (url: string) => url.replace(/\/\/[^:/]+/, '//host.docker.internal');
    const inside = { ...env, LOCAL_BASE_URL: fromInside(endpoint), ...(user ? { SIM_BASE_URL: fromInside(user) } : {}) };
    return JSON.parse(await runWithOwnDaemon(image, script, { preload, env: inside, volumes })) as InspectDirectResult;
  }
  return JSON.parse(await dockerRun(image, ['sh', '-c', script], { env, volumes })) as InspectDirectResult;
}

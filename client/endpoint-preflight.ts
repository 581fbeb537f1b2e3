// Before a run starts its jobs: its model endpoints (the model under test, and the judge and user simulator it
// names) checked once by a worker (preflightWorkflow), so that an endpoint that cannot serve is an error in
// seconds that names it and what it answered, not a progress bar that ends with every job FAILED. The run
// option `preflight: false` (`--no-preflight`) skips it, for an endpoint that comes up later.

import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { EndpointCheck, EndpointVerdict } from '../activities/endpoint-preflight.js';
import type { Settings } from '../config/settings.js';
import { InputError } from '../contract/problems.js';
import { modelTargetOf, sideModelTargetOf, type RunOptions } from '../runs/run-options.js';
import { SIDE_MODEL_ROLES, SIDE_MODELS } from '../runs/side-models.js';
import { executeOrJoin } from './workflow-once.js';
// Types only: the workflow module brings the workflow SDK, which no client process needs to load.
import type { preflightWorkflow } from '../workflows/preflight-workflow.js';

/**
 * A run refused before it started because an endpoint cannot serve it: an InputError (the CLI's exit 2) that
 * the API answers with 400, naming the run option of the first endpoint.
 */
export class PreflightError extends InputError {
  constructor(
    problems: ConstructorParameters<typeof InputError>[0],
    readonly option: string,
  ) {
    super(problems);
    this.name = 'PreflightError';
  }
}

/** How long a submit waits for a worker to take the check: with none polling, the run could not start anyway. */
const WORKER_WAIT = '60s';
/** An endpoint that passed is not asked again for this long by the same process (an API server's many submits). */
const PASSED_FOR_MS = 60_000;

const passed = new Map<string, number>();
const keyOf = (check: EndpointCheck) => JSON.stringify([check.role, check.endpoint, check.model, check.apiKeyEnv ?? '']);

/** The endpoints a run's options send calls to. */
export function endpointChecks(
  options: Pick<
    RunOptions,
    'model' | 'endpoint' | 'apiKeyEnv' | 'judgeModel' | 'judgeEndpoint' | 'judgeApiKeyEnv' | 'userModel' | 'userEndpoint' | 'userApiKeyEnv'
  >,
): EndpointCheck[] {
  const model = modelTargetOf(options);
  const checks: EndpointCheck[] = [{ role: 'model', endpoint: model.endpoint, model: model.name, ...(model.apiKeyEnv ? { apiKeyEnv: model.apiKeyEnv } : {}) }];
  for (const role of SIDE_MODEL_ROLES) {
    const side = sideModelTargetOf(options, role);
    if (side) checks.push({ role, endpoint: side.endpoint, model: side.name, ...(side.apiKeyEnv ? { apiKeyEnv: side.apiKeyEnv } : {}) });
  }
  return checks;
}

/** What the run option names each endpoint by, for the error. */
function optionOf(check: EndpointCheck): string {
  return check.role === 'model' ? 'endpoint' : SIDE_MODELS[check.role].fields.endpoint;
}

/**
 * Checks the run's endpoints on a worker; throws an InputError naming each that cannot serve. Returns notes on
 * what could not be checked (a server that lists no models).
 */
export async function preflightEndpoints(client: Client, settings: Settings, runId: string, options: RunOptions): Promise<string[]> {
  if (!options.preflight) return [];
  const now = Date.now();
  const checks = endpointChecks(options).filter((check) => (passed.get(keyOf(check)) ?? 0) < now);
  if (!checks.length) return [];
  let verdicts: EndpointVerdict[];
  try {
    verdicts = await executeOrJoin<Awaited<ReturnType<typeof preflightWorkflow>>>(client.workflow, 'preflightWorkflow', {
      workflowId: `${runId}.preflight`,
      taskQueue: settings.sharedQueue,
      args: [checks],
      workflowExecutionTimeout: WORKER_WAIT,
    });
  } catch (error) {
    if (error instanceof WorkflowFailedError && /timed? ?out/i.test(`${error.message} ${error.cause?.message ?? ''}`))
      throw new InputError([
        {
          file: 'preflight',
          field: '',
          message: `no worker checked the model endpoint within ${WORKER_WAIT} (is one running? \`br doctor\` says); the run was not started (--no-preflight skips the check)`,
        },
      ]);
    throw error;
  }
  const problems = verdicts.filter((v) => v.problem);
  for (const verdict of verdicts) if (!verdict.problem) passed.set(keyOf(verdict.check), now + PASSED_FOR_MS);
  if (problems.length)
    throw new PreflightError(
      problems.map((v) => ({
        file: optionOf(v.check),
        field: '',
        message: `${v.check.endpoint} (${v.check.role === 'model' ? 'the model' : `the ${SIDE_MODELS[v.check.role].label}`} "${v.check.model}"): ${v.problem}; the run was not started (--no-preflight skips this check)`,
      })),
      optionOf(problems[0]!.check),
    );
  return verdicts.flatMap((v) => (v.note ? [`${v.check.endpoint}: ${v.note}`] : []));
}

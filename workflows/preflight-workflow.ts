// preflightWorkflow: a run's model endpoints checked once before the run is started (client/endpoint-preflight.ts),
// by whichever worker answers: the run's calls come from the workers, and so does the API key.

import { proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/index.js';
import type { EndpointCheck, EndpointVerdict } from '../activities/endpoint-preflight.js';

// Each endpoint gets its own few seconds (activities/endpoint-preflight.ts); no retry: an answer is the answer.
const { checkEndpoints } = proxyActivities<SharedActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 1 } });

export async function preflightWorkflow(checks: EndpointCheck[]): Promise<EndpointVerdict[]> {
  return checkEndpoints(checks);
}

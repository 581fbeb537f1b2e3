// The workflow bundle's entry: deterministic workflow code only.
export { runWorkflow, progressQuery } from './run-workflow.js';
export { jobWorkflow, jobStateQuery } from './job-workflow.js';
export { suiteWorkflow, suiteProgressQuery } from './suite-workflow.js';
export { fetchArtifactWorkflow } from './fetch-artifact-workflow.js';
export { taskDefinitionsWorkflow } from './task-definitions-workflow.js';
export { checkpointWorkflow } from './checkpoint-workflow.js';
export { runResultsPageWorkflow } from './run-results-page-workflow.js';
export { taskInstancesWorkflow } from './task-instances-workflow.js';
export { preflightWorkflow } from './preflight-workflow.js';

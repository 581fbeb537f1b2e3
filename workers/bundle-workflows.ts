// Run in a child process by workflow-bundle-cache: bundles the workflows into one file.
// Usage: node --import tsx workers/bundle-workflows.ts <workflows index.ts> <output file>

import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';

const [workflowsPath, outFile] = process.argv.slice(2);
if (!workflowsPath || !outFile) throw new Error('usage: bundle-workflows.ts <workflows index.ts> <output file>');
const quiet = () => undefined;
const bundle = await bundleWorkflowCode({ workflowsPath, logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: console.error, log: quiet } });
writeFileSync(outFile, bundle.code);

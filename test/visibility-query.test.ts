// `br list` filters on the real dev server's visibility: a filter value that reads like query syntax
// matches only runs carrying exactly that value, never widens the query (see runsQuery in client/runs.ts).

import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listRuns } from '../client/runs.js';
import { SEARCH_ATTRIBUTES } from '../runs/search-attributes.js';
import { waitFor } from './support/processes.js';

const tag = randomBytes(3).toString('hex');
// No worker polls this queue: the workflows stay RUNNING, visible, and do nothing.
const taskQueue = `test-visibility-${tag}`;
const models = {
  plain: `plain-${tag}`,
  injection: `x-${tag}' OR WorkflowType = 'suiteWorkflow`,
  escapedQuote: `y-${tag}\\' OR BenchRouterBenchmark = 'arith`,
  backslash: `z-${tag}\\`,
};

let client: Client;
const started: string[] = [];

async function start(workflowType: string, model: string): Promise<void> {
  const workflowId = `${taskQueue}-${started.length}`;
  await client.workflow.start(workflowType, {
    taskQueue,
    workflowId,
    args: [],
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.model, value: model },
      { key: SEARCH_ATTRIBUTES.benchmark, value: 'arith' },
      { key: SEARCH_ATTRIBUTES.status, value: 'RUNNING' },
    ],
  });
  started.push(workflowId);
}

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
  for (const model of Object.values(models)) await start('runWorkflow', model);
  // What an injected `OR WorkflowType = 'suiteWorkflow'` would wrongly bring in.
  await start('suiteWorkflow', `suite-${tag}`);
  await waitFor('the workflows to reach visibility', async () => (await listRuns(client, 1000, {})).filter((r) => r.model.includes(tag)).length === 4, 90_000);
});

afterAll(async () => {
  for (const workflowId of started)
    await client.workflow
      .getHandle(workflowId)
      .terminate('test over')
      .catch(() => undefined);
  await client?.connection.close();
});

describe('visibility filters', () => {
  it('a model filter that reads like query syntax matches only the run with exactly that model', async () => {
    expect((await listRuns(client, 1000, { model: models.injection })).map((r) => r.model)).toEqual([models.injection]);
  });

  it('a filter with backslashes never brings in another run', async () => {
    // The server reads an escaped quote as a quote but keeps a doubled backslash as two characters, so
    // such a value matches nothing at all (not even its own run): a known limit, but never a wider query.
    for (const model of [models.escapedQuote, models.backslash]) {
      const found = (await listRuns(client, 1000, { model })).map((r) => r.model);
      expect(
        found.filter((m) => m !== model),
        model,
      ).toEqual([]);
    }
  });

  it('a prefix of an injected value matches nothing: values are compared whole', async () => {
    expect(await listRuns(client, 1000, { model: `x-${tag}` })).toEqual([]);
  });
});

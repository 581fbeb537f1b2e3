// Which checkpoint an OpenAI-compatible endpoint serves now: the first model id of `GET /v1/models`.
// A scheduled evaluation names its run by it. The API key is read here, on the worker, from the
// variable the schedule names; it never enters workflow input or history.

import { ApplicationFailure } from '@temporalio/activity';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { FAILURE_TYPES } from '../runs/failure-types.js';
import type { ServedCheckpoint } from '../runs/schedule-spec.js';

export interface ServedCheckpointInput {
  endpoint: string;
  apiKeyEnv?: string;
}

const ModelListSchema = z.object({ data: z.array(z.object({ id: z.string().min(1) })).min(1, 'expected at least one model in "data"') });

/** `[A-Za-z0-9_-]` only: the id's readable part (at most 60 characters) and 8 hex digits of its sha256. */
export function checkpointKey(checkpoint: string): string {
  const slug = checkpoint
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  const hash = createHash('sha256').update(checkpoint).digest('hex').slice(0, 8);
  return slug ? `${slug}-${hash}` : hash;
}

export async function servedCheckpoint(input: ServedCheckpointInput, hostId: string, timeoutMs = 10_000): Promise<ServedCheckpoint> {
  const url = `${input.endpoint.replace(/\/+$/, '')}/models`;
  const headers: Record<string, string> = {};
  if (input.apiKeyEnv) {
    const key = process.env[input.apiKeyEnv];
    if (!key)
      throw ApplicationFailure.create({
        type: FAILURE_TYPES.missingOnHost,
        nonRetryable: true,
        message: `the schedule reads its API key from $${input.apiKeyEnv}, which is not set on worker host ${hostId}`,
      });
    headers.authorization = `Bearer ${key}`;
  }
  // A network error or a 5xx is the server restarting between checkpoints: the activity is retried.
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  if (response.status >= 500) throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 200)}`);
  const problem = (message: string) => ApplicationFailure.create({ type: FAILURE_TYPES.badModelList, nonRetryable: true, message: `GET ${url}: ${message}` });
  if (!response.ok) throw problem(`answered ${response.status}: ${text.slice(0, 200)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw problem(`expected a JSON model list, got ${JSON.stringify(text.slice(0, 100))}`);
  }
  const parsed = ModelListSchema.safeParse(body);
  if (!parsed.success) throw problem(parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
  const checkpoint = parsed.data.data[0]!.id;
  return { checkpoint, key: checkpointKey(checkpoint) };
}

// Secrets out of whatever the worker reports: the API keys it resolved for a job and the job's
// gateway tokens are cut from any text a task could have influenced before it enters workflow history.

import type { ModelGateway } from '../gateway/model-gateway.js';
import { sideModelTargetOf } from '../runs/run-options.js';
import type { JobSpec } from '../runs/run-spec.js';
import { SIDE_MODEL_ROLES, SIDE_MODELS } from '../runs/side-models.js';

export const REDACTED = '[redacted]';

/**
 * Shorter strings are not secrets anyone would issue, and replacing them would mangle ordinary text
 * (the key placeholder `EMPTY`, a one-letter test key).
 */
const MIN_SECRET_LENGTH = 6;

/** `text` with every occurrence of every secret replaced by `[redacted]`; longest first, so a secret that contains another goes whole. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** The secrets worth cutting (MIN_SECRET_LENGTH and up), longest first, as bytes: for output that arrives as bytes. */
export function secretBytes(secrets: readonly string[]): Buffer[] {
  return [...new Set(secrets)]
    .filter((s) => s.length >= MIN_SECRET_LENGTH)
    .map((s) => Buffer.from(s))
    .sort((a, b) => b.length - a.length);
}

/** `bytes` with every occurrence of each of `secrets` (from secretBytes) replaced by `[redacted]`. */
export function redactBytes(bytes: Buffer, secrets: readonly Buffer[]): Buffer {
  let out = bytes;
  for (const secret of secrets) {
    if (out.indexOf(secret) < 0) continue;
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = out.indexOf(secret); at >= 0; at = out.indexOf(secret, from)) {
      parts.push(out.subarray(from, at), REDACTED_BYTES);
      from = at + secret.length;
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
  }
  return out;
}

const REDACTED_BYTES = Buffer.from(REDACTED);

/** A JSON-like value with every string in it (keys too) redacted. */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
  if (!secrets.some((s) => s.length >= MIN_SECRET_LENGTH)) return value;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return redactSecrets(node, secrets);
    if (Array.isArray(node)) return node.map(walk);
    if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [redactSecrets(k, secrets), walk(v)]));
    return node;
  };
  return walk(value) as T;
}

/**
 * Every secret this worker knows for a job: the model's, judge's and user simulator's keys as resolved on this host
 * (with --no-gateway the container holds them) and, through the gateway, the job's own tokens.
 */
export function jobSecrets(
  job: Pick<JobSpec, 'jobId' | 'options'>,
  gateway: Pick<ModelGateway, 'tokenFor'> | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const secrets: string[] = [];
  const sides = SIDE_MODEL_ROLES.filter((role) => sideModelTargetOf(job.options, role));
  for (const source of [job.options.apiKeyEnv, ...sides.map((role) => job.options[SIDE_MODELS[role].fields.apiKeyEnv])]) {
    const key = source ? env[source] : undefined;
    if (key) secrets.push(key);
  }
  if (gateway && job.options.gateway) {
    secrets.push(gateway.tokenFor(job.jobId, 'model'));
    for (const role of sides) secrets.push(gateway.tokenFor(job.jobId, role));
  }
  return secrets;
}

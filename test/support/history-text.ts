// A workflow's whole history as text a test can search for a secret: the JSON that
// `temporal workflow show` prints, plus every payload's data and metadata decoded from base64.

import { execFileSync } from 'node:child_process';
import { inject } from 'vitest';

/** The full history of a workflow as `temporal workflow show --output json` prints it. */
export function historyJson(workflowId: string): string {
  return execFileSync('temporal', ['workflow', 'show', '--address', inject('temporalAddress'), '--workflow-id', workflowId, '--output', 'json'], {
    encoding: 'utf8',
  });
}

/**
 * The same history with every payload's data and metadata decoded from base64, as readable text:
 * a secret hidden in a payload would show here (the JSON alone shows payloads only as base64).
 */
export function historyText(workflowId: string): string {
  const decoded: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'data' || key === 'metadata') && value && typeof value === 'string') decoded.push(Buffer.from(value, 'base64').toString('utf8'));
      else if (key === 'metadata' && value && typeof value === 'object')
        Object.values(value).forEach((v) => typeof v === 'string' && decoded.push(Buffer.from(v, 'base64').toString('utf8')));
      else walk(value);
    }
  };
  const json = historyJson(workflowId);
  walk(JSON.parse(json));
  return `${json}\n${decoded.join('\n')}`;
}

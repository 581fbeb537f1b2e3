// Whether a model endpoint can serve a run, asked once before the run starts its jobs, from a worker host
// (where the run's calls will come from, and where the API key's variable is): reachable, the model among
// those `GET /models` lists (where the server lists models), the key accepted. An answer is reported, never
// thrown: the submit turns problems into one error that names each endpoint and what it answered.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { SideModelRole } from '../runs/side-models.js';

export interface EndpointCheck {
  /** `model` for the model under test, else the side model's role. */
  role: 'model' | SideModelRole;
  endpoint: string;
  model: string;
  apiKeyEnv?: string;
}

export interface EndpointVerdict {
  check: EndpointCheck;
  /** Absent when the endpoint can serve the model. */
  problem?: string;
  /** What the check could not tell (a server that lists no models), for the submitter to say. */
  note?: string;
}

/** How long one endpoint may take to answer: a live server answers its model list at once. */
export const PREFLIGHT_TIMEOUT_MS = 5_000;

/**
 * GET with Node's own HTTP client, not fetch: fetch refuses the ports its standard calls bad (1, 6000, 6665...),
 * which a model server may well listen on, and which the gateway (Node's HTTP client too) reaches.
 */
function get(url: string, headers: Record<string, string>, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = (url.startsWith('https:') ? httpsRequest : httpRequest)(url, { method: 'GET', headers, timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        // A model list is small: what is past 1 MB is not read.
        if ((bytes += chunk.length) <= 1024 * 1024) chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'TIMEOUT' })));
    request.on('error', reject);
    request.end();
  });
}

export async function checkEndpoint(check: EndpointCheck, hostId: string, timeoutMs = PREFLIGHT_TIMEOUT_MS): Promise<EndpointVerdict> {
  const url = `${check.endpoint.replace(/\/+$/, '')}/models`;
  const headers: Record<string, string> = {};
  if (check.apiKeyEnv) {
    const key = process.env[check.apiKeyEnv];
    if (!key) return { check, problem: `its API key's variable $${check.apiKeyEnv} is not set on worker host ${hostId}` };
    headers.authorization = `Bearer ${key}`;
  }
  let response: { status: number; text: string };
  try {
    response = await get(url, headers, timeoutMs);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return { check, problem: `GET ${url} from worker host ${hostId} failed: ${code && code !== 'TIMEOUT' ? code : message}` };
  }
  const { text } = response;
  const ok = response.status >= 200 && response.status < 300;
  const said = text.trim() ? `: ${text.trim().replace(/\s+/g, ' ').slice(0, 200)}` : '';
  if (response.status === 401 || response.status === 403)
    return {
      check,
      problem: `GET ${url} refused the key (HTTP ${response.status}${said})${check.apiKeyEnv ? ` read from $${check.apiKeyEnv}` : ', sent none: is --api-key-env missing?'}`,
    };
  // A server that lists no models (404, 405) cannot say whether it serves this one: the run's first calls will.
  if (response.status === 404 || response.status === 405) return { check, note: `GET ${url} answered HTTP ${response.status}: the model was not checked` };
  if (!ok) return { check, problem: `GET ${url} answered HTTP ${response.status}${said}` };
  const ids = modelIds(text);
  if (!ids) return { check, note: `GET ${url} answered no model list the check could read: the model was not checked` };
  if (ids.includes(check.model)) return { check };
  // Not listed: a server that knows more models than it lists (OpenAI's retrieve route) may still serve it.
  const retrieved = await get(`${url}/${encodeURIComponent(check.model)}`, headers, timeoutMs)
    .then((r) => r.status >= 200 && r.status < 300)
    .catch(() => false);
  if (retrieved) return { check };
  const shown = ids.slice(0, 10).map((id) => `"${id}"`);
  return {
    check,
    problem: `does not serve model "${check.model}": GET ${url} lists ${shown.join(', ')}${ids.length > 10 ? ` and ${ids.length - 10} more` : ''}`,
  };
}

/** The ids of an OpenAI-style model list (`{data: [{id}]}`), or undefined for anything else. */
function modelIds(text: string): string[] | undefined {
  try {
    const data = (JSON.parse(text) as { data?: unknown }).data;
    if (!Array.isArray(data)) return undefined;
    const ids = data.map((entry) => (entry as { id?: unknown })?.id).filter((id): id is string => typeof id === 'string');
    return ids.length ? ids : undefined;
  } catch {
    return undefined;
  }
}

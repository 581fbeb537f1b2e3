// What every API route is given: one Temporal client, the settings, and the links a run has (API,
// dashboard, Temporal Web UI), built from the address the caller used to reach the server.

import type { Client } from '@temporalio/client';
import type { FastifyRequest } from 'fastify';
import { runWebUiLink, type Settings } from '../config/settings.js';
import type { TokenEntry } from './api-tokens.js';
import type { createRunReads } from './run-routes.js';

export interface ApiContext {
  client: Client;
  settings: Settings;
  /** Finished results kept, running states shared between concurrent callers (run-read-cache.ts). */
  reads: ReturnType<typeof createRunReads>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The token the request authenticated with (absent on public routes). */
    caller?: TokenEntry;
  }
}

export function baseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

export function runLinks(request: FastifyRequest, settings: Settings, runId: string): { api: string; dashboard: string; webUi: string } {
  const base = baseUrl(request);
  return { api: `${base}/runs/${encodeURIComponent(runId)}`, dashboard: `${base}/ui/runs/${encodeURIComponent(runId)}`, webUi: runWebUiLink(settings, runId) };
}

// The HTTP API and dashboard of `br serve`: Fastify with zod schemas (which also make /openapi.json),
// bearer-token auth (or the dashboard's sign-in cookie), a rate limit per token, one JSON error shape
// and a body size limit.

import fastifyRateLimit from '@fastify/rate-limit';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { Client } from '@temporalio/client';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Settings } from '../config/settings.js';
import { ApiError, errorBody, handleApiError } from './api-error.js';
import type { TokenEntry } from './api-tokens.js';
import { registerBoardRoutes } from './board-routes.js';
import { SESSION_COOKIE, registerDashboardRoutes } from './dashboard-routes.js';
import { registerChartRoutes } from './chart-routes.js';
import { registerInstanceRoutes } from './instance-routes.js';
import { registerResultFileRoutes } from './result-file-routes.js';
import { registerRunEvents } from './run-events.js';
import { registerRunRewards } from './run-rewards.js';
import { createRunReads, registerRunRoutes } from './run-routes.js';
import { registerScheduleRoutes } from './schedule-routes.js';

/** Run requests are a few hundred bytes; anything near this is a mistake or an attack. */
export const BODY_LIMIT_BYTES = 64 * 1024;

const WhoAmISchema = z.object({ token: z.string(), readOnly: z.boolean() });

export interface ApiServerOptions {
  client: Client;
  settings: Settings;
  verifyToken: (token: string) => TokenEntry | undefined;
  bodyLimit?: number;
  /** Requests per minute per token (default settings.apiRateLimit; 0: no limit). */
  rateLimit?: number;
  logger?: boolean;
}

/** Routes anyone may read: the API's description and its docs page, the sign-in page and static assets. */
function isPublic(url: string): boolean {
  const pathname = url.split('?')[0]!;
  return pathname === '/openapi.json' || pathname === '/login' || pathname.startsWith('/docs') || pathname.startsWith('/static/');
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** The bearer token, else the dashboard's cookie (a browser's EventSource cannot send headers). */
function presentedToken(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice('Bearer '.length).trim();
  return cookieValue(request.headers.cookie, SESSION_COOKIE);
}

export async function buildApiServer(options: ApiServerOptions): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: options.bodyLimit ?? BODY_LIMIT_BYTES });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleApiError);
  app.setNotFoundHandler((request, reply) => reply.status(404).send(errorBody(404, `no route ${request.method} ${request.url.split('?')[0]}`)));

  const rateLimit = options.rateLimit ?? options.settings.apiRateLimit;
  if (rateLimit > 0) {
    // Counted before each route's handler, after the token check below (onRequest): one budget per
    // token, shared by its API calls and dashboard pages; public routes count per client address.
    await app.register(fastifyRateLimit, {
      max: rateLimit,
      timeWindow: 60_000,
      hook: 'preHandler',
      keyGenerator: (request) => (request.caller ? `token:${request.caller.name}` : `address:${request.ip}`),
      errorResponseBuilder: (request, context) =>
        new ApiError(
          429,
          `${request.caller ? `token "${request.caller.name}"` : 'this address'} made more than ${context.max} requests in a minute; retry in ${Math.ceil(context.ttl / 1000)} s (the Retry-After header)`,
        ),
    });
  }

  await app.register(fastifySwagger, {
    openapi: {
      info: {
        title: 'BenchRouter API',
        version: '1',
        description: 'Submit evaluation runs, follow them, read results, leaderboards and routing analyses; schedule checkpoint evaluations. See docs/api.md.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // Which token a program is using: a check of its setup, and the cheapest authenticated route (perf/api
  // measures the run routes against it).
  app
    .withTypeProvider<ZodTypeProvider>()
    .get(
      '/whoami',
      { schema: { summary: 'The calling token: its name and whether it is read-only', tags: ['tokens'], response: { 200: WhoAmISchema } } },
      async (request) => ({ token: request.caller!.name, readOnly: request.caller!.readOnly }),
    );

  app.addHook('onRequest', async (request, reply) => {
    if (isPublic(request.url)) return;
    const token = presentedToken(request);
    const caller = token ? options.verifyToken(token) : undefined;
    if (!caller) {
      // A person opening a page is sent to sign in; a program gets the JSON error.
      if (request.method === 'GET' && (request.url === '/' || request.url.startsWith('/ui')) && !request.headers.authorization)
        return reply.redirect(`/login?next=${encodeURIComponent(request.url)}`);
      throw new ApiError(
        401,
        token ? 'unknown or revoked token' : 'missing bearer token: send `Authorization: Bearer <token>` (tokens: `br tokens add <name>`)',
      );
    }
    if (caller.readOnly && request.method !== 'GET' && request.method !== 'HEAD')
      throw new ApiError(403, `token "${caller.name}" is read-only: it may only GET`);
    request.caller = caller;
  });

  const context = { client: options.client, settings: options.settings, reads: createRunReads() };
  registerRunRoutes(app, context);
  registerRunEvents(app, context);
  registerInstanceRoutes(app, context);
  registerResultFileRoutes(app, context);
  registerChartRoutes(app, context);
  registerRunRewards(app, context);
  registerBoardRoutes(app, context);
  registerScheduleRoutes(app, context);
  registerDashboardRoutes(app, context, options.verifyToken);
  return app;
}

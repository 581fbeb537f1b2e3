// Every API failure as one JSON shape, `{error: {code, message, field?}}`, with the HTTP status that
// says what the caller can do about it; the error handler maps the errors of the layers below.

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { InputError } from '../contract/problems.js';
import { PreflightError } from '../client/endpoint-preflight.js';

export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.string().describe('BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, PAYLOAD_TOO_LARGE, UNPROCESSABLE, UNAVAILABLE, INTERNAL'),
    message: z.string(),
    field: z.string().optional().describe('the request field at fault: `body.endpoint`, `query.limit`'),
  }),
});

export type ErrorBody = z.infer<typeof ErrorBodySchema>;

const CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE',
  429: 'TOO_MANY_REQUESTS',
  503: 'UNAVAILABLE',
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function errorBody(status: number, message: string, field?: string): ErrorBody {
  return { error: { code: CODES[status] ?? 'INTERNAL', message, ...(field ? { field } : {}) } };
}

/** gRPC UNAVAILABLE and DEADLINE_EXCEEDED: Temporal cannot be reached just now. */
function temporalUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 14 || code === 4 || /UNAVAILABLE|Failed to connect|connection refused/i.test((error as Error).message ?? '');
}

export function handleApiError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof ApiError) return reply.status(error.status).send(errorBody(error.status, error.message, error.field));
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body');
    const first = error.validation[0];
    const field = `${where}${(first?.instancePath ?? '').replace(/\//g, '.')}`;
    const message = error.validation.map((v) => `${where}${v.instancePath.replace(/\//g, '.')}: ${v.message}`).join('; ');
    return reply.status(400).send(errorBody(400, message, field));
  }
  // An endpoint the run's preflight found unable to serve it: the request's fault, a 400 naming the field.
  if (error instanceof PreflightError) return reply.status(400).send(errorBody(400, error.message, `body.${error.option}`));
  if (error instanceof InputError) {
    const first = error.problems[0];
    return reply.status(422).send(errorBody(422, error.message, first?.field ? `body.${first.field}` : undefined));
  }
  const status = (error as FastifyError).statusCode;
  if (status === 413) return reply.status(413).send(errorBody(413, `request body over the limit of ${request.routeOptions.bodyLimit ?? 'the server'} bytes`));
  if (status && status >= 400 && status < 500) return reply.status(status).send(errorBody(status, error.message));
  if (temporalUnavailable(error)) return reply.status(503).send(errorBody(503, `Temporal is unavailable: ${error.message.split('\n')[0]}`));
  request.log.error(error);
  return reply.status(500).send(errorBody(500, error.message));
}

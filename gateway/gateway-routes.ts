// The gateway's allow-list: the few OpenAI routes a benchmark needs to talk to a model. Everything
// else (files, fine-tuning, batches ...) would use the real key's full authority, so it never leaves.

/** An allowed call: which endpoint, and the path the upstream receives (built here, never copied). */
export interface AllowedRoute {
  endpoint: Endpoint;
  /** Relative to the upstream base URL, e.g. "/chat/completions" or "/models/gpt-4o". */
  upstreamPath: string;
}

export type Endpoint = 'chat/completions' | 'completions' | 'embeddings' | 'responses' | 'models';

export type RouteCheck = { allowed: true; route: AllowedRoute } | { allowed: false; reason: string };

const POST_ENDPOINTS: ReadonlySet<string> = new Set<Endpoint>(['chat/completions', 'completions', 'embeddings', 'responses']);

export const ALLOWED_ROUTES = 'POST /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses; GET /v1/models, /v1/models/{id}';

/**
 * Checks a request target (`req.url`, query included) against the allow-list. The path is judged
 * decoded and segment by segment, so `..`, `.`, empty segments and encoded slashes cannot reach a
 * route the list does not name, whatever the upstream would make of them.
 */
export function checkRoute(method: string, target: string): RouteCheck {
  const rawPath = target.split('?', 1)[0]!;
  const deny = (why: string): RouteCheck => ({
    allowed: false,
    reason: `the gateway does not forward ${method} ${rawPath}: ${why}; it forwards ${ALLOWED_ROUTES}`,
  });
  if (!rawPath.startsWith('/')) return deny('expected a path that starts with /');
  if (/%2f|%5c/i.test(rawPath)) return deny('encoded slashes are not allowed in the path');
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return deny('the path is not valid percent-encoding');
  }
  if (decoded.includes('\\')) return deny('backslashes are not allowed in the path');
  const segments = decoded.slice(1).split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return deny('empty, "." and ".." segments are not allowed in the path');
  if (segments[0] !== 'v1') return deny('the gateway serves /v1/...');
  const rest = segments.slice(1);
  const joined = rest.join('/');
  if (POST_ENDPOINTS.has(joined)) {
    if (method !== 'POST') return deny('this route takes POST');
    return { allowed: true, route: { endpoint: joined as Endpoint, upstreamPath: `/${joined}` } };
  }
  if (rest[0] === 'models') {
    if (method !== 'GET') return deny('this route takes GET');
    // Model ids may hold slashes ("meta-llama/Llama-3.1-8B"); each segment is re-encoded on its own.
    return { allowed: true, route: { endpoint: 'models', upstreamPath: ['', ...rest].map(encodeURIComponent).join('/') } };
  }
  return deny('not on the allow-list');
}

/**
 * CORS for browser clients (`CORS_ORIGINS`), on `@fastify/cors`. Registered at the root before the
 * rate limiter, so that its `onRequest` hook runs first: a preflight is answered there (204) and
 * never reaches the rate limit or authentication. A browser sends a preflight without credentials
 * and cannot read its answer's body, so counting it or answering it 401 would only break the real
 * request that follows; a preflight does no work on the catalogue.
 *
 * Unset, the plugin is not registered at all: no CORS headers on any answer, and OPTIONS is the
 * 405 of any other method (docs/api.md#paths), as it always was.
 */
import fastifyCors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CorsOrigins } from './config.ts';
import { isKnownPath, pathOf } from './routes/fallback.ts';

/** Request headers a browser client may send: credentials and the local-testing bypass. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'X-Bypass-Auth'] as const;

/**
 * Response headers a browser client may read besides the safelisted ones (Cache-Control,
 * Content-Type, …): the ETag to revalidate with If-None-Match, the rate-limit headers to pace
 * itself, and Retry-After to know how long to wait after a 429.
 */
export const CORS_EXPOSED_HEADERS = [
  'ETag',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
] as const;

/**
 * How long a browser may reuse a preflight's answer, in seconds. Chromium caps it at 2 hours and
 * Firefox at 24; 10 minutes spares most preflights while a change of CORS_ORIGINS reaches open
 * pages soon.
 */
export const CORS_MAX_AGE_SECONDS = 600;

/** A preflight: OPTIONS with `Origin` and `Access-Control-Request-Method` (Fetch standard). */
function isPreflight(request: FastifyRequest): boolean {
  return (
    request.method === 'OPTIONS' &&
    request.headers.origin !== undefined &&
    request.headers['access-control-request-method'] !== undefined
  );
}

/** Registers CORS for `origins` at the app's root; does nothing when they are undefined. */
export async function registerCors(app: FastifyInstance, origins: CorsOrigins): Promise<void> {
  if (origins === undefined) return;
  const options = {
    origin: origins === '*' ? '*' : [...origins],
    methods: ['GET', 'HEAD'],
    allowedHeaders: [...CORS_ALLOWED_HEADERS],
    exposedHeaders: [...CORS_EXPOSED_HEADERS],
    maxAge: CORS_MAX_AGE_SECONDS,
    // The credentials travel in the Authorization header the page sets, not in the browser's
    // cookie jar or HTTP-auth cache: `*` stays usable (browsers refuse it with credentials mode).
    credentials: false,
    hook: 'onRequest' as const,
  };
  // An OPTIONS that is not a preflight is no CORS request: it gets the 405 of any other method
  // (counted and in JSON) instead of the plugin's plain-text 400 "Invalid Preflight Request".
  // Nor is a preflight for a path the service does not serve: it gets the path's 404, which a
  // browser reads as the refusal it is, where a 204 would grant a request bound to fail.
  const notCors = { ...options, origin: false as const };
  await app.register(fastifyCors, {
    hook: 'onRequest',
    delegator: (request, callback) =>
      callback(
        null,
        request.method === 'OPTIONS' && !(isPreflight(request) && isKnownPath(app, pathOf(request)))
          ? notCors
          : options,
      ),
  });
}

/**
 * What answers when no route matches: 405 with `Allow: GET, HEAD` when the path exists for GET
 * (any other method on a known path), else the contract's 404. It runs as an `onRequest` hook of
 * the not-found handler's own scope, i.e. before Fastify reads a request body, so a POST with a
 * malformed or oversized body still gets 405/404 rather than a body-parsing error.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type ApiError, methodNotAllowed, notFound } from '../errors.ts';
import { redactUserInfo } from '../request-log.ts';

export async function fallbackRoutes(app: FastifyInstance): Promise<void> {
  const reject = async (request: FastifyRequest) => {
    const path = pathOf(request);
    // A GET lands here too when a wildcard route finds nothing (a missing docs asset): that is a 404.
    const other = request.method !== 'GET' && request.method !== 'HEAD';
    if (other && isKnownPath(app, path)) throw methodNotAllowed(request.method, shownPath(path));
    throw unknownPath(path);
  };
  app.addHook('onRequest', reject);
  app.setNotFoundHandler(reject);
}

/** Whether GET serves `path` (a path without query, as received). */
export function isKnownPath(app: FastifyInstance, path: string): boolean {
  const route = app.findRoute({ method: 'GET', url: routableUrl(path) });
  return route !== null && !hasEmptyParam(route.params);
}

/**
 * The URL a request is routed again with when the router refused it (app.ts). It refuses a path whose
 * percent-encoding does not decode (`/quotes/%ZZ`, `/quotes/%C3%28`) before any hook runs, so
 * such a request would skip the rate limit and authentication that the contract puts before
 * every 400 of a quote path. Its `%` signs are escaped instead: the path then routes as the
 * text it literally holds, and answers what that text deserves (`id must be an integer`, or an
 * unknown path) after the same checks as any other request. Paths that decode are untouched.
 */
export function routableUrl(url: string): string {
  let end = url.indexOf('?');
  if (end === -1) end = url.length;
  const percent = url.indexOf('%');
  if (percent === -1 || percent > end) return url;
  const path = url.slice(0, end);
  try {
    decodeURIComponent(path);
    return url;
  } catch {
    return path.replaceAll('%', '%25') + url.slice(end);
  }
}

/**
 * The 404 of a request to a parametric route whose parameter is empty, else undefined. The router
 * lets a parameter match an empty segment (`/quotes/` matches `/quotes/:id`), but such a path is
 * no resource, like every other trailing slash (`/health/`, `/api/v1/quotes/`). Scopes with
 * parametric routes check it in their first `onRequest` hook, before their own checks
 * (authentication), so that it answers as the fallback would.
 */
export function emptyParamError(request: FastifyRequest): ApiError | undefined {
  return hasEmptyParam(request.params) ? unknownPath(pathOf(request)) : undefined;
}

function hasEmptyParam(params: unknown): boolean {
  if (typeof params !== 'object' || params === null) return false;
  return Object.values(params).some((value) => value === '');
}

/** The path as the client sent it (before {@link routableUrl}), without the query. */
export function pathOf(request: FastifyRequest): string {
  const url = request.originalUrl;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** A client's path as the details of an answer echo it: without credentials, cut at 100 characters. */
export function shownPath(path: string): string {
  const shown = redactUserInfo(path);
  return shown.length > 100 ? `${shown.slice(0, 100)}…` : shown;
}

/** The 404 of a path nothing serves, naming it. */
export function unknownPath(path: string): ApiError {
  return notFound(`No resource at ${shownPath(path)}`);
}

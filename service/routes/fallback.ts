/**
 * What answers when no route matches: 405 with `Allow: GET, HEAD` when the path exists for GET
 * (any other method on a known path), else the contract's 404. It runs as an `onRequest` hook of
 * the not-found handler's own scope, i.e. before Fastify reads a request body, so a POST with a
 * malformed or oversized body still gets 405/404 rather than a body-parsing error.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { methodNotAllowed, notFound } from '../errors.ts';

export async function fallbackRoutes(app: FastifyInstance): Promise<void> {
  const reject = async (request: FastifyRequest) => {
    const url = request.raw.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    // A GET lands here too when a wildcard route finds nothing (a missing docs asset): that is a 404.
    const other = request.method !== 'GET' && request.method !== 'HEAD';
    if (other && app.findRoute({ method: 'GET', url: path }) !== null) {
      throw methodNotAllowed(request.method, path);
    }
    throw notFound(`No resource at ${path.length > 100 ? `${path.slice(0, 100)}…` : path}`);
  };
  app.addHook('onRequest', reject);
  app.setNotFoundHandler(reject);
}

/**
 * `/health` and `/ready` (api-contract.md section 1). Registered outside the authenticated and
 * rate-limited scope: orchestrators probe them without credentials.
 */
import type { FastifyInstance } from 'fastify';
import type { CatalogueIndex } from '../catalogue/port.ts';
import { unavailable } from '../errors.ts';
import { NO_STORE } from '../etag.ts';
import { healthSchema, readySchema } from '../schemas.ts';

export interface HealthRoutesOptions {
  catalogue: CatalogueIndex;
}

export async function healthRoutes(app: FastifyInstance, { catalogue }: HealthRoutesOptions): Promise<void> {
  app.get('/health', { schema: healthSchema }, async (_request, reply) => {
    reply.header('cache-control', NO_STORE);
    return { status: 'ok' };
  });

  // info() throws CatalogueUnavailableError while no catalogue is open: the error handler
  // answers it with the 503 Error object, like on every other path.
  app.get('/ready', { schema: readySchema }, async (_request, reply) => {
    await catalogue.info();
    // With RATE_LIMIT_FAIL=open a Redis outage does not stop serving, so it does not make the
    // replica unready either; with `closed` every quote request would be a 503.
    const limiter = await app.rateLimitHealth();
    if (!limiter.serving) {
      throw unavailable('not ready: the Redis rate-limit store does not answer (RATE_LIMIT_FAIL=closed)');
    }
    reply.header('cache-control', NO_STORE);
    return { status: 'ready' };
  });
}

/**
 * `/health` and `/ready` (docs/api.md#paths). Registered outside the authenticated and
 * rate-limited scope: orchestrators probe them without credentials.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CatalogueIndex } from '../catalogue/port.ts';
import { type ApiError, toApiError, unavailable } from '../errors.ts';
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

  // A probe that finds the replica unready answers 503 every few seconds for as long as that
  // lasts: the cause is logged when it appears or changes, and the recovery once, rather than
  // a warning per probe.
  let problem: string | null = null;
  const notReady = (request: FastifyRequest, details: string, reason: string, cause?: unknown): ApiError => {
    if (reason !== problem) request.log.warn(`not ready: ${reason}`);
    problem = reason;
    return unavailable(details, cause, { reported: true });
  };

  app.get('/ready', { schema: readySchema }, async (request, reply) => {
    const failure = catalogue.recentFailure?.();
    if (failure !== undefined) {
      // A request just found the engine failing: answering from a read that may take the whole
      // timeout would keep this replica ready meanwhile. A read in the background tells when the
      // engine answers again.
      catalogue.info().catch(() => {});
      const { apiError } = toApiError(failure);
      throw notReady(request, apiError.details, failure.message, failure);
    }
    try {
      await catalogue.info();
    } catch (error) {
      const { apiError } = toApiError(error);
      if (apiError.statusCode !== 503) throw error;
      throw notReady(
        request,
        apiError.details,
        error instanceof Error ? error.message : apiError.details,
        error,
      );
    }
    // With RATE_LIMIT_FAIL=open a Redis outage does not stop serving, so it does not make the
    // replica unready either; with `closed` every quote request would be a 503.
    const limiter = await app.rateLimitHealth();
    if (!limiter.serving) {
      const reason = 'the Redis rate-limit store does not answer (RATE_LIMIT_FAIL=closed)';
      throw notReady(request, `not ready: ${reason}`, reason);
    }
    if (problem !== null) request.log.info({ after: problem }, 'ready again');
    problem = null;
    reply.header('cache-control', NO_STORE);
    return { status: 'ready' };
  });
}

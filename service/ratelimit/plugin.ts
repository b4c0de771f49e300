/**
 * Rate limiting of the quote paths (docs/api.md#rate-limiting), on `@fastify/rate-limit` with the
 * service's own stores, clock-minute windows, Error objects and failure policy.
 *
 * It adds one `onRequest` hook at the app's root (the plugin is not encapsulated). Fastify runs
 * root hooks before the hooks of child scopes and root hooks in registration order, so the limit
 * is checked before authentication (401s and 403s are counted, password guessing is limited) when
 * the plugin is registered before any root-level authentication hook. The hook applies to every
 * route, whenever declared, and to requests that match no route: a 404 or 405 under a quote path
 * is counted like any other answer of that path.
 */
import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { ApiError, unavailable } from '../errors.ts';
import type { ServiceMetrics } from '../metrics.ts';
import { decodePercent } from '../query.ts';
import { createRedisClient } from '../redis.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore } from './redis-store.ts';
import {
  type Clock,
  type HitCallback,
  type RateLimitStore,
  StoreUnavailableError,
  WINDOW_MS,
} from './store.ts';

export interface RateLimitPluginOptions {
  config: Config['rateLimit'];
  /** Clock of the in-memory store (the Redis store uses Redis TIME). Default `Date.now`. */
  clock?: Clock;
  metrics?: ServiceMetrics;
  /** Where store failures are reported; default the app's logger. */
  logger?: FastifyBaseLogger;
  /**
   * A store to use instead of the one `config` describes. The plugin does not close it.
   * For tests (a Redis store on a test clock) and for sharing one store between apps.
   */
  store?: RateLimitStore;
  /** Cap of the in-memory store (see MemoryStore). */
  maxKeys?: number;
  /** Which requests count; default {@link isQuoteRequest}. */
  isCounted?: (request: FastifyRequest) => boolean;
  /** Shortest interval between two warnings about store failures. Default 10 s. */
  warnIntervalMs?: number;
}

/** State of the rate-limit store, for `/ready`. */
export interface RateLimitHealth {
  store: 'memory' | 'redis';
  /** The store answered a check just now (always true in memory). */
  reachable: boolean;
  /**
   * Whether quote requests can be served: false only when the store is unreachable and
   * `RATE_LIMIT_FAIL=closed`, in which case they answer 503.
   */
  serving: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Checks the rate-limit store (at most about 0.5 s); never throws. */
    rateLimitHealth(): Promise<RateLimitHealth>;
  }
}

/** The quote paths: `/quotes`, `/quotes/…` and `/api/v1/quotes`; and `/authors`, `/works` and their ids. */
export function isQuotePath(path: string): boolean {
  return (
    isDirectoryPath(path) ||
    path === '/quotes' ||
    path.startsWith('/quotes/') ||
    path === '/api/v1/quotes' ||
    path.startsWith('/api/v1/quotes/')
  );
}

/** `/authors`, `/works` and what lies below them: counted as the quote paths are. */
function isDirectoryPath(path: string): boolean {
  return (
    path === '/authors' || path.startsWith('/authors/') || path === '/works' || path.startsWith('/works/')
  );
}

/**
 * Whether a request is counted: a request whose route pattern is a quote path, or that matched
 * no route and whose decoded path is one. The route pattern decides when there is one, because
 * the router decodes the URL (`/quot%65s` is served by `/quotes`) and a prefix test on the raw
 * URL would let such requests through uncounted.
 */
export function isQuoteRequest(request: FastifyRequest): boolean {
  const pattern = request.routeOptions.url;
  // `*` is the catch-all OPTIONS route of CORS: the path, not the pattern, says what was asked.
  return isQuotePath(pattern === undefined || pattern === '*' ? decodedPath(request.url) : pattern);
}

function decodedPath(url: string): string {
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  return decodePercent(path) ?? path;
}

/**
 * Whether `error` is the 503 this plugin answers under `RATE_LIMIT_FAIL=closed`. The plugin already
 * logs those failures (one warning per 10 s), so an error handler can skip logging them.
 */
export function isRateLimitStoreFailure(error: unknown): boolean {
  return error instanceof ApiError && error.cause instanceof StoreUnavailableError;
}

/** The 429 (docs/api.md#rate-limiting): the limit and the wait in `details`, the wait in `Retry-After`. */
export function tooManyRequests(max: number, ttlMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
  const requests = max === 1 ? 'request' : 'requests';
  const unit = seconds === 1 ? 'second' : 'seconds';
  return new ApiError(
    429,
    `Rate limit of ${max} ${requests} per minute exceeded; retry in ${seconds} ${unit}`,
    {
      headers: {
        'retry-after': String(seconds),
        'x-ratelimit-limit': String(max),
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(seconds),
      },
    },
  );
}

function createStore(options: RateLimitPluginOptions, logger: FastifyBaseLogger): RateLimitStore {
  const { config, metrics } = options;
  if (config.store === 'redis') {
    if (config.redisUrl === undefined) throw new Error('RATE_LIMIT_STORE=redis needs REDIS_URL');
    return new RedisStore({ client: createRedisClient(config.redisUrl, { logger }), ownsClient: true });
  }
  return new MemoryStore({
    clock: options.clock,
    maxKeys: options.maxKeys,
    onEvict: metrics === undefined ? undefined : () => metrics.rateLimitEvictions.inc(),
  });
}

/** The store protocol of @fastify/rate-limit: a class whose `incr` answers through a callback. */
function storeClass(store: RateLimitStore) {
  return class RateLimitStoreAdapter {
    incr(key: string, callback: HitCallback): void {
      store.count(key, callback);
    }
    // One count per client across every quote path, so route-level children share the store.
    child(): RateLimitStoreAdapter {
      return this;
    }
  };
}

async function registerRateLimit(app: FastifyInstance, options: RateLimitPluginOptions): Promise<void> {
  const { config, metrics } = options;
  const logger = options.logger ?? app.log;
  const store = options.store ?? createStore(options, logger);
  if (options.store === undefined) app.addHook('onClose', () => store.close());
  const isCounted = options.isCounted ?? isQuoteRequest;
  const warnIntervalMs = options.warnIntervalMs ?? 10_000;

  await app.register(fastifyRateLimit, {
    // No per-route hooks: the one hook below also covers unmatched paths, whatever the order in
    // which routes are declared.
    global: false,
    max: config.max,
    timeWindow: WINDOW_MS,
    store: storeClass(store),
    // Store failures reach the hook below, which applies RATE_LIMIT_FAIL.
    skipOnError: false,
    onExceeded: () => metrics?.rateLimitRejections.inc(),
    errorResponseBuilder: (_request, context) => tooManyRequests(context.max, context.ttl),
  });
  const limit = app.rateLimit();

  let storeUp = true;
  let lastWarning = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  metrics?.rateLimitStoreUp.set(1);
  const markUp = (up: boolean): void => {
    if (up === storeUp) return;
    storeUp = up;
    metrics?.rateLimitStoreUp.set(up ? 1 : 0);
    if (!up) return;
    // The failures left out since the last warning belong to this outage: said now, not in the
    // first warning of the next one.
    logger.info(
      { store: store.kind, suppressedSinceLastWarning: suppressed },
      'Rate-limit store answers again; requests are counted',
    );
    suppressed = 0;
  };
  const storeFailed = (error: StoreUnavailableError): void => {
    metrics?.rateLimitStoreFailures.inc();
    markUp(false);
    // One warning per interval: an outage under load would otherwise log every request.
    const now = performance.now();
    if (now - lastWarning < warnIntervalMs) {
      suppressed++;
      return;
    }
    const policy =
      config.fail === 'open'
        ? 'requests are served without rate limiting (RATE_LIMIT_FAIL=open)'
        : 'quote requests answer 503 (RATE_LIMIT_FAIL=closed)';
    logger.warn(
      { store: store.kind, reason: error.message, suppressedSinceLastWarning: suppressed },
      `Rate-limit store unavailable; ${policy}`,
    );
    lastWarning = now;
    suppressed = 0;
  };

  // A callback hook rather than an async one: it runs for every quote request, and each async
  // layer costs a promise and a turn of the microtask queue.
  const served = (done: HookHandlerDoneFunction) => () => {
    if (!storeUp) markUp(true);
    done();
  };
  const refused = (done: HookHandlerDoneFunction) => (error: unknown) => {
    if (!(error instanceof StoreUnavailableError)) {
      // A 429 is an answer of the store too.
      if (!storeUp && error instanceof ApiError) markUp(true);
      done(error as Error);
      return;
    }
    storeFailed(error);
    if (config.fail === 'closed') {
      done(unavailable('Rate limiting is unavailable (its store does not answer); retry shortly', error));
      return;
    }
    // Fail open: served, uncounted, and without rate-limit headers, which would be guesses.
    done();
  };
  app.addHook('onRequest', function rateLimitQuotes(request, reply, done) {
    if (!isCounted(request)) {
      done();
      return;
    }
    limit.call(app, request, reply).then(served(done), refused(done));
  });

  if (store instanceof RedisStore) {
    // Give the connection a moment at start, so the first requests are counted rather than
    // failing open with a warning; past it the service starts anyway and Redis joins later.
    app.addHook('onReady', async () => {
      if (!(await store.connected(1000))) {
        markUp(false);
        logger.warn(
          { store: store.kind, fail: config.fail },
          'Rate-limit store not reachable at start; RATE_LIMIT_FAIL applies until it is',
        );
      }
    });
  }

  app.decorate('rateLimitHealth', async (): Promise<RateLimitHealth> => {
    const reachable = await store.ping();
    markUp(reachable);
    return { store: store.kind, reachable, serving: reachable || config.fail === 'open' };
  });
}

/**
 * The rate-limit plugin (see {@link RateLimitPluginOptions}); not encapsulated, so its hook
 * applies to the whole app. Decorates the app with {@link FastifyInstance.rateLimitHealth}.
 */
export const rateLimit = fp(registerRateLimit, {
  name: 'quotes-rate-limit',
  fastify: '5.x',
});

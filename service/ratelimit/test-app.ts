/**
 * Test support for the rate-limit suites (not used by the service): a small Fastify app shaped
 * like the real one where rate limiting is concerned: the same error vocabulary and handler
 * behaviour, the limiter registered before an authentication hook, quote routes that answer
 * 200/404/405, and /health and /ready outside the limit.
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { createMetrics, metricsPlugin, type ServiceMetrics } from '../metrics.ts';
import { type RateLimitPluginOptions, rateLimit } from './plugin.ts';

export interface TestApp {
  app: FastifyInstance;
  metrics: ServiceMetrics;
  /** Log records at the app's level (warn unless `logLevel` says otherwise) and above. */
  logs: Array<{ level: number; msg: string; [key: string]: unknown }>;
  /** Every error the error handler received, in order. */
  errors: unknown[];
}

export interface TestAppOptions extends Omit<RateLimitPluginOptions, 'config'> {
  config?: Partial<Config['rateLimit']>;
  trustProxy?: boolean;
  /** Level of the app's logger; default warn. */
  logLevel?: 'warn' | 'info';
}

const KNOWN_PATHS = ['/quotes', '/quotes/:id', '/api/v1/quotes'];
const OTHER_METHODS = ['DELETE', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const;

/** Builds the app; the caller closes it. Requests need `authorization: Basic ok` or get 401. */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const logs: TestApp['logs'] = [];
  const errors: unknown[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') logs.push(JSON.parse(line));
      callback();
    },
  });
  const app = Fastify({
    logger: { level: options.logLevel ?? 'warn', stream },
    trustProxy: options.trustProxy ?? false,
  });
  const metrics = options.metrics ?? createMetrics();
  const { config, trustProxy: _trustProxy, logLevel: _logLevel, ...pluginOptions } = options;

  app.setErrorHandler((error: FastifyError | ApiError, _request, reply) => {
    errors.push(error);
    if (error instanceof ApiError) {
      return reply.code(error.statusCode).headers(error.headers).send(error.toBody());
    }
    return reply.code(500).send({ code: 500, error: 'internal_server_error', details: 'Unexpected error' });
  });
  app.setNotFoundHandler((request, reply) => {
    const body = new ApiError(404, `No route for ${request.method} ${request.url.split('?')[0]}`).toBody();
    return reply.code(404).send(body);
  });

  await app.register(metricsPlugin, { metrics });
  await app.register(rateLimit, {
    config: { max: 5, store: 'memory', redisUrl: undefined, fail: 'open', ...config },
    metrics,
    ...pluginOptions,
  });
  // Authentication after the limiter, as in the service: 401s are counted.
  app.addHook('onRequest', async (request) => {
    if (request.url === '/health' || request.url === '/ready' || request.url === '/metrics') return;
    if (request.headers.authorization !== 'Basic ok') {
      throw new ApiError(401, 'Missing or wrong credentials', {
        headers: { 'www-authenticate': 'Basic realm="quotes", charset="UTF-8"' },
      });
    }
  });

  app.get('/quotes', async () => ({ data: [], total: 0 }));
  app.get('/api/v1/quotes', async () => ({ data: [] }));
  app.get<{ Params: { id: string } }>('/quotes/:id', async (request) => {
    if (request.params.id !== '1') throw new ApiError(404, `No quote has id '${request.params.id}'`);
    return { id: '1', text: 'To be, or not to be' };
  });
  for (const url of KNOWN_PATHS) {
    app.route({
      method: [...OTHER_METHODS],
      url,
      handler: async () => {
        throw new ApiError(405, 'Only GET and HEAD are allowed here', { headers: { allow: 'GET, HEAD' } });
      },
    });
  }
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    const health = await app.rateLimitHealth();
    return health.serving
      ? { status: 'ready' }
      : reply.code(503).send(new ApiError(503, 'Rate-limit store unreachable').toBody());
  });
  await app.ready();
  return { app, metrics, logs, errors };
}

/** Headers every counted response carries, parsed. */
export function rateLimitHeaders(headers: Record<string, unknown>) {
  const number = (name: string) => (headers[name] === undefined ? undefined : Number(headers[name]));
  return {
    limit: number('x-ratelimit-limit'),
    remaining: number('x-ratelimit-remaining'),
    reset: number('x-ratelimit-reset'),
    retryAfter: number('retry-after'),
  };
}

/** A clock the test moves by hand. */
export function manualClock(start: number): {
  now: () => number;
  set(ms: number): void;
  advance(ms: number): void;
} {
  let current = start;
  return {
    now: () => current,
    set(ms) {
      current = ms;
    },
    advance(ms) {
      current += ms;
    },
  };
}

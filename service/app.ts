/**
 * The app factory: one Fastify instance serving the contract (docs/api.md), shared by tests
 * (`app.inject`) and `server.ts`, with the same options in both. It never listens.
 */
import type { Socket } from 'node:net';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { createAuthenticator } from './auth.ts';
import { asOneRequest } from './catalogue/budget.ts';
import { openCatalogue } from './catalogue/open.ts';
import type { CatalogueIndex } from './catalogue/port.ts';
import { type Config, DEVELOPMENT_USER } from './config.ts';
import { registerCors } from './cors.ts';
import { badRequest, toApiError } from './errors.ts';
import { AnswerCache, NO_STORE } from './etag.ts';
import { FailureLog } from './failure-log.ts';
import {
  answerAfterInFlight,
  answerWhatNodeWouldNot,
  HTTP_OPTIONS,
  type KnownPath,
  MAX_HEADER_BYTES,
  type RawAnswerListener,
  REQUEST_TIMEOUT_MS,
  rawResponse,
  unknownMethodAnswer,
} from './http-server.ts';
import { createMetrics, metricsPlugin, rawAnswerRecorder, responseRecorder } from './metrics.ts';
import openApi from './openapi.ts';
import { isRateLimitStoreFailure, rateLimit } from './ratelimit/plugin.ts';
import { lazyChildLogger, RequestLogController, serializeRequest } from './request-log.ts';
import { authorRoutes } from './routes/authors.ts';
import { facetRoutes } from './routes/facets.ts';
import { emptyParamError, fallbackRoutes, isKnownPath, routableUrl } from './routes/fallback.ts';
import { healthRoutes } from './routes/health.ts';
import { quoteRoutes } from './routes/quotes.ts';
import { todayRoutes } from './routes/today.ts';
import { v1Routes } from './routes/v1.ts';
import { DIRECTORY_SCHEMAS, SHARED_SCHEMAS } from './schemas.ts';

/** What tests (and the rate limiter) may inject instead of the real thing. */
export interface AppDeps {
  /** A catalogue to serve instead of opening the configured one; its owner closes it. */
  catalogue?: CatalogueIndex;
  /** Wall clock in milliseconds, for time-window logic (rate limiting); defaults to Date.now. */
  now?: () => number;
  /** Where log lines go instead of stdout (tests read them to prove redaction). */
  logStream?: { write(line: string): void };
  /**
   * Runs with the app's logger before the catalogue is opened: `server.ts` builds the catalogue
   * from the bundled data on first start, so the first request finds it.
   */
  prepare?: (log: FastifyBaseLogger) => Promise<void>;
}

/**
 * Log paths that could carry credentials. Fastify's request serialiser logs no headers, but a
 * handler or plugin logging a request or its headers must not leak them either.
 */
const REDACTED = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["proxy-authorization"]',
  'headers["x-api-key"]',
  'headers.cookie',
  'authorization',
  'password',
  '*.password',
  'users',
  '*.users',
];

/** Deliberate server limits: no endpoint takes a body, and slow clients must not hold sockets. */
const SERVER_LIMITS = {
  bodyLimit: 1024,
  /**
   * Idle keep-alive sockets are closed after this long: longer than the idle timeout of common
   * load balancers (60 s), so the proxy, not the service, closes them and no request races a close.
   */
  keepAliveTimeout: 72_000,
  /** A whole request (headers included) must arrive within this. */
  requestTimeout: REQUEST_TIMEOUT_MS,
  /** Idle socket timeout; above keepAliveTimeout so it never cuts a keep-alive socket short. */
  connectionTimeout: 75_000,
  /**
   * As long as the longest request line Node accepts (request line and headers are limited to
   * MAX_HEADER_BYTES): a segment is never refused by the router before the hooks run (that would
   * skip the rate limit and authentication); a 200-digit id answers 404 like any unknown id.
   */
  maxParamLength: MAX_HEADER_BYTES,
};

/**
 * Serialised answers kept per request key: repeated requests (the common case for a catalogue that
 * changes only when re-indexed) skip the query and the serialisation. A page of 100 full quotes
 * is about 60 KB, so the bounds hold it to 16 MB (outside the V8 heap: the answers are bytes).
 */
const ANSWER_CACHE = { maxEntries: 2_000, maxBytes: 16_000_000 };

/**
 * Builds the app. Opens the configured catalogue and closes it with the app, unless one is
 * injected. An unreachable backend or a missing catalogue makes `/ready` 503, not a failed
 * start; only `deps.prepare` failing or a programming error rejects.
 */
export async function buildApp(config: Config, deps: AppDeps = {}): Promise<FastifyInstance> {
  const metrics = createMetrics();
  // The server and the client-error handler look routes up; they exist before the routes do.
  const knownPath = (path: string) => isKnownPath(app, path);
  const recordRaw = rawAnswerRecorder(metrics);
  const failures = new FailureLog(deps.now ?? Date.now);
  const app: FastifyInstance = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACTED, censor: '[redacted]' },
      serializers: { req: serializeRequest },
      ...(deps.logStream === undefined ? {} : { stream: deps.logStream }),
    },
    // Request lines at debug, per-request loggers built only when used, and the metrics of every
    // finished request recorded without a hook of their own (see request-log.ts).
    logController: new RequestLogController({ onCompleted: responseRecorder(metrics) }),
    childLoggerFactory: lazyChildLogger,
    trustProxy: trustProxy(config.trustProxy),
    bodyLimit: SERVER_LIMITS.bodyLimit,
    http: HTTP_OPTIONS,
    keepAliveTimeout: SERVER_LIMITS.keepAliveTimeout,
    requestTimeout: SERVER_LIMITS.requestTimeout,
    connectionTimeout: SERVER_LIMITS.connectionTimeout,
    routerOptions: {
      maxParamLength: SERVER_LIMITS.maxParamLength,
      // Handlers read request.raw.url through query.ts, which keeps what this parser would lose
      // (order, repeats, decoding errors); skipping it saves parsing every query string twice.
      querystringParser: () => ({}),
    },
    // Fastify's own 503 while closing has its own body shape; requests that still arrive on open
    // connections during the drain are served normally instead, with Connection: close.
    return503OnClosing: false,
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      // A path the router cannot decode is routed again as its literal text (see routableUrl),
      // so that it meets the rate limit and authentication like any other request. Done here
      // rather than in rewriteUrl, which would cost every request a call and a property.
      const raw = request.raw;
      const url = error.code === 'FST_ERR_BAD_URL' ? routableUrl(raw.url ?? '/') : raw.url;
      if (url !== raw.url) {
        (raw as typeof raw & { originalUrl?: string }).originalUrl = raw.url;
        raw.url = url;
        app.routing(raw, reply.raw);
        return;
      }
      sendError(request, reply, error, failures);
    },
    clientErrorHandler: (error, socket) => answerClientError(error, socket, knownPath, recordRaw),
  });

  answerWhatNodeWouldNot(app.server, app.routing, knownPath, recordRaw);

  // Requests are validated by query.ts with the contract's messages; the route schemas document
  // them (OpenAPI) and serialise responses, but never reject a request themselves.
  app.setValidatorCompiler(() => () => true);
  app.setErrorHandler((error, request, reply) => {
    sendError(request, reply, error, failures);
  });
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  for (const schema of DIRECTORY_SCHEMAS) app.addSchema(schema);

  await deps.prepare?.(app.log);
  const catalogue = deps.catalogue ?? (await openCatalogue(config, app.log));
  if (deps.catalogue === undefined) app.addHook('onClose', () => catalogue.close());
  if (config.auth.usingDevelopmentUser) {
    app.log.warn(`no AUTH_USERS configured: the development user '${DEVELOPMENT_USER.name}' is active`);
  } else if (config.auth.users.size === 0) {
    app.log.warn(
      config.auth.bypass === 'allow'
        ? 'no AUTH_USERS or AUTH_USERS_FILE configured: quote requests are served only with X-Bypass-Auth'
        : 'no AUTH_USERS or AUTH_USERS_FILE configured, and AUTH_BYPASS=deny: every quote request is refused',
    );
  }

  await app.register(metricsPlugin, {
    metrics,
    recordResponses: false,
    beforeScrape: async () => {
      // The store's gauge is read afresh too: without quote traffic nothing else would move it.
      await app.rateLimitHealth();
      const info = await catalogue.info();
      metrics.setCatalogue({ version: info.version, backend: catalogue.kind, documents: info.count });
    },
  });
  // Before the rate limiter: preflights are answered by this root hook, neither counted nor
  // authenticated (cors.ts).
  await registerCors(app, config.corsOrigins);
  // Root-level onRequest hook: it runs before the quote scope's authentication, as the contract's
  // check order requires (429 before 401), and also sees the 404/405 fallback of quote paths.
  await app.register(rateLimit, { config: config.rateLimit, clock: deps.now, metrics });
  await app.register(openApi);
  await app.register(healthRoutes, { catalogue });
  const authenticate = createAuthenticator(config.auth);
  const answers = new AnswerCache(ANSWER_CACHE);
  await app.register(async (quotes) => {
    // One hook for both checks, in the contract's order: an empty `:id` is an unknown path (404),
    // whoever asks; then credentials (401/403).
    quotes.addHook('onRequest', (request, _reply, done) =>
      done(emptyParamError(request) ?? authenticate(request)),
    );
    // Every engine read made for one request ends by one deadline (catalogue/budget.ts). The
    // embedded engine reads in process, with no deadline: its requests skip the wrapper's cost.
    if (catalogue.kind !== 'sqlite') {
      quotes.addHook('onRoute', (route) => {
        const handler = route.handler;
        route.handler = function (this: FastifyInstance, request, reply) {
          return asOneRequest(() => handler.call(this, request, reply));
        };
      });
    }
    await quotes.register(quoteRoutes, { catalogue, answers });
    await quotes.register(facetRoutes, { catalogue, answers });
    await quotes.register(todayRoutes, { catalogue, now: deps.now ?? Date.now });
    await quotes.register(v1Routes, { catalogue, answers });
    await quotes.register(authorRoutes, { catalogue, answers });
  });
  await app.register(fallbackRoutes);
  return app;
}

/** A hop count means "trust the n closest proxies", which is what proxy-addr does with a number. */
function trustProxy(
  setting: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof setting === 'number' ? (_address, hop) => hop < setting : setting;
}

/** Writes the contract's Error object for anything thrown; 5xx are logged, never explained. */
function sendError(request: FastifyRequest, reply: FastifyReply, error: unknown, failures: FailureLog): void {
  const { apiError, internal } = toApiError(error);
  // Store failures are logged by the rate limiter itself, at most once per 10 s.
  if (internal && !apiError.reported && !isRateLimitStoreFailure(error))
    failures.log(request, apiError, error);
  reply
    .code(apiError.statusCode)
    .headers(apiError.headers)
    .header('cache-control', NO_STORE)
    .type('application/json; charset=utf-8')
    .send(apiError.toBody());
}

/**
 * Malformed HTTP (unparsable request line, headers too large, too slow) never reaches Fastify's
 * routing; the socket still gets the Error object rather than Fastify's default body.
 */
function answerClientError(
  error: Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown },
  socket: Socket,
  knownPath: KnownPath,
  onAnswer: RawAnswerListener,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // Read now: the packet is the parser's buffer, which later data may overwrite.
  const answer =
    (error.code === 'HPE_INVALID_METHOD'
      ? unknownMethodAnswer(error.rawPacket, error.bytesParsed, knownPath)
      : undefined) ?? badRequest(clientErrorDetails(error.code));
  answerAfterInFlight(socket, error, () => {
    onAnswer('OTHER', answer.statusCode);
    socket.write(rawResponse(answer));
  });
}

function clientErrorDetails(code: string | undefined): string {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return `the request line and headers are too large (at most ${MAX_HEADER_BYTES / 1024} KiB)`;
  }
  return code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? 'the request did not arrive in time'
    : 'the request is not valid HTTP';
}

/**
 * How requests are logged. Two costs of Fastify's defaults are paid by every request, for log
 * lines most requests never write:
 *
 * - Every request gets a child logger bound to its id, and pino builds it eagerly (its
 *   formatters, and the bindings serialised through the redaction rules). {@link lazyChildLogger}
 *   builds it on the first call that writes a line at the configured level.
 * - At `info`, Fastify writes two lines per request ("incoming request", "request completed"),
 *   which would cost more than serving a cached answer. {@link RequestLogController} writes them at
 *   `debug`: the metrics count every request, `LOG_LEVEL=debug` shows them one by one, and
 *   failures are still logged at their own level.
 */
import {
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** What pino offers beyond FastifyBaseLogger, looked up rather than assumed. */
interface LevelAware {
  isLevelEnabled?(level: string): boolean;
}

/**
 * Stands for the child logger of one request until a line is written at an enabled level, then
 * becomes a front for the real child (which carries the request id, as Fastify's would).
 */
class LazyChildLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger & LevelAware;
  readonly #bindings: Record<string, unknown>;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger & LevelAware, bindings: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  #write(level: Level, args: unknown[]): void {
    if (this.#child === undefined && this.#parent.isLevelEnabled?.(level) === false) return;
    (this.#real()[level] as (...args: unknown[]) => void)(...args);
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings);
    return this.#child;
  }
}

/**
 * Fastify's `childLoggerFactory`: a {@link LazyChildLogger}, or the real child at once when the
 * route asks for its own level or serialisers (which only the real child can apply).
 */
export const lazyChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => {
  return isEmpty(options) ? new LazyChildLogger(logger, bindings) : logger.child(bindings, options);
};

/** Without allocating the array `Object.keys` would: this runs for every request. */
function isEmpty(object: object): boolean {
  for (const _key in object) return false;
  return true;
}

/** What {@link RequestLogController} does besides logging. */
export interface RequestLogOptions {
  /** Called once for every finished request, whether or not a line is logged for it. */
  onCompleted?: (request: FastifyRequest, reply: FastifyReply) => void;
}

/**
 * Fastify's request log lines, at `debug` instead of `info` (failures keep their level). Fastify
 * tells it about every finished request, so it also hands them to `onCompleted` (the metrics),
 * which spares each request the `onResponse` hook that would otherwise do the same.
 */
export class RequestLogController extends LogController {
  readonly #onCompleted: RequestLogOptions['onCompleted'];

  constructor(options: RequestLogOptions = {}) {
    super();
    this.#onCompleted = options.onCompleted;
  }

  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    this.#onCompleted?.(request, reply);
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    } else {
      reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}

/**
 * An absolute-form URL with its user information replaced (`http://[redacted]@host/quotes`);
 * any other URL as it is. A client may send such a request target, and credentials must reach
 * neither the logs nor an answer's details.
 */
export function redactUserInfo(url: string): string {
  return url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#]*@/, '$1[redacted]@');
}

/**
 * Longest `Host` (or forwarded host) a log line holds: a DNS name (253) with a port fits. The
 * header is the client's to fill, up to the whole header limit.
 */
export const MAX_LOGGED_HOST = 256;

/**
 * A host as logged: user information (`alice:secret@host`, which no browser sends but anyone can)
 * replaced, and cut at {@link MAX_LOGGED_HOST} characters.
 */
export function shownHost(host: string): string {
  const at = host.lastIndexOf('@');
  const shown = at === -1 ? host : `[redacted]${host.slice(at)}`;
  return shown.length > MAX_LOGGED_HOST ? `${shown.slice(0, MAX_LOGGED_HOST)}…` : shown;
}

/**
 * Fastify's request serializer (the `req` of every log line), with the user information of the
 * URL and of the host taken out ({@link redactUserInfo}, {@link shownHost}). Anything logged as
 * `req` comes through here, a plain object included, so nothing in it is assumed.
 */
export function serializeRequest(request: Partial<FastifyRequest>): Record<string, unknown> {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? redactUserInfo(request.url) : undefined,
    version: request.headers?.['accept-version'],
    host: typeof request.host === 'string' ? shownHost(request.host) : undefined,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

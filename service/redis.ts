/**
 * The service's Redis connection, configured to fail fast: a request must never hang on Redis
 * (docs/api.md#rate-limiting), and the service must start while Redis is down and recover when
 * it returns.
 */
import { Redis } from 'ioredis';
import { CodedError } from './coded-error.ts';

/** The few logger methods used here (pino and Fastify's logger have them). */
export interface RedisLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface RedisClientOptions {
  logger?: RedisLogger;
  /** Longest wait for a TCP connection (and handshake) to Redis. */
  connectTimeoutMs?: number;
  /** Longest wait for one reply; past it the command fails (the connection stays). */
  commandTimeoutMs?: number;
  /** Shown by `CLIENT LIST`, to find the service's connections. */
  connectionName?: string;
}

/** Upper bound of the pause between two reconnection attempts. */
const MAX_RECONNECT_DELAY_MS = 2000;

/**
 * Creates a client for `url` and starts connecting in the background; it never throws for an
 * unreachable server. While disconnected every command fails at once (no offline queue);
 * reconnection attempts go on forever with a backoff capped at {@link MAX_RECONNECT_DELAY_MS}.
 * Connection loss and recovery are logged at info level, once per transition; failed attempts
 * at debug level (the callers decide what a failure means and warn about it).
 */
export function createRedisClient(url: string, options: RedisClientOptions = {}): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    // A command in flight when the connection drops is retried once after reconnecting; callers
    // bound the total wait with their own timeout anyway (see withTimeout).
    maxRetriesPerRequest: 1,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    commandTimeout: options.commandTimeoutMs ?? 500,
    retryStrategy: (attempt) => Math.min(100 * 2 ** (attempt - 1), MAX_RECONNECT_DELAY_MS),
    // The rate-limit store batches its own requests into one command per batch: ioredis's automatic
    // pipelining would only add a pipeline object and one more event-loop turn to each.
    enableAutoPipelining: false,
    connectionName: options.connectionName ?? 'quotes-service',
  });
  const logger = options.logger;
  const where = redactUrl(url);
  let connected = false;
  // Without an 'error' listener ioredis reports every failed attempt as an unhandled error.
  client.on('error', (error: Error) => {
    // A database number the server lacks fails only the SELECT: ioredis goes on in database 0, so
    // nothing else would show that the URL is wrong (replicas configured alike still share counts).
    if (/DB index is out of range/i.test(error.message)) {
      logger?.warn(
        { redis: where, err: error.message },
        'REDIS_URL names a database this Redis does not have; counting in database 0',
      );
    } else {
      logger?.debug({ redis: where, err: error.message }, 'Redis error');
    }
  });
  client.on('ready', () => {
    connected = true;
    logger?.info({ redis: where }, 'Redis connection ready');
  });
  client.on('close', () => {
    if (!connected) return;
    connected = false;
    logger?.info({ redis: where }, 'Redis connection lost; reconnecting in the background');
  });
  // The first attempt's failure is reported through 'error' and retried by retryStrategy.
  client.connect().catch(() => {});
  return client;
}

/** Answers true when Redis replies to PING within `timeoutMs`; never throws. */
export async function pingRedis(client: Redis, timeoutMs = 500): Promise<boolean> {
  try {
    return (await withTimeout(client.ping(), timeoutMs, 'Redis PING')) === 'PONG';
  } catch {
    return false;
  }
}

/** Resolves true once the client is connected, or false after `timeoutMs`; never throws. */
export function whenReady(client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    client.once('ready', onReady);
  });
}

/** Closes the connection politely when possible, at once otherwise; never throws. */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  try {
    await withTimeout(client.quit(), 1000, 'Redis QUIT');
  } catch {
    client.disconnect();
  }
}

/** Error of {@link withTimeout}. */
export class TimeoutError extends CodedError {
  override name = 'TimeoutError';
  readonly code = 'timeout';
}

/**
 * Settles like `promise`, or rejects with a {@link TimeoutError} after `ms` milliseconds: a bound
 * on a Redis call that does not depend on the client's own timeouts being right.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The URL without its password, fit for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis://(unparsable URL)';
  }
}

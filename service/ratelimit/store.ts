/**
 * The rate-limit store port (docs/api.md#rate-limiting). A store counts requests per client in
 * fixed windows aligned to the clock minute: every request in minute `floor(now / 60 s)` adds to
 * one count, and the count starts again at 1 when the next minute begins, whatever the time of
 * the first request. Adapters: `memory.ts` (one process) and `redis-store.ts` (every replica
 * shares one count per client, on Redis's clock).
 */
import { CodedError } from '../coded-error.ts';

/** Milliseconds since the Unix epoch, like `Date.now`. Injected so tests can cross a minute. */
export type Clock = () => number;

/** Length of one rate-limit window. */
export const WINDOW_MS = 60_000;

/** The result of counting one request. */
export interface Hit {
  /** Requests of this client in the current window, this one included (≥ 1). */
  current: number;
  /** Milliseconds until the window ends, from 1 to {@link WINDOW_MS}. */
  ttl: number;
}

/**
 * Receives the count of one request: a hit, or the store's failure. The shape of the callback of
 * @fastify/rate-limit's store protocol, so that the plugin's own callback can be passed through.
 * It must not throw: a store answers a whole batch of requests in one loop.
 */
export type HitCallback = (error: StoreUnavailableError | null, hit?: Hit) => void;

export interface RateLimitStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Counts one request of `key` in the current minute: the hit itself from a synchronous store,
   * a promise of it from the others. Fails only with {@link StoreUnavailableError}, and within
   * about one second.
   */
  hit(key: string): Hit | Promise<Hit>;
  /**
   * {@link hit} through a callback, called exactly once (synchronously by a synchronous store).
   * The rate-limit plugin counts every request this way, so that no store adds a promise of its
   * own to each request; `hit` serves the callers that want a value.
   */
  count(key: string, done: HitCallback): void;
  /** Whether the store answers right now (for readiness); never throws, never waits long. */
  ping(): Promise<boolean>;
  /** Releases what the store owns (a Redis connection it created); idempotent. */
  close(): Promise<void>;
}

/** The store could not count the request (Redis unreachable, slow or failing). */
export class StoreUnavailableError extends CodedError {
  override name = 'StoreUnavailableError';
  readonly code = 'rate_limit_store_unavailable';
}

/** Milliseconds from `now` to the start of the next clock minute: 1 to {@link WINDOW_MS}. */
export function msToNextWindow(now: number): number {
  return WINDOW_MS - (((now % WINDOW_MS) + WINDOW_MS) % WINDOW_MS);
}

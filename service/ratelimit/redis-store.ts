/**
 * Rate-limit store shared by every replica (`RATE_LIMIT_STORE=redis`). One atomic Lua script per
 * request reads Redis `TIME`, so all replicas agree on the current minute whatever their own
 * clocks say, and counts the request in that minute.
 */
import type { Redis } from 'ioredis';
import { closeRedisClient, pingRedis, whenReady, withTimeout } from '../redis.ts';
import { type Clock, type Hit, type RateLimitStore, StoreUnavailableError, WINDOW_MS } from './store.ts';

/**
 * KEYS[1]: the client's counter, a hash { w = window number, n = count }.
 * ARGV[1]: '' to use Redis TIME (always, in production), or a test clock's "now" in ms.
 * Returns { count, ms until the window ends }.
 *
 * The window lives in the value rather than in the key name because only the script knows the
 * window (it reads the time), and a script must name every key it touches in KEYS so it stays
 * valid under Redis Cluster and key-based ACLs. The expiry only frees memory; it is relative
 * (PEXPIRE) so that it also holds for a test clock that is far from Redis's own.
 * Needs Redis ≥ 5 (a script may write after reading TIME).
 */
export const HIT_SCRIPT = `
local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local window = math.floor(now / ${WINDOW_MS})
local ttl = (window + 1) * ${WINDOW_MS} - now
local current
if tonumber(redis.call('HGET', KEYS[1], 'w')) == window then
  current = redis.call('HINCRBY', KEYS[1], 'n', 1)
else
  redis.call('HSET', KEYS[1], 'w', window, 'n', 1)
  redis.call('PEXPIRE', KEYS[1], ttl + 1000)
  current = 1
end
return { current, ttl }
`;

const COMMAND = 'quotesRateLimitHit';

type HitCommand = (key: string, now: string) => Promise<[number, number]>;

export interface RedisStoreOptions {
  client: Redis;
  /** Prefix of every counter key. */
  prefix?: string;
  /** Longest wait for one count, on top of the client's own command timeout. */
  timeoutMs?: number;
  /** Close `client` with the store (when the store's owner created the client for it). */
  ownsClient?: boolean;
  /**
   * TEST ONLY: replaces Redis TIME in the script, so a test can cross a minute boundary
   * without waiting for one. Production leaves it unset: Redis is the one clock.
   */
  now?: Clock;
}

export class RedisStore implements RateLimitStore {
  readonly kind = 'redis';
  readonly client: Redis;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #ownsClient: boolean;
  readonly #now: Clock | undefined;
  readonly #hit: HitCommand;

  constructor(options: RedisStoreOptions) {
    this.client = options.client;
    this.#prefix = options.prefix ?? 'quotes:rl:';
    this.#timeoutMs = options.timeoutMs ?? 1000;
    this.#ownsClient = options.ownsClient ?? false;
    this.#now = options.now;
    // defineCommand sends EVALSHA, and EVAL once per connection (after a Redis restart too).
    if (!(COMMAND in this.client)) {
      this.client.defineCommand(COMMAND, { numberOfKeys: 1, lua: HIT_SCRIPT });
    }
    const command = (this.client as unknown as Record<typeof COMMAND, HitCommand>)[COMMAND];
    this.#hit = command.bind(this.client);
  }

  async hit(key: string): Promise<Hit> {
    const now = this.#now === undefined ? '' : String(this.#now());
    try {
      const [current, ttl] = await withTimeout(this.#hit(this.#prefix + key, now), this.#timeoutMs, 'Redis');
      return { current: Number(current), ttl: Number(ttl) };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new StoreUnavailableError(`Redis rate-limit store failed: ${reason}`, { cause: error });
    }
  }

  ping(): Promise<boolean> {
    return pingRedis(this.client);
  }

  /** Resolves true once connected, false after `timeoutMs` (the connection keeps trying). */
  connected(timeoutMs: number): Promise<boolean> {
    return whenReady(this.client, timeoutMs);
  }

  async close(): Promise<void> {
    if (this.#ownsClient) await closeRedisClient(this.client);
  }
}

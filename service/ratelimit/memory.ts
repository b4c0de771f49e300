/** In-process rate-limit store: exact for one process, the default (`RATE_LIMIT_STORE=memory`). */
import {
  type Clock,
  type Hit,
  type HitCallback,
  msToNextWindow,
  type RateLimitStore,
  WINDOW_MS,
} from './store.ts';

/** Default {@link MemoryStoreOptions.maxKeys}: at most about 20 MB of counters (IPv6 keys). */
export const DEFAULT_MAX_KEYS = 100_000;

export interface MemoryStoreOptions {
  clock?: Clock;
  /**
   * Most clients tracked within one minute. At the cap, counting a new client first forgets
   * the client seen first in that minute, whose count then starts again.
   */
  maxKeys?: number;
  /** Called once per forgotten client (exported as a metric). */
  onEvict?: () => void;
}

/**
 * Counts in one Map that holds only the current minute: the Map is emptied when the minute
 * changes, so memory never outlives a window, and it never holds more than `maxKeys` entries.
 *
 * Why evict at the cap rather than refuse new clients: refusing would let anyone who controls
 * many addresses lock every other client out. Evicting only helps a client that already
 * controls more than `maxKeys` addresses (or IPv6 /64 networks), and such a client gets
 * `maxKeys × RATE_LIMIT_MAX` requests a minute anyway.
 */
export class MemoryStore implements RateLimitStore {
  readonly kind = 'memory';
  readonly #clock: Clock;
  readonly #maxKeys: number;
  readonly #onEvict: (() => void) | undefined;
  readonly #counts = new Map<string, number>();
  /**
   * The minute's clients in the order they were first seen, as a ring once the cap is reached
   * (`#oldest` is then the next to forget). Asking the Map for its first key instead would scan
   * the slots its deletions leave behind, which makes every eviction slower than the last.
   */
  readonly #order: string[] = [];
  #oldest = 0;
  #window = Number.NaN;

  constructor(options: MemoryStoreOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!Number.isSafeInteger(this.#maxKeys) || this.#maxKeys < 1) {
      throw new RangeError(`maxKeys must be a positive integer, got ${this.#maxKeys}`);
    }
    this.#onEvict = options.onEvict;
  }

  /** Clients counted in the current minute. */
  get size(): number {
    return this.#counts.size;
  }

  hit(key: string): Hit {
    const now = this.#clock();
    const window = Math.floor(now / WINDOW_MS);
    if (window !== this.#window) {
      this.#forgetAll();
      this.#window = window;
    }
    const ttl = msToNextWindow(now);
    const count = this.#counts.get(key);
    if (count !== undefined) {
      this.#counts.set(key, count + 1);
      return { current: count + 1, ttl };
    }
    if (this.#counts.size < this.#maxKeys) {
      this.#order.push(key);
    } else {
      this.#counts.delete(this.#order[this.#oldest] as string);
      this.#order[this.#oldest] = key;
      this.#oldest = (this.#oldest + 1) % this.#maxKeys;
      this.#onEvict?.();
    }
    this.#counts.set(key, 1);
    return { current: 1, ttl };
  }

  count(key: string, done: HitCallback): void {
    done(null, this.hit(key));
  }

  #forgetAll(): void {
    this.#counts.clear();
    this.#order.length = 0;
    this.#oldest = 0;
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.#forgetAll();
  }
}

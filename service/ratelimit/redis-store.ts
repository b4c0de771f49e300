/**
 * Rate-limit store shared by every replica (`RATE_LIMIT_STORE=redis`). An atomic Lua script reads
 * Redis `TIME`, so all replicas agree on the current minute whatever their own clocks say, and
 * counts the requests in that minute.
 *
 * Requests are counted in batches: the requests that arrive while the previous call is in flight,
 * and while they keep arriving turn after turn, go to Redis as ONE script call that counts every
 * client of the batch, each client once with the number of its requests. Under load that
 * replaces one command (with its reply, promise and timer) per request by one per batch, on both
 * sides of the connection; counts stay exact, since each call is atomic and the requests of one
 * client in a batch get consecutive counts.
 */
import { createHash } from 'node:crypto';
import { Command, type Redis } from 'ioredis';
import { closeRedisClient, pingRedis, whenReady } from '../redis.ts';
import {
  type Clock,
  type Hit,
  type HitCallback,
  type RateLimitStore,
  StoreUnavailableError,
  WINDOW_MS,
} from './store.ts';

/**
 * KEYS: the counters of the batch's clients, each a hash { w = window number, n = count }.
 * ARGV[1]: '' to use Redis TIME (always, in production), or a test clock's "now" in ms.
 * ARGV[i + 1]: how many requests of the client KEYS[i] to count.
 * Returns { ms until the window ends, count of KEYS[1] after this call, count of KEYS[2], … }.
 *
 * The window lives in the value rather than in the key name because only the script knows the
 * window (it reads the time), and a script must name every key it touches in KEYS so that it
 * stays valid under key-based ACLs (under Redis Cluster, the keys of one call would also need
 * one hash slot: a prefix with a hash tag). The expiry only frees memory; it is relative
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
local counts = { ttl }
for i, key in ipairs(KEYS) do
  local requests = tonumber(ARGV[i + 1])
  if tonumber(redis.call('HGET', key, 'w')) == window then
    counts[i + 1] = redis.call('HINCRBY', key, 'n', requests)
  else
    redis.call('HSET', key, 'w', window, 'n', requests)
    redis.call('PEXPIRE', key, ttl + 1000)
    counts[i + 1] = requests
  end
end
return counts
`;

/** What EVALSHA names the script by. */
const HIT_SCRIPT_SHA = createHash('sha1').update(HIT_SCRIPT).digest('hex');

/**
 * Most clients counted by one script call: a script blocks Redis while it runs, so a huge batch
 * (a flood from many addresses) is split into calls of bounded length.
 */
export const MAX_KEYS_PER_CALL = 500;

/**
 * Bounds of the gathering of a batch once the way is free (see {@link RedisStore.count}): it is
 * sent when a turn of the event loop brings no new request, or when it holds this many requests,
 * or when its first request has waited this long, whichever comes first.
 */
export const GATHER_MAX_REQUESTS = 256;
export const GATHER_MAX_MS = 1;

export interface RedisStoreOptions {
  client: Redis;
  /** Prefix of every counter key. */
  prefix?: string;
  /**
   * Longest wait for one count, from the request's arrival, whether its batch was sent or still
   * waits; independent of the client's own command timeout. Default 1000 ms.
   */
  timeoutMs?: number;
  /** Close `client` with the store (when the store's owner created the client for it). */
  ownsClient?: boolean;
  /**
   * TEST ONLY: replaces Redis TIME in the script, so a test can cross a minute boundary
   * without waiting for one. Production leaves it unset: Redis is the one clock.
   */
  now?: Clock;
}

/** Requests counted by one script call, by counter key. */
interface Batch {
  /** ARGV[1] of the call. */
  readonly now: string;
  /** The callbacks of the requests waiting for their counts, by counter key, in arrival order. */
  readonly waiting: Map<string, HitCallback[]>;
  /** Requests in the batch. */
  requests: number;
  /** Requests in the batch when the previous turn of the event loop ended (see #sendNext). */
  requestsSeen: number;
  /** `performance.now()` when the first request joined. */
  readonly since: number;
  /** Fails the batch's requests one timeout after the first of them arrived, sent or not. */
  readonly timer: NodeJS.Timeout;
  settled: boolean;
}

export class RedisStore implements RateLimitStore {
  readonly kind = 'redis';
  readonly client: Redis;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #ownsClient: boolean;
  readonly #now: Clock | undefined;
  /** The connection the whole script was last sent on (EVAL): on it, EVALSHA is enough. */
  #loadedOn: unknown;
  /** Batches not sent yet, oldest first; new requests join the last one. */
  readonly #queue: Batch[] = [];
  /** The batch whose call awaits its reply; the next batch waits for it (or for its timeout). */
  #inFlight: Batch | null = null;
  #sendScheduled = false;
  readonly #sendNext = () => {
    this.#sendScheduled = false;
    if (this.#inFlight !== null) return;
    const batch = this.#queue[0];
    if (batch === undefined) return;
    if (
      // A batch with another queued behind it gets no more requests: they join the last one.
      this.#queue.length === 1 &&
      batch.requests > batch.requestsSeen &&
      batch.requests < GATHER_MAX_REQUESTS &&
      performance.now() - batch.since < GATHER_MAX_MS
    ) {
      // Requests came in this turn: more are likely next turn (answers just sent bring the next
      // requests of the same clients). One more turn gathers them, while the event loop keeps
      // working on other requests; a turn that brings none sends the batch, so an idle service
      // sends at once and a busy one never waits idle.
      batch.requestsSeen = batch.requests;
      this.#sendScheduled = true;
      setImmediate(this.#sendNext);
      return;
    }
    this.#queue.shift();
    this.#send(batch);
  };

  constructor(options: RedisStoreOptions) {
    this.client = options.client;
    this.#prefix = options.prefix ?? 'quotes:rl:';
    this.#timeoutMs = options.timeoutMs ?? 1000;
    this.#ownsClient = options.ownsClient ?? false;
    this.#now = options.now;
  }

  hit(key: string): Promise<Hit> {
    return new Promise((resolve, reject) => {
      this.count(key, (error, hit) => {
        if (error === null) resolve(hit as Hit);
        else reject(error);
      });
    });
  }

  /**
   * Counts the request in the batch being filled. One call is in flight at a time: the
   * requests that arrive meanwhile wait for its reply and then go together. Once the way is
   * free, the batch still gathers the requests of each following turn of the event loop, up to
   * {@link GATHER_MAX_REQUESTS} or {@link GATHER_MAX_MS}, and goes after the first turn that
   * brings none. So the busier the service, the larger the batches (each call costs a socket
   * write that wakes Redis, and a script run), and an idle one sends each request at once.
   * No request waits longer than the timeout from its arrival, queued or sent.
   */
  count(key: string, done: HitCallback): void {
    const now = this.#now === undefined ? '' : String(this.#now());
    let batch = this.#queue.at(-1);
    // A test clock that moved starts a new batch: one call counts at one instant.
    if (batch === undefined || batch.now !== now || batch.waiting.size >= MAX_KEYS_PER_CALL) {
      batch = this.#newBatch(now);
      this.#queue.push(batch);
    }
    const counter = this.#prefix + key;
    let waiting = batch.waiting.get(counter);
    if (waiting === undefined) {
      waiting = [];
      batch.waiting.set(counter, waiting);
    }
    waiting.push(done);
    batch.requests++;
    this.#scheduleSend();
  }

  #newBatch(now: string): Batch {
    const batch: Batch = {
      now,
      waiting: new Map(),
      requests: 0,
      requestsSeen: 0,
      since: performance.now(),
      settled: false,
      timer: setTimeout(() => {
        const queued = this.#queue.indexOf(batch);
        if (queued !== -1) this.#queue.splice(queued, 1);
        this.#fail(batch, new Error(`Redis took longer than ${this.#timeoutMs} ms`));
        this.#finished(batch);
      }, this.#timeoutMs),
    };
    return batch;
  }

  /** Frees the way for the next batch once the call of `batch` answered, failed or timed out. */
  #finished(batch: Batch): void {
    // A late reply of a call that timed out must not free the way of the call sent after it.
    if (this.#inFlight !== batch) return;
    this.#inFlight = null;
    if (this.#queue.length > 0) this.#scheduleSend();
  }

  /** After the I/O callbacks of this turn, so that requests read together are sent together. */
  #scheduleSend(): void {
    if (this.#sendScheduled || this.#inFlight !== null) return;
    this.#sendScheduled = true;
    setImmediate(this.#sendNext);
  }

  #send(batch: Batch): void {
    this.#inFlight = batch;
    // A new connection may lead to a server that has just started, with no script cached.
    this.#call(batch, this.client.stream !== this.#loadedOn);
  }

  /**
   * The script call of `batch`: EVAL (the whole script) when `whole`, else EVALSHA; an EVALSHA
   * that finds the server's script cache empty (SCRIPT FLUSH) goes again as EVAL. Sent as a plain
   * command rather than through ioredis's script commands (`defineCommand`), whose extra promises
   * and closures cost 10 to 20 µs more CPU per call (measured one call at a time).
   */
  #call(batch: Batch, whole: boolean): void {
    const args: Array<string | number> = [whole ? HIT_SCRIPT : HIT_SCRIPT_SHA, batch.waiting.size];
    for (const key of batch.waiting.keys()) args.push(key);
    args.push(batch.now);
    for (const list of batch.waiting.values()) args.push(list.length);
    if (whole) this.#loadedOn = this.client.stream;
    let reply: Promise<number[]>;
    try {
      reply = this.client.sendCommand(new Command(whole ? 'eval' : 'evalsha', args)) as Promise<number[]>;
    } catch (error) {
      this.#fail(batch, error);
      this.#finished(batch);
      return;
    }
    reply.then(
      (counts) => {
        this.#succeed(batch, counts);
        this.#finished(batch);
      },
      (error: unknown) => {
        if (!whole && !batch.settled && error instanceof Error && error.message.startsWith('NOSCRIPT')) {
          this.#call(batch, true);
          return;
        }
        this.#fail(batch, error);
        this.#finished(batch);
      },
    );
  }

  #succeed(batch: Batch, counts: number[]): void {
    if (batch.settled) return;
    batch.settled = true;
    clearTimeout(batch.timer);
    const ttl = Number(counts[0]);
    let i = 1;
    for (const list of batch.waiting.values()) {
      // The client's requests of this batch took its count up to the new total, in order.
      const first = Number(counts[i++]) - list.length + 1;
      for (let j = 0; j < list.length; j++) (list[j] as HitCallback)(null, { current: first + j, ttl });
    }
  }

  #fail(batch: Batch, error: unknown): void {
    if (batch.settled) return;
    batch.settled = true;
    clearTimeout(batch.timer);
    const reason = error instanceof Error ? error.message : String(error);
    const failure = new StoreUnavailableError(`Redis rate-limit store failed: ${reason}`, { cause: error });
    for (const list of batch.waiting.values()) for (const done of list) done(failure);
  }

  ping(): Promise<boolean> {
    return pingRedis(this.client);
  }

  /** Resolves true once connected, false after `timeoutMs` (the connection keeps trying). */
  connected(timeoutMs: number): Promise<boolean> {
    return whenReady(this.client, timeoutMs);
  }

  /** Fails the requests still waiting (their timers would hold the process open), then closes. */
  async close(): Promise<void> {
    const closed = new Error('the rate-limit store is closed');
    for (const batch of this.#queue.splice(0)) this.#fail(batch, closed);
    if (this.#inFlight !== null) this.#fail(this.#inFlight, closed);
    if (this.#ownsClient) await closeRedisClient(this.client);
  }
}

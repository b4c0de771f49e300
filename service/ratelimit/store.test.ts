/**
 * The store contract (store.ts), run over every adapter: the in-memory store and the Redis store
 * against a real redis-server, both on a test clock.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeRedisClient, createRedisClient, whenReady } from '../redis.ts';
import { type RedisServer, startRedisServer } from '../test-support/redis-server.ts';
import { needsRedisServer } from '../test-support/suites.ts';
import { MemoryStore } from './memory.ts';
import { GATHER_MAX_REQUESTS, MAX_KEYS_PER_CALL, RedisStore } from './redis-store.ts';
import {
  type Clock,
  type Hit,
  msToNextWindow,
  type RateLimitStore,
  StoreUnavailableError,
  WINDOW_MS,
} from './store.ts';
import { manualClock } from './test-app.ts';

const MINUTE = Date.UTC(2030, 0, 1, 12, 0, 0);

const hasRedis = needsRedisServer(import.meta.url);

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  if (!hasRedis) return;
  server = await startRedisServer();
  client = createRedisClient(server.url);
  if (!(await whenReady(client, 5000))) throw new Error('could not connect to the test redis-server');
});
afterAll(async () => {
  if (!hasRedis) return;
  await closeRedisClient(client);
  await server.close();
});

const adapters: Array<[string, (clock: Clock) => RateLimitStore]> = [
  ['memory', (clock) => new MemoryStore({ clock })],
  ...(hasRedis
    ? [
        [
          'redis',
          (clock: Clock) => new RedisStore({ client, prefix: `test:${randomUUID()}:`, now: clock }),
        ] as [string, (clock: Clock) => RateLimitStore],
      ]
    : []),
];

describe.each(adapters)('%s store', (_name, createStore) => {
  it('counts each client from 1 within a minute', async () => {
    const store = createStore(() => MINUTE + 10_000);
    const counts = [];
    for (const key of ['a', 'a', 'b', 'a', 'b', 'c']) counts.push((await store.hit(key)).current);
    expect(counts).toEqual([1, 2, 1, 3, 2, 1]);
  });

  it('answers count() once through its callback, on the same count as hit()', async () => {
    const store = createStore(() => MINUTE + 10_000);
    const calls: Array<[StoreUnavailableError | null, Hit | undefined]> = [];
    const counted = new Promise<void>((resolve) => {
      store.count('a', (error, hit) => {
        calls.push([error, hit]);
        resolve();
      });
    });
    await counted;
    expect((await store.hit('a')).current).toBe(2);
    expect(calls).toEqual([[null, { current: 1, ttl: 50_000 }]]);
  });

  it('reports the milliseconds left until the next clock minute', async () => {
    const clock = manualClock(MINUTE);
    const store = createStore(clock.now);
    const ttls = [];
    for (const offset of [0, 1, 30_000, 59_999]) {
      clock.set(MINUTE + offset);
      ttls.push((await store.hit('a')).ttl);
    }
    expect(ttls).toEqual([60_000, 59_999, 30_000, 1]);
  });

  it('starts again at 1 when the next minute begins, whatever the time of the first request', async () => {
    const clock = manualClock(MINUTE + 59_998);
    const store = createStore(clock.now);
    expect(await store.hit('a')).toEqual({ current: 1, ttl: 2 });
    clock.advance(1);
    expect(await store.hit('a')).toEqual({ current: 2, ttl: 1 });
    clock.advance(1);
    expect(await store.hit('a')).toEqual({ current: 1, ttl: 60_000 });
    expect(await store.hit('a')).toEqual({ current: 2, ttl: 60_000 });
  });

  it('answers a ping', async () => {
    expect(await createStore(Date.now).ping()).toBe(true);
  });
});

describe.runIf(hasRedis)('redis store on Redis time', () => {
  it('takes the window from Redis TIME, not from the caller', async () => {
    const store = new RedisStore({ client, prefix: `test:${randomUUID()}:` });
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = await redisNow(client);
      const hit = await store.hit('a');
      const after = await redisNow(client);
      if (Math.floor(before / WINDOW_MS) !== Math.floor(after / WINDOW_MS)) continue; // crossed a minute
      expect(hit.current).toBe(attempt + 1);
      expect(hit.ttl).toBeLessThanOrEqual(msToNextWindow(before));
      expect(hit.ttl).toBeGreaterThanOrEqual(msToNextWindow(after));
      return;
    }
    throw new Error('three attempts crossed a minute boundary');
  });

  it('expires a counter shortly after its window ends', async () => {
    const prefix = `test:${randomUUID()}:`;
    const store = new RedisStore({ client, prefix });
    const { ttl } = await store.hit('a');
    const pttl = await client.pttl(`${prefix}a`);
    expect(pttl).toBeGreaterThan(ttl - 50);
    expect(pttl).toBeLessThanOrEqual(ttl + 1000);
  });
});

describe.runIf(hasRedis)('redis store batches', () => {
  const at = () => MINUTE + 5_000;
  const newStore = (options: { client?: Redis; timeoutMs?: number } = {}) =>
    new RedisStore({
      client: options.client ?? client,
      prefix: `test:${randomUUID()}:`,
      now: at,
      ...options,
    });
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);

  it('gives the concurrent requests of one client consecutive counts, in arrival order', async () => {
    const store = newStore();
    const hits = await Promise.all(range(1, 30).map(() => store.hit('a')));
    expect(hits.map((hit) => hit.current)).toEqual(range(1, 30));
    expect(new Set(hits.map((hit) => hit.ttl))).toEqual(new Set([55_000]));
    expect((await store.hit('a')).current).toBe(31);
  });

  it('counts more clients at once than one call holds, each exactly', async () => {
    const store = newStore();
    const keys = range(1, MAX_KEYS_PER_CALL + 20).map((n) => `client-${n}`);
    const hits = await Promise.all([...keys, ...keys.slice(0, 10)].map((key) => store.hit(key)));
    const counts = new Map<string, number[]>();
    [...keys, ...keys.slice(0, 10)].forEach((key, i) => {
      counts.set(key, [...(counts.get(key) ?? []), hits[i]?.current ?? 0]);
    });
    for (const [i, key] of keys.entries()) expect(counts.get(key)).toEqual(i < 10 ? [1, 2] : [1]);
  });

  it('shares one exact count between stores on their own connections, under concurrent bursts', async () => {
    const other = createRedisClient(server.url);
    try {
      expect(await whenReady(other, 5000)).toBe(true);
      const prefix = `test:${randomUUID()}:`;
      const stores = [client, other].map((c) => new RedisStore({ client: c, prefix, now: at }));
      const bursts = await Promise.all(
        stores.map((store) => Promise.all(range(1, 100).map(() => store.hit('shared')))),
      );
      expect(sorted(bursts.flat().map((hit) => hit.current))).toEqual(range(1, 200));
    } finally {
      await closeRedisClient(other);
    }
  });

  /**
   * Watches the script calls of one key prefix through MONITOR, on a connection of its own:
   * `calls()` waits until Redis has seen every command sent so far, then gives the number of
   * requests each call counted, in order.
   */
  async function watchCalls(prefix: string) {
    const monitor = await client.monitor();
    const counted: number[] = [];
    let marker = '';
    let seen = () => {};
    monitor.on('monitor', (_time: string, args: string[]) => {
      const command = args[0]?.toLowerCase();
      if ((command === 'evalsha' || command === 'eval') && args[3]?.startsWith(prefix)) {
        const keys = Number(args[2]);
        counted.push(args.slice(4 + keys).reduce((sum, n) => sum + Number(n), 0));
      } else if (command === 'echo' && args[1] === marker) {
        seen();
      }
    });
    return {
      async calls(): Promise<number[]> {
        marker = randomUUID();
        const arrived = new Promise<void>((resolve) => {
          seen = resolve;
        });
        await client.echo(marker);
        await arrived;
        return [...counted];
      },
      close: () => monitor.disconnect(),
    };
  }
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('gathers the requests of consecutive event-loop turns into one call, sent after a turn that brings none', async () => {
    const prefix = `test:${randomUUID()}:`;
    const watch = await watchCalls(prefix);
    try {
      const store = new RedisStore({ client, prefix, now: at });
      const hits: Array<Promise<{ current: number }>> = [];
      for (let turn = 0; turn < 4; turn++) {
        for (let i = 0; i < 5; i++) hits.push(store.hit('a'));
        await nextTurn();
      }
      expect((await Promise.all(hits)).map((hit) => hit.current)).toEqual(range(1, 20));
      expect(await watch.calls()).toEqual([20]);
      // Alone, a request goes at once: no call waits for company that does not come.
      expect((await store.hit('a')).current).toBe(21);
      expect(await watch.calls()).toEqual([20, 1]);
    } finally {
      watch.close();
    }
  });

  it(`stops gathering at ${GATHER_MAX_REQUESTS} requests when requests keep coming every turn`, async () => {
    const prefix = `test:${randomUUID()}:`;
    const watch = await watchCalls(prefix);
    try {
      const store = new RedisStore({ client, prefix, now: at });
      const perTurn = 16;
      const hits: Array<Promise<{ current: number }>> = [];
      for (let turn = 0; turn < (4 * GATHER_MAX_REQUESTS) / perTurn; turn++) {
        for (let i = 0; i < perTurn; i++) hits.push(store.hit('a'));
        await nextTurn();
      }
      expect((await Promise.all(hits)).map((hit) => hit.current)).toEqual(range(1, hits.length));
      const calls = await watch.calls();
      expect(calls.reduce((sum, n) => sum + n, 0)).toBe(hits.length);
      expect(calls.length).toBeGreaterThanOrEqual(2);
      // Only the first call is gathered on a free way: the requests that come while a call is in
      // flight all wait for it and go together, however many (as many as Redis is slow to reply).
      // The bound is checked once per turn, so a call may hold the last turn's requests too.
      expect(calls[0]).toBeLessThan(GATHER_MAX_REQUESTS + perTurn);
    } finally {
      watch.close();
    }
  });

  it('sends the whole script on a new connection, and again when the server forgets it', async () => {
    const own = createRedisClient(server.url);
    const prefix = `test:${randomUUID()}:`;
    const store = new RedisStore({ client: own, prefix, now: at });
    const monitor = await client.monitor();
    const sent: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      const command = args[0]?.toLowerCase();
      if ((command === 'eval' || command === 'evalsha') && args[3]?.startsWith(prefix)) sent.push(command);
    });
    try {
      expect(await whenReady(own, 5000)).toBe(true);
      expect((await store.hit('a')).current).toBe(1);
      expect((await store.hit('a')).current).toBe(2);
      await client.script('FLUSH');
      expect((await store.hit('a')).current).toBe(3);
      expect((await store.hit('a')).current).toBe(4);
      await client.echo('done');
      // EVAL first, EVALSHA while cached, EVALSHA refused after the flush and sent again whole.
      await expect.poll(() => sent).toEqual(['eval', 'evalsha', 'evalsha', 'eval', 'evalsha']);
    } finally {
      monitor.disconnect();
      await store.close();
      await closeRedisClient(own);
    }
  });

  it('fails every waiting request within its timeout when Redis stops answering, and counts again after', async () => {
    const own = createRedisClient(server.url);
    const store = newStore({ client: own, timeoutMs: 300 });
    try {
      expect(await whenReady(own, 5000)).toBe(true);
      expect((await store.hit('a')).current).toBe(1);
      server.pause();
      const started = performance.now();
      const outcomes = await Promise.allSettled(range(1, 20).map(() => store.hit('a')));
      const waited = performance.now() - started;
      expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(20).fill('rejected'));
      for (const outcome of outcomes) {
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
      }
      expect(waited).toBeLessThan(800);
      server.resume();
      // The requests that timed out may still have been counted once Redis woke up.
      expect((await store.hit('a')).current).toBeGreaterThanOrEqual(2);
    } finally {
      server.resume();
      await store.close();
      await closeRedisClient(own);
    }
  });
});

async function redisNow(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

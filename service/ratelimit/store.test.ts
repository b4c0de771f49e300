/**
 * The store contract (store.ts), run over every adapter: the in-memory store and the Redis store
 * against a real redis-server, both on a test clock.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeRedisClient, createRedisClient, whenReady } from '../redis.ts';
import { type RedisServer, startRedisServer } from '../test-support/redis-server.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore } from './redis-store.ts';
import { type Clock, msToNextWindow, type RateLimitStore, WINDOW_MS } from './store.ts';
import { manualClock } from './test-app.ts';

const MINUTE = Date.UTC(2030, 0, 1, 12, 0, 0);

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  client = createRedisClient(server.url);
  if (!(await whenReady(client, 5000))) throw new Error('could not connect to the test redis-server');
});
afterAll(async () => {
  await closeRedisClient(client);
  await server.close();
});

const adapters: Array<[string, (clock: Clock) => RateLimitStore]> = [
  ['memory', (clock) => new MemoryStore({ clock })],
  ['redis', (clock) => new RedisStore({ client, prefix: `test:${randomUUID()}:`, now: clock })],
];

describe.each(adapters)('%s store', (_name, createStore) => {
  it('counts each client from 1 within a minute', async () => {
    const store = createStore(() => MINUTE + 10_000);
    const counts = [];
    for (const key of ['a', 'a', 'b', 'a', 'b', 'c']) counts.push((await store.hit(key)).current);
    expect(counts).toEqual([1, 2, 1, 3, 2, 1]);
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

describe('redis store on Redis time', () => {
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

async function redisNow(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

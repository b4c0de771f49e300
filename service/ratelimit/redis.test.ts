/**
 * Rate limiting with many replicas sharing one real redis-server: exact shared counting, the
 * minute boundary (on a test clock), and the failure policy when Redis crashes, hangs or starts
 * late.
 */
import type { InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createRedisClient } from '../redis.ts';
import { buildFixtureCatalogue, fixtureApp } from '../test-app.ts';
import { type RedisServer, startRedisServer } from '../test-support/redis-server.ts';
import { needsRedisServer } from '../test-support/suites.ts';
import { isRateLimitStoreFailure } from './plugin.ts';
import { RedisStore } from './redis-store.ts';
import { msToNextWindow } from './store.ts';
import {
  buildTestApp,
  manualClock,
  rateLimitHeaders,
  type TestApp,
  type TestAppOptions,
} from './test-app.ts';

const MAX = 5;
const NO_HEADERS = { limit: undefined, remaining: undefined, reset: undefined, retryAfter: undefined };

const hasRedis = needsRedisServer(import.meta.url);

let server: RedisServer;
let opened: Array<{ close(): Promise<unknown> }> = [];
let clientNumber = 0;

beforeAll(async () => {
  if (hasRedis) server = await startRedisServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(async () => {
  if (!hasRedis) return;
  server.resume();
  if (!server.running) await server.start();
});
afterEach(async () => {
  for (const resource of opened.reverse()) await resource.close();
  opened = [];
});

/** A fresh client address per test, so tests never share a count. */
function nextClient(): string {
  clientNumber++;
  return `198.51.100.${clientNumber}`;
}

/** An app on the test Redis, ready to count (its connection is up). */
async function replica(options: TestAppOptions = {}): Promise<TestApp> {
  const built = await buildTestApp({
    ...options,
    config: { max: MAX, store: 'redis', redisUrl: server.url, fail: 'open', ...options.config },
  });
  opened.push(built.app);
  return built;
}

async function untilReachable(...apps: TestApp[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (const { app } of apps) {
    while (!(await app.rateLimitHealth()).reachable) {
      if (Date.now() > deadline) throw new Error('the rate-limit store did not become reachable');
      await sleep(50);
    }
  }
}

function sender(client: string) {
  return async (target: TestApp, extra: Partial<InjectOptions> = {}) => {
    const started = performance.now();
    const response = await target.app.inject({
      method: 'GET',
      url: '/quotes',
      remoteAddress: client,
      ...extra,
      headers: { authorization: 'Basic ok', ...extra.headers },
    });
    return Object.assign(response, { ms: performance.now() - started });
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tests on Redis's real clock must not straddle a minute: wait for the next one if it is close. */
async function awayFromMinuteEnd(): Promise<void> {
  const left = msToNextWindow(Date.now());
  if (left < 3000) await sleep(left + 50);
}

const warnings = (target: TestApp) => target.logs.filter((log) => log.level === 40).map((log) => log.msg);

describe.runIf(hasRedis)('rate limiting with replicas sharing Redis', () => {
  it('allows exactly RATE_LIMIT_MAX requests per minute across two replicas, then both answer 429', async () => {
    // The first replica's own clock is 45 s off: the window comes from Redis TIME anyway.
    const a = await replica({ clock: () => Date.now() + 45_000 });
    const b = await replica();
    await untilReachable(a, b);
    await awayFromMinuteEnd();
    const send = sender(nextClient());

    const served = [];
    for (const target of [a, b, a, b, a]) served.push(await send(target));
    const secondsLeft = Math.ceil(msToNextWindow(Date.now()) / 1000);
    expect(served.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect(served.map((r) => rateLimitHeaders(r.headers).remaining)).toEqual([4, 3, 2, 1, 0]);
    for (const response of served) {
      const headers = rateLimitHeaders(response.headers);
      expect(headers.limit).toBe(MAX);
      expect(headers.retryAfter).toBeUndefined();
      expect(Math.abs((headers.reset ?? 0) - secondsLeft)).toBeLessThanOrEqual(1);
    }

    for (const target of [a, b]) {
      const refused = await send(target);
      const headers = rateLimitHeaders(refused.headers);
      expect(refused.statusCode).toBe(429);
      expect(headers).toEqual({
        limit: MAX,
        remaining: 0,
        reset: headers.retryAfter,
        retryAfter: headers.reset,
      });
      expect(headers.retryAfter).toBeGreaterThanOrEqual(1);
      expect(headers.retryAfter).toBeLessThanOrEqual(60);
      expect(Math.abs((headers.retryAfter ?? 0) - secondsLeft)).toBeLessThanOrEqual(1);
      const unit = headers.retryAfter === 1 ? 'second' : 'seconds';
      expect(refused.json()).toEqual({
        code: 429,
        error: 'too_many_requests',
        details: `Rate limit of ${MAX} requests per minute exceeded; retry in ${headers.retryAfter} ${unit}`,
      });
      expect(target.metrics.rateLimitRejections.labels({}).value).toBe(1);
    }
  });

  it('starts a shared window at the minute boundary (test clock in the Lua script)', async () => {
    const clock = manualClock(Date.UTC(2030, 0, 1, 12, 0, 50)); // 10 s before a minute ends
    const stores = [1, 2].map(
      () => new RedisStore({ client: createRedisClient(server.url), ownsClient: true, now: clock.now }),
    );
    opened.push(...stores);
    const [a, b] = [await replica({ store: stores[0] }), await replica({ store: stores[1] })] as const;
    await untilReachable(a, b);
    const send = sender(nextClient());

    for (const target of [a, b, a, b, a]) expect((await send(target)).statusCode).toBe(200);
    const refused = await send(b);
    expect(refused.statusCode).toBe(429);
    expect(rateLimitHeaders(refused.headers)).toEqual({
      limit: MAX,
      remaining: 0,
      reset: 10,
      retryAfter: 10,
    });

    clock.advance(9_999); // 1 ms before the boundary: still refused, for 1 more second
    expect(rateLimitHeaders((await send(a)).headers)).toEqual({
      limit: MAX,
      remaining: 0,
      reset: 1,
      retryAfter: 1,
    });

    clock.advance(1); // the next minute begins
    const [first, second] = [await send(a), await send(b)];
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    expect(rateLimitHeaders(first.headers)).toEqual({
      limit: MAX,
      remaining: 4,
      reset: 60,
      retryAfter: undefined,
    });
    expect(rateLimitHeaders(second.headers).remaining).toBe(3);
  });

  it('fails open within about a second when Redis dies, and counts together again when it returns', async () => {
    const a = await replica({ logLevel: 'info' });
    const b = await replica({ logLevel: 'info' });
    await untilReachable(a, b);
    const send = sender(nextClient());
    expect(rateLimitHeaders((await send(a)).headers).remaining).toBe(MAX - 1);

    await server.stop(); // SIGKILL: a crash
    const duringOutage = [];
    for (let i = 0; i < 10; i++) duringOutage.push(await send(i % 2 === 0 ? a : b));
    expect(duringOutage.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    for (const response of duringOutage) {
      // Served without guesses: a request that was not counted carries no rate-limit headers.
      expect(rateLimitHeaders(response.headers)).toEqual(NO_HEADERS);
      expect(response.ms).toBeLessThan(1000);
    }
    for (const target of [a, b]) {
      expect(target.metrics.rateLimitStoreFailures.labels({}).value).toBe(5);
      expect(target.metrics.rateLimitStoreUp.labels({}).value).toBe(0);
      // One warning, however many failures.
      expect(warnings(target)).toEqual([
        'Rate-limit store unavailable; requests are served without rate limiting (RATE_LIMIT_FAIL=open)',
      ]);
      expect(await target.app.rateLimitHealth()).toEqual({ store: 'redis', reachable: false, serving: true });
      expect((await target.app.inject('/ready')).statusCode).toBe(200);
    }

    await server.start(); // an empty Redis on the same port
    await untilReachable(a, b);
    for (const target of [a, b]) {
      // The four failures left out after the warning are told with the recovery of their outage.
      const recovered = target.logs.filter((log) => log.msg.startsWith('Rate-limit store answers again'));
      expect(recovered.map((log) => log.suppressedSinceLastWarning)).toEqual([4]);
    }
    await awayFromMinuteEnd();
    const again = sender(nextClient());
    const counted = [];
    for (const target of [b, a, b, a, b]) counted.push(await again(target));
    expect(counted.map((r) => rateLimitHeaders(r.headers).remaining)).toEqual([4, 3, 2, 1, 0]);
    expect((await again(a)).statusCode).toBe(429);
    expect((await again(b)).statusCode).toBe(429);
    expect(a.metrics.rateLimitStoreUp.labels({}).value).toBe(1);
  });

  it('answers 503 while Redis is down when RATE_LIMIT_FAIL=closed, and serves again when it returns', async () => {
    const closed = await replica({ config: { fail: 'closed' } });
    await untilReachable(closed);
    const send = sender(nextClient());
    expect((await send(closed)).statusCode).toBe(200);

    await server.stop();
    const refused = await send(closed);
    expect(refused.ms).toBeLessThan(1000);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json()).toEqual({
      code: 503,
      error: 'service_unavailable',
      details: 'Rate limiting is unavailable (its store does not answer); retry shortly',
    });
    expect(warnings(closed)).toEqual([
      'Rate-limit store unavailable; quote requests answer 503 (RATE_LIMIT_FAIL=closed)',
    ]);
    // The app's error handler can tell this 503 apart and leave its logging to the plugin.
    expect(isRateLimitStoreFailure(closed.errors.at(-1))).toBe(true);
    expect((await closed.app.inject('/ready')).statusCode).toBe(503);
    expect((await closed.app.inject('/health')).statusCode).toBe(200);

    await server.start();
    await untilReachable(closed);
    expect((await send(closed)).statusCode).toBe(200);
    expect((await closed.app.inject('/ready')).statusCode).toBe(200);
  });

  it('never waits more than about a second on a Redis that stops answering', async () => {
    const open = await replica();
    const closed = await replica({ config: { fail: 'closed' } });
    await untilReachable(open, closed);
    const send = sender(nextClient());

    server.pause(); // SIGSTOP: the connection stays up and nothing answers
    try {
      const [served, refused] = await Promise.all([send(open), send(closed)]);
      expect(served.statusCode).toBe(200);
      expect(rateLimitHeaders(served.headers)).toEqual(NO_HEADERS);
      expect(refused.statusCode).toBe(503);
      expect(served.ms).toBeLessThan(1100);
      expect(refused.ms).toBeLessThan(1100);
      const readyStarted = performance.now();
      expect((await closed.app.inject('/ready')).statusCode).toBe(503);
      expect(performance.now() - readyStarted).toBeLessThan(1100);
    } finally {
      server.resume();
    }
  });

  it('starts while Redis is down, serves uncounted, and counts once Redis is up', async () => {
    await server.stop();
    const started = performance.now();
    const late = await replica();
    expect(performance.now() - started).toBeLessThan(2000);
    expect(warnings(late)).toEqual([
      'Rate-limit store not reachable at start; RATE_LIMIT_FAIL applies until it is',
    ]);
    const send = sender(nextClient());
    const uncounted = await send(late);
    expect(uncounted.statusCode).toBe(200);
    expect(rateLimitHeaders(uncounted.headers)).toEqual(NO_HEADERS);

    await server.start();
    await untilReachable(late);
    const counted = await send(late);
    expect(counted.statusCode).toBe(200);
    expect(rateLimitHeaders(counted.headers)).toMatchObject({ limit: MAX, remaining: MAX - 1 });
  });
});

describe.runIf(hasRedis)('a REDIS_URL naming a database the server does not have', () => {
  it('is said at warn level, since the connection goes on in database 0', async () => {
    const wrong = new URL(server.url);
    wrong.pathname = '/99';
    const app = await replica({ config: { redisUrl: wrong.toString() } });
    await untilReachable(app);
    const deadline = Date.now() + 5000;
    while (warnings(app).length === 0 && Date.now() < deadline) await sleep(20);
    expect(warnings(app)).toEqual([
      'REDIS_URL names a database this Redis does not have; counting in database 0',
    ]);
    // It still counts, shared with any replica configured alike.
    const send = sender(nextClient());
    expect(rateLimitHeaders((await send(app)).headers)).toMatchObject({ remaining: MAX - 1 });
  });
});

describe.runIf(hasRedis)("the service's /metrics with the Redis store", () => {
  it('reads the store afresh at each scrape, on a replica that gets no quote requests', async () => {
    const catalogue = await buildFixtureCatalogue();
    await server.stop();
    const app = await fixtureApp(catalogue.path, { RATE_LIMIT_STORE: 'redis', REDIS_URL: server.url });
    try {
      const storeUp = async () =>
        Number(/\nquotes_ratelimit_store_up (\d+)\n/.exec((await app.inject('/metrics')).body)?.[1]);
      expect(await storeUp()).toBe(0);
      await server.start();
      const deadline = Date.now() + 10_000;
      let up = await storeUp();
      while (up !== 1 && Date.now() < deadline) {
        await sleep(100);
        up = await storeUp();
      }
      expect(up).toBe(1);
    } finally {
      await app.close();
      catalogue.remove();
    }
  });
});

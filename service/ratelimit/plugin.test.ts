import type { InjectOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { isRateLimitStoreFailure } from './plugin.ts';
import { buildTestApp, manualClock, rateLimitHeaders, type TestApp } from './test-app.ts';

// A minute boundary, UTC; tests place the clock at an offset within the minute.
const MINUTE = Date.UTC(2030, 0, 1, 12, 0, 0);
const AUTH = { authorization: 'Basic ok' };

let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

async function start(options: Parameters<typeof buildTestApp>[0] = {}) {
  current = await buildTestApp(options);
  const { app } = current;
  const send = (url: string, extra: Partial<InjectOptions> = {}) =>
    app.inject({ method: 'GET', url, ...extra, headers: { ...AUTH, ...extra.headers } });
  return { ...current, send };
}

describe('rate limiting with the in-memory store', () => {
  it('allows RATE_LIMIT_MAX quote requests per minute, whatever they answer, then answers 429', async () => {
    const clock = manualClock(MINUTE + 43_000); // 17 s before the next minute
    const { send } = await start({ config: { max: 5 }, clock: clock.now });

    const answers = [
      await send('/quotes'),
      await send('/quotes/1'),
      await send('/quotes/999'), // unknown id
      await send('/quotes', { method: 'POST' }), // method not allowed
      await send('/api/v1/quotes', { headers: { authorization: 'Basic wrong' } }), // unauthenticated
    ];
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 404, 405, 401]);
    expect(answers.map((r) => rateLimitHeaders(r.headers))).toEqual(
      [4, 3, 2, 1, 0].map((remaining) => ({ limit: 5, remaining, reset: 17, retryAfter: undefined })),
    );

    const refused = await send('/quotes');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.json()).toEqual({
      code: 429,
      error: 'too_many_requests',
      details: 'Rate limit of 5 requests per minute exceeded; retry in 17 seconds',
    });
    expect(rateLimitHeaders(refused.headers)).toEqual({ limit: 5, remaining: 0, reset: 17, retryAfter: 17 });
    expect(isRateLimitStoreFailure(current?.errors.at(-1))).toBe(false);
  });

  it('keeps refusing until the minute ends, with Retry-After the whole seconds left', async () => {
    const clock = manualClock(MINUTE);
    const { send } = await start({ config: { max: 1 }, clock: clock.now });
    expect((await send('/quotes')).statusCode).toBe(200);

    for (const offset of [0, 1, 999, 1000, 30_500, 58_999, 59_000, 59_999]) {
      clock.set(MINUTE + offset);
      const refused = await send('/quotes/1');
      const secondsLeft = Math.ceil((60_000 - offset) / 1000);
      expect(refused.statusCode).toBe(429);
      expect(rateLimitHeaders(refused.headers)).toEqual({
        limit: 1,
        remaining: 0,
        reset: secondsLeft,
        retryAfter: secondsLeft,
      });
      const unit = secondsLeft === 1 ? 'second' : 'seconds';
      expect(refused.json().details).toBe(
        `Rate limit of 1 request per minute exceeded; retry in ${secondsLeft} ${unit}`,
      );
    }

    clock.set(MINUTE + 60_000); // the next minute begins: a fresh window
    const served = await send('/quotes/1');
    expect(served.statusCode).toBe(200);
    expect(rateLimitHeaders(served.headers)).toEqual({
      limit: 1,
      remaining: 0,
      reset: 60,
      retryAfter: undefined,
    });
  });

  it('aligns windows to the clock minute, not to the first request', async () => {
    const clock = manualClock(MINUTE + 59_000);
    const { send } = await start({ config: { max: 2 }, clock: clock.now });
    await send('/quotes');
    await send('/quotes');
    expect((await send('/quotes')).statusCode).toBe(429);
    clock.advance(1000); // one second after the first request, the next minute begins
    const served = await send('/quotes');
    expect(served.statusCode).toBe(200);
    expect(rateLimitHeaders(served.headers).remaining).toBe(1);
  });

  it('does not count /health, /ready and /metrics, nor give them rate-limit headers', async () => {
    const { send } = await start({ config: { max: 2 } });
    for (let i = 0; i < 5; i++) {
      for (const url of ['/health', '/ready', '/metrics']) {
        const response = await send(url);
        expect(response.statusCode).toBe(200);
        expect(rateLimitHeaders(response.headers)).toEqual({
          limit: undefined,
          remaining: undefined,
          reset: undefined,
          retryAfter: undefined,
        });
      }
    }
    const first = await send('/quotes');
    expect(rateLimitHeaders(first.headers)).toMatchObject({ limit: 2, remaining: 1 });
  });

  it('counts unknown paths under /quotes and router-decoded quote paths, not other unknown paths', async () => {
    const { send } = await start({ config: { max: 10 } });
    const nested = await send('/quotes/1/extra');
    expect(nested.statusCode).toBe(404);
    expect(rateLimitHeaders(nested.headers).remaining).toBe(9);
    const encoded = await send('/quot%65s'); // the router serves it as /quotes
    expect(encoded.statusCode).toBe(200);
    expect(rateLimitHeaders(encoded.headers).remaining).toBe(8);
    const head = await send('/quotes', { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(rateLimitHeaders(head.headers).remaining).toBe(7);
    const other = await send('/elsewhere');
    expect(other.statusCode).toBe(404);
    expect(other.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('keys clients by IP, one key per IPv6 /64 network', async () => {
    const { send } = await start({ config: { max: 1 } });
    const from = (remoteAddress: string) => send('/quotes', { remoteAddress });
    expect((await from('192.0.2.1')).statusCode).toBe(200);
    expect((await from('192.0.2.1')).statusCode).toBe(429);
    expect((await from('192.0.2.2')).statusCode).toBe(200);
    expect((await from('::ffff:192.0.2.2')).statusCode).toBe(429); // the same IPv4 client, mapped
    expect((await from('2001:db8:1:2::1')).statusCode).toBe(200);
    expect((await from('2001:db8:1:2:ffff::9')).statusCode).toBe(429); // same /64
    expect((await from('2001:db8:1:3::1')).statusCode).toBe(200); // next /64
  });

  it('keys clients by the forwarded address only when the proxy is trusted', async () => {
    const viaProxy = (forwardedFor: string) => ({
      remoteAddress: '10.0.0.1',
      headers: { 'x-forwarded-for': forwardedFor },
    });
    const direct = await start({ config: { max: 1 }, trustProxy: false });
    expect((await direct.send('/quotes', viaProxy('198.51.100.1'))).statusCode).toBe(200);
    expect((await direct.send('/quotes', viaProxy('198.51.100.2'))).statusCode).toBe(429); // both are 10.0.0.1
    await direct.app.close();

    const proxied = await start({ config: { max: 1 }, trustProxy: true });
    expect((await proxied.send('/quotes', viaProxy('198.51.100.1'))).statusCode).toBe(200);
    expect((await proxied.send('/quotes', viaProxy('198.51.100.2'))).statusCode).toBe(200);
    expect((await proxied.send('/quotes', viaProxy('198.51.100.1'))).statusCode).toBe(429);
  });

  it('counts rejections in quotes_ratelimit_rejections_total', async () => {
    const { send, metrics } = await start({ config: { max: 1 } });
    await send('/quotes');
    for (let i = 0; i < 3; i++) expect((await send('/quotes')).statusCode).toBe(429);
    expect(metrics.rateLimitRejections.labels({}).value).toBe(3);
    const exposed = (await send('/metrics')).body;
    expect(exposed).toContain('\nquotes_ratelimit_rejections_total 3\n');
    expect(exposed).toContain('quotes_http_requests_total{route="/quotes",method="GET",status="429"} 3\n');
  });

  it('reports the memory store as reachable and serving', async () => {
    const { app } = await start();
    expect(await app.rateLimitHealth()).toEqual({ store: 'memory', reachable: true, serving: true });
  });
});

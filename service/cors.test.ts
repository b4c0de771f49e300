import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORS_MAX_AGE_SECONDS } from './cors.ts';
import { basic, buildFixtureCatalogue, errorOf, type FixtureCatalogue, fixtureApp } from './test-app.ts';

// A minute boundary plus 20 s: every request of a test falls in one rate-limit window.
const NOW = Date.UTC(2030, 0, 1, 12, 0, 20);
const APP_ORIGIN = 'http://app.example.test:8080';
const USERS = { AUTH_USERS: 'ann:secret', AUTH_BYPASS: 'deny' };
const PREFLIGHT = {
  method: 'OPTIONS',
  headers: {
    origin: APP_ORIGIN,
    'access-control-request-method': 'GET',
    'access-control-request-headers': 'authorization,x-bypass-auth',
  },
} as const;

let catalogue: FixtureCatalogue;
const apps: FastifyInstance[] = [];
beforeAll(async () => {
  catalogue = await buildFixtureCatalogue();
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  catalogue.remove();
});

async function start(env: Record<string, string>) {
  const app = await fixtureApp(catalogue.path, { RATE_LIMIT_MAX: '5', ...USERS, ...env }, { now: () => NOW });
  apps.push(app);
  return (url: string, options: Partial<InjectOptions> = {}) =>
    app.inject({ method: 'GET', url, ...options });
}

const corsHeaders = (headers: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('access-control-')));
const signedIn = (origin = APP_ORIGIN) => ({ origin, authorization: basic('ann:secret') });

describe('CORS_ORIGINS unset', () => {
  it('adds no CORS header to any answer, and OPTIONS stays a counted 405', async () => {
    const send = await start({});
    const served = await send('/quotes?limit=1', { headers: signedIn() });
    expect(served.statusCode).toBe(200);
    expect(corsHeaders(served.headers)).toEqual({});
    expect(served.headers.vary).toBeUndefined();

    const preflight = await send('/quotes', PREFLIGHT);
    expect(preflight.statusCode).toBe(405);
    expect(errorOf(preflight).error).toBe('method_not_allowed');
    expect(corsHeaders(preflight.headers)).toEqual({});
    expect(preflight.headers['x-ratelimit-remaining']).toBe('3');
  });
});

describe('CORS_ORIGINS as a list of origins', () => {
  it('lets a listed origin read the answer and its ETag, rate-limit headers; another origin gets no grant', async () => {
    const send = await start({ CORS_ORIGINS: `https://other.example.test, ${APP_ORIGIN}` });
    const served = await send('/quotes?author_like=aust&limit=1', { headers: signedIn() });
    expect(served.statusCode).toBe(200);
    expect(corsHeaders(served.headers)).toEqual({
      'access-control-allow-origin': APP_ORIGIN,
      'access-control-expose-headers':
        'ETag, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
    });
    expect(served.headers.vary).toContain('Origin');
    expect(served.headers.etag).toBeDefined();

    const stranger = await send('/quotes?limit=1', { headers: signedIn('https://evil.example.test') });
    expect(stranger.statusCode).toBe(200);
    expect(stranger.headers['access-control-allow-origin']).toBeUndefined();
    expect(stranger.headers.vary).toContain('Origin');
  });

  it('keeps Origin beside the access headers in the Vary of the publicly cacheable quote of the day', async () => {
    const send = await start({ CORS_ORIGINS: APP_ORIGIN });
    const served = await send('/quotes/today', { headers: signedIn() });
    expect(served.statusCode).toBe(200);
    expect(served.headers['cache-control']).toMatch(/^public, /);
    expect(served.headers.vary).toBe('Origin, Authorization, X-Bypass-Auth');
  });

  it('answers preflights before the rate limit: a burst leaves the remaining count unchanged', async () => {
    const send = await start({ CORS_ORIGINS: APP_ORIGIN });
    const first = await send('/quotes?limit=1', { headers: signedIn() });
    expect(first.headers['x-ratelimit-remaining']).toBe('4');

    // Four times the limit: counted, the last ones would be 429.
    for (const path of Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? '/quotes' : '/api/v1/quotes'))) {
      const preflight = await send(path, PREFLIGHT);
      expect(preflight.statusCode).toBe(204);
      expect(preflight.body).toBe('');
      expect(preflight.headers['x-ratelimit-remaining']).toBeUndefined();
      expect(corsHeaders(preflight.headers)).toEqual({
        'access-control-allow-origin': APP_ORIGIN,
        'access-control-allow-methods': 'GET, HEAD',
        'access-control-allow-headers': 'Authorization, X-Bypass-Auth',
        'access-control-expose-headers':
          'ETag, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
        'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
      });
    }

    const next = await send('/quotes?limit=1', { headers: signedIn() });
    expect(next.statusCode).toBe(200);
    expect(next.headers['x-ratelimit-remaining']).toBe('3');
  });

  it("answers a preflight for a path the service does not serve with that path's 404", async () => {
    const send = await start({ CORS_ORIGINS: APP_ORIGIN });
    for (const path of ['/nope', '/quotes/', '/api/v1/quotes/extra']) {
      const preflight = await send(path, PREFLIGHT);
      expect(preflight.statusCode, path).toBe(404);
      expect(errorOf(preflight).error, path).toBe('not_found');
      expect(preflight.headers['access-control-allow-methods'], path).toBeUndefined();
    }
    expect((await send('/health', PREFLIGHT)).statusCode).toBe(204);
  });

  it('answers a preflight without credentials 204, not 401, even with bypass denied', async () => {
    const send = await start({ CORS_ORIGINS: APP_ORIGIN });
    const preflight = await send('/quotes/1', PREFLIGHT);
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['www-authenticate']).toBeUndefined();
    // The real request that follows without credentials is refused, and the page may read why.
    const refused = await send('/quotes/1', { headers: { origin: APP_ORIGIN } });
    expect(errorOf(refused).error).toBe('unauthorized');
    expect(refused.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  });

  it('lets the page read a 429 and its Retry-After', async () => {
    const send = await start({ CORS_ORIGINS: APP_ORIGIN, RATE_LIMIT_MAX: '1' });
    expect((await send('/quotes?limit=1', { headers: signedIn() })).statusCode).toBe(200);
    const refused = await send('/quotes?limit=1', { headers: signedIn() });
    expect(errorOf(refused).error).toBe('too_many_requests');
    expect(refused.headers['retry-after']).toBe('40');
    expect(refused.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(refused.headers['access-control-expose-headers']).toContain('Retry-After');
  });

  it('treats an OPTIONS that is no preflight as any other method: a counted 405 in JSON', async () => {
    const send = await start({ CORS_ORIGINS: APP_ORIGIN });
    for (const headers of [{}, { origin: APP_ORIGIN }, { 'access-control-request-method': 'GET' }]) {
      const answer = await send('/quotes', { method: 'OPTIONS', headers });
      expect(answer.statusCode, JSON.stringify(headers)).toBe(405);
      expect(answer.headers.allow).toBe('GET, HEAD');
      expect(errorOf(answer).error).toBe('method_not_allowed');
    }
    const next = await send('/quotes?limit=1', { headers: signedIn() });
    expect(next.headers['x-ratelimit-remaining']).toBe('1');
    const unknown = await send('/nowhere', { method: 'OPTIONS' });
    expect(errorOf(unknown).error).toBe('not_found');
  });
});

describe('CORS_ORIGINS=*', () => {
  it('grants every origin with *', async () => {
    const send = await start({ CORS_ORIGINS: '*' });
    const served = await send('/quotes?limit=1', { headers: signedIn('https://anywhere.example.test') });
    expect(served.statusCode).toBe(200);
    expect(served.headers['access-control-allow-origin']).toBe('*');
    const preflight = await send('/quotes', PREFLIGHT);
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
  });
});

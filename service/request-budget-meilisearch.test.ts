/**
 * One deadline per client request on a real Meilisearch, seen through a proxy that delays each
 * engine answer: a route that reads several times answers 503 once `MEILI_TIMEOUT_MS` has passed
 * since its first read, however long each read took alone.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from './app.ts';
import { bundledQuotes } from './catalogue/search.suite.ts';
import { loadConfig } from './config.ts';
import { get } from './test-app.ts';
import { type DelayingProxy, delayingProxy } from './test-support/delaying-proxy.ts';
import { buildMeiliCatalogue, type MeiliCatalogue } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'one deadline per request';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

const TIMEOUT_MS = 600;

describe.skipIf('skip' in source)('one deadline per request on Meilisearch', () => {
  let engine: MeiliEngine | undefined;
  let catalogue: MeiliCatalogue | undefined;
  let proxy: DelayingProxy | undefined;
  let app: FastifyInstance | undefined;
  // The proxy's own: each answer is held this long.
  let delay = { ms: 0 };

  beforeAll(async () => {
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    catalogue = await buildMeiliCatalogue(engine, bundledQuotes());
    const proxied = await delayingProxy(catalogue.env.MEILI_HOST as string);
    proxy = proxied;
    delay = proxied.delay;
    app = await buildApp(
      loadConfig({
        LOG_LEVEL: 'silent',
        RATE_LIMIT_MAX: '1000000000',
        ...catalogue.env,
        MEILI_HOST: proxied.url,
        MEILI_TIMEOUT_MS: String(TIMEOUT_MS),
      }),
    );
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    await catalogue?.remove();
    await engine?.stop();
  }, 60_000);

  it('answers a quote of the day read in several steps with 503 once the timeout has passed, not after every step', async () => {
    const url = '/quotes/today?genre=gothic';
    expect((await get(app as FastifyInstance, url)).statusCode).toBe(200);
    // Each read now takes half the timeout; the version is read again (kept a second), then the
    // matches are counted and one of them read: three reads, each within the timeout alone.
    delay.ms = TIMEOUT_MS / 2;
    await new Promise((done) => setTimeout(done, 1_100));
    const started = performance.now();
    const response = await get(app as FastifyInstance, `${url}&language=en`);
    const ms = performance.now() - started;
    delay.ms = 0;
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 503, error: 'service_unavailable' });
    expect(ms).toBeLessThan(TIMEOUT_MS + 150);
    // Fast again: the same request is served, the budget being the request's, not the service's.
    expect((await get(app as FastifyInstance, `${url}&language=en`)).statusCode).toBe(200);
  });

  it('still answers a request whose reads fit in the timeout together', async () => {
    delay.ms = TIMEOUT_MS / 8;
    await new Promise((done) => setTimeout(done, 1_100));
    const response = await get(app as FastifyInstance, '/quotes/today?genre=gothic&fields=id');
    delay.ms = 0;
    expect(response.statusCode).toBe(200);
  });
});

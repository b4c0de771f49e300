/**
 * The connections to Meilisearch, on a real engine behind a proxy that holds each answer: one
 * instance has the engine work on at most `MEILI_CONNECTIONS` requests at once, and a request
 * waiting for a connection still answers within `MEILI_TIMEOUT_MS`.
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

const SUITE = 'connections to the engine';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

describe.skipIf('skip' in source)('connections to Meilisearch', () => {
  let engine: MeiliEngine | undefined;
  let catalogue: MeiliCatalogue | undefined;
  let proxy: DelayingProxy | undefined;
  const apps: FastifyInstance[] = [];

  const appWith = async (env: Record<string, string>): Promise<FastifyInstance> => {
    const app = await buildApp(
      loadConfig({
        LOG_LEVEL: 'silent',
        RATE_LIMIT_MAX: '1000000000',
        ...catalogue?.env,
        MEILI_HOST: proxy?.url,
        ...env,
      }),
    );
    apps.push(app);
    // The catalogue's version, read once: every request after it reads only its page.
    expect((await get(app, '/quotes?limit=1')).statusCode).toBe(200);
    return app;
  };

  beforeAll(async () => {
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    catalogue = await buildMeiliCatalogue(engine, bundledQuotes());
    proxy = await delayingProxy(catalogue.env.MEILI_HOST as string);
  }, 180_000);

  afterAll(async () => {
    for (const app of apps) await app.close();
    await proxy?.close();
    await catalogue?.remove();
    await engine?.stop();
  }, 60_000);

  it('has the engine work on at most MEILI_CONNECTIONS requests at once, the others waiting their turn', async () => {
    const app = await appWith({ MEILI_CONNECTIONS: '3', MEILI_DEEP_READS: '1', MEILI_TIMEOUT_MS: '10000' });
    const held = proxy as DelayingProxy;
    held.delay.ms = 80;
    held.inFlight.most = 0;
    // Distinct pages: none is answered from the service's cache.
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => get(app, `/quotes?limit=2&page=${i + 2}`)),
    );
    held.delay.ms = 0;
    expect(responses.map((r) => r.statusCode)).toEqual(Array(12).fill(200));
    expect(held.inFlight.most).toBe(3);
  });

  it('answers a request still waiting for a connection at its timeout with 503, never later', async () => {
    // Long enough that a machine busy with other suites still answers the first pages in time
    // (at 250 ms a page and a 600 ms timeout, a loaded run once answered none of them).
    const timeoutMs = 1500;
    const app = await appWith({
      MEILI_CONNECTIONS: '2',
      MEILI_DEEP_READS: '1',
      MEILI_TIMEOUT_MS: String(timeoutMs),
    });
    const held = proxy as DelayingProxy;
    // Two at a time, 600 ms each: of 12 pages, the last ones cannot have a connection in time.
    held.delay.ms = 600;
    const timed = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const started = performance.now();
        const response = await get(app, `/quotes?limit=3&page=${i + 2}`);
        return { status: response.statusCode, ms: performance.now() - started, body: response.json() };
      }),
    );
    held.delay.ms = 0;
    const statuses = timed.map((t) => t.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(4);
    for (const { status, ms, body } of timed) {
      expect([200, 503]).toContain(status);
      if (status === 503) expect(body).toMatchObject({ code: 503, error: 'service_unavailable' });
      expect(ms).toBeLessThan(timeoutMs + 200);
    }
  });
});

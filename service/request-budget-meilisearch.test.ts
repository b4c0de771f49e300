/**
 * One deadline per client request on a real Meilisearch, seen through a proxy that delays each
 * engine answer: a route that reads several times answers 503 once `MEILI_TIMEOUT_MS` has passed
 * since its first read, however long each read took alone.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from './app.ts';
import { bundledQuotes } from './catalogue/search.suite.ts';
import { loadConfig } from './config.ts';
import { get } from './test-app.ts';
import { buildMeiliCatalogue, type MeiliCatalogue } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'one deadline per request';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

const TIMEOUT_MS = 600;

/** An HTTP proxy to `target` that holds each answer `delay.ms` before passing it on. */
async function delayingProxy(
  target: string,
  delay: { ms: number },
): Promise<{ url: string; server: Server }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        setTimeout(() => {
          if (res.destroyed) return;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        }, delay.ms);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.skipIf('skip' in source)('one deadline per request on Meilisearch', () => {
  let engine: MeiliEngine | undefined;
  let catalogue: MeiliCatalogue | undefined;
  let proxy: Server | undefined;
  let app: FastifyInstance | undefined;
  const delay = { ms: 0 };

  beforeAll(async () => {
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    catalogue = await buildMeiliCatalogue(engine, bundledQuotes());
    const proxied = await delayingProxy(catalogue.env.MEILI_HOST as string, delay);
    proxy = proxied.server;
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
    proxy?.closeAllConnections();
    await new Promise((done) => (proxy === undefined ? done(undefined) : proxy.close(done)));
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

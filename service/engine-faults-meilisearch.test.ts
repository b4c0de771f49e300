/**
 * A real Meilisearch behind a proxy that garbles its answers, as a faulty engine or a proxy in
 * front of it would: every quote path answers the contract's 503, never a 500 or a 200 of
 * wrong data, `/ready` says so, and the service serves again once the engine answers right.
 */
import type { FastifyInstance } from 'fastify';
import { Meilisearch } from 'meilisearch';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from './app.ts';
import { MEILI_SETTINGS } from './catalogue/meilisearch/request.ts';
import { loadConfig } from './config.ts';
import { errorOf, get } from './test-app.ts';
import { type DelayingProxy, delayingProxy } from './test-support/delaying-proxy.ts';
import { bundledQuotes } from './test-support/engine-apps.ts';
import { buildMeiliCatalogue, type MeiliCatalogue } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'engine faults';
const source = await meiliEngineSource(inject('containerRuntime'));
if ('skip' in source) announceSkip(SUITE, source.skip);

const TIMEOUT_MS = 1_000;

describe.skipIf('skip' in source)('a Meilisearch that answers garbled', () => {
  let engine: MeiliEngine | undefined;
  let catalogue: MeiliCatalogue | undefined;
  let proxy: DelayingProxy | undefined;
  let app: FastifyInstance | undefined;
  const logs: string[] = [];
  // Each request of the suite is asked once: none is answered from the service's answer cache.
  let asked = 0;
  const fresh = () => ++asked;

  beforeAll(async () => {
    if ('skip' in source) return;
    engine = await source.start(SUITE);
    catalogue = await buildMeiliCatalogue(engine, bundledQuotes());
    proxy = await delayingProxy(catalogue.env.MEILI_HOST as string);
    app = await buildApp(
      loadConfig({
        LOG_LEVEL: 'info',
        RATE_LIMIT_MAX: '1000000000',
        ...catalogue.env,
        MEILI_HOST: proxy.url,
        MEILI_TIMEOUT_MS: String(TIMEOUT_MS),
      }),
      { logStream: { write: (line: string) => void logs.push(line) } },
    );
  }, 180_000);

  afterEach(() => {
    if (proxy !== undefined) proxy.tamper.with = () => false;
  });

  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    await catalogue?.remove();
    await engine?.stop();
  }, 60_000);

  const quotePaths = () => [
    `/quotes?limit=${fresh()}`,
    `/quotes?sort=author&page=2&limit=${fresh()}`,
    `/quotes/${fresh()}`,
    '/quotes/random?genre=gothic',
    `/api/v1/quotes?genre=gothic&limit=${fresh()}`,
  ];

  /** `/ready` once it answers `status`, or its last answer after two seconds. */
  async function readyWhen(status: number) {
    const until = performance.now() + 2_000;
    let ready = await get(app as FastifyInstance, '/ready');
    while (ready.statusCode !== status && performance.now() < until) {
      await new Promise((done) => setTimeout(done, 50));
      ready = await get(app as FastifyInstance, '/ready');
    }
    return ready;
  }

  /** The engine's answers passed on through `rewrite`. */
  function rewritingAnswers(rewrite: (body: string) => string) {
    (proxy as DelayingProxy).tamper.with = (_request, answer, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(rewrite(answer.body.toString('utf8')));
      return true;
    };
  }

  /** Each of `urls` answers 503 service_unavailable, and nothing is logged at the level of a bug. */
  async function expectOutage(urls: readonly string[]) {
    logs.length = 0;
    for (const url of urls) {
      const response = await get(app as FastifyInstance, url);
      expect(response.statusCode, url).toBe(503);
      expect(errorOf(response).error, url).toBe('service_unavailable');
    }
    const levels = logs.map((line) => (JSON.parse(line) as { level: number }).level);
    expect(levels.filter((level) => level >= 50)).toEqual([]);
  }

  const bodies: [string, string][] = [
    ['an empty object', '{}'],
    ['null', 'null'],
    ['an empty body', ''],
    ['results that are not a list', '{"results":{},"offset":0,"limit":5,"total":3}'],
    ['a total that is a string', '{"results":[],"offset":0,"limit":5,"total":"3"}'],
    ['a result that is not a document', '{"results":[null],"offset":0,"limit":1,"total":1}'],
  ];
  for (const [name, garbled] of bodies) {
    it(`answers 503 and turns unready while the engine answers 200 with ${name}, and serves again after`, async () => {
      const service = app as FastifyInstance;
      (proxy as DelayingProxy).tamper.with = (_request, _answer, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(garbled);
        return true;
      };
      logs.length = 0;
      for (const url of quotePaths()) {
        const response = await get(service, url);
        expect(response.statusCode, url).toBe(503);
        expect(errorOf(response), url).toEqual({
          code: 503,
          error: 'service_unavailable',
          details: 'The quote catalogue is not available right now; try again in a few seconds',
        });
      }
      expect((await readyWhen(503)).statusCode).toBe(503);
      // An outage, logged as one: no line of the level bugs are logged at.
      const levels = logs.map((line) => (JSON.parse(line) as { level: number }).level);
      expect(levels.filter((level) => level >= 50)).toEqual([]);
      expect(logs.join('\n')).toMatch(/answered a (documents|document) read with JSON of another shape/);

      (proxy as DelayingProxy).tamper.with = () => false;
      expect((await readyWhen(200)).json()).toEqual({ status: 'ready' });
      for (const url of quotePaths()) expect((await get(service, url)).statusCode, url).toBe(200);
    });
  }

  const retyped: [string, RegExp, string][] = [
    ['an id that is a string', /"id":(\d+)/g, '"id":"$1"'],
    ['a genre that is not a list', /"genre":\[("[^"]*")[^\]]*\]/g, '"genre":$1'],
    ['a quote length that is not a number', /"quote_length":(\d+)/g, '"quote_length":"$1"'],
    ['an author that is a number', /"author":"[^"]*"/g, '"author":7'],
  ];
  for (const [name, field, replacement] of retyped) {
    it(`answers 503, not 500, while the engine's documents carry ${name}, and serves again after`, async () => {
      const service = app as FastifyInstance;
      rewritingAnswers((body) => body.replace(field, replacement));
      await expectOutage(quotePaths());

      (proxy as DelayingProxy).tamper.with = () => false;
      expect((await readyWhen(200)).statusCode).toBe(200);
      for (const url of quotePaths()) expect((await get(service, url)).statusCode, url).toBe(200);
    });
  }

  it("answers 503, not 500 or a coerced answer, while the engine's authors and works carry names that are numbers", async () => {
    const service = app as FastifyInstance;
    rewritingAnswers((body) =>
      body.replace(/"name":"[^"]*"/g, '"name":7').replace(/"title":"[^"]*"/g, '"title":7'),
    );
    const directoryPaths = () => [
      `/authors?limit=${fresh()}`,
      `/authors?sort=quote_count&limit=${fresh()}`,
      '/authors/1',
      `/works?limit=${fresh()}`,
      '/works/1',
    ];
    await expectOutage(directoryPaths());

    (proxy as DelayingProxy).tamper.with = () => false;
    for (const url of directoryPaths()) expect((await get(service, url)).statusCode, url).toBe(200);
  });

  it('answers 503 naming the indexer, not 500, while the live index filters and sorts on none of its attributes', async () => {
    const service = app as FastifyInstance;
    const admin = new Meilisearch({
      host: (engine as MeiliEngine).host,
      apiKey: (engine as MeiliEngine).masterKey,
      timeout: 10_000,
    });
    const live = admin.index((catalogue as MeiliCatalogue).env.MEILI_INDEX as string);
    // Settings another tool (or a hand) set on the live index, the documents left as they are.
    await live
      .updateSettings({ filterableAttributes: [], sortableAttributes: [] })
      .waitTask({ timeout: 60_000 });
    try {
      logs.length = 0;
      for (const url of [
        `/quotes?author=jane+austen&limit=${fresh()}`,
        `/quotes?sort=author&limit=${fresh()}`,
        `/api/v1/quotes?genre=gothic&limit=${fresh()}`,
      ]) {
        const response = await get(service, url);
        expect(response.statusCode, url).toBe(503);
        expect(errorOf(response).error, url).toBe('service_unavailable');
      }
      const levels = logs.map((line) => (JSON.parse(line) as { level: number }).level);
      expect(levels.filter((level) => level >= 50)).toEqual([]);
      expect(logs.join('\n')).toMatch(/run the indexer to rebuild it/);
    } finally {
      await live
        .updateSettings({
          filterableAttributes: MEILI_SETTINGS.filterableAttributes,
          sortableAttributes: MEILI_SETTINGS.sortableAttributes,
        })
        .waitTask({ timeout: 60_000 });
    }
    expect((await get(service, `/quotes?author=jane+austen&limit=${fresh()}`)).statusCode).toBe(200);
  });
});

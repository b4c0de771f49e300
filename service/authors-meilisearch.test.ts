/**
 * The authors and works suite (authors.suite.ts) on a real Meilisearch, found as every
 * Meilisearch suite finds one (test-support/meilisearch-engine.ts); each catalogue is built by
 * the real builder with the indexer's key and read with the service's key.
 */
import { Meilisearch } from 'meilisearch';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from './app.ts';
import { describeDirectory } from './authors.suite.ts';
import { bundledQuotes } from './catalogue/search.suite.ts';
import { loadConfig } from './config.ts';
import { fixtureApp, get } from './test-app.ts';
import { buildMeiliCatalogue } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'authors and works';
const source = await meiliEngineSource(inject('containerRuntime'));

if ('skip' in source) {
  const reason = announceSkip(SUITE, source.skip);
  describe.skip(`authors and works (meilisearch) (skipped: ${reason})`, () => {
    it('needs the engine', () => {});
  });
} else {
  let engine: Promise<MeiliEngine> | undefined;
  afterAll(async () => {
    if (engine !== undefined) await (await engine).stop();
  });
  describeDirectory('meilisearch', async (quotes) => {
    engine ??= source.start(SUITE);
    const catalogue = await buildMeiliCatalogue(await engine, quotes);
    const app = await fixtureApp('', catalogue.env);
    return {
      app,
      async close() {
        await app.close();
        await catalogue.remove();
      },
    };
  });

  describe('authors and works on an index built before them (meilisearch)', () => {
    it('answers 503 for the authors, names the index missing, and stays ready serving the quotes', async () => {
      engine ??= source.start(SUITE);
      const started = await engine;
      const catalogue = await buildMeiliCatalogue(started, bundledQuotes());
      const authors = `${catalogue.env.MEILI_INDEX}_authors`;
      const admin = new Meilisearch({ host: started.host, apiKey: started.masterKey, timeout: 10_000 });
      await admin.deleteIndex(authors).waitTask({ timeout: 30_000 });
      const lines: string[] = [];
      const app = await buildApp(
        loadConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000000', ...catalogue.env }),
        { logStream: { write: (line: string) => void lines.push(line) } },
      );
      try {
        expect((await get(app, '/quotes?limit=1')).statusCode).toBe(200);
        const refused = await get(app, '/authors');
        expect(refused.statusCode).toBe(503);
        expect(refused.json()).toMatchObject({ code: 503, error: 'service_unavailable' });
        expect(lines.join('\n')).toContain(`holds no index '${authors}'`);
        // The engine answered and holds the quotes: the replica stays in rotation.
        expect((await app.inject('/ready')).statusCode).toBe(200);
        expect((await get(app, '/quotes?limit=1&page=2')).statusCode).toBe(200);
      } finally {
        await app.close();
        // The authors index is already gone: the others are deleted, and the keys.
        await catalogue.remove().catch(() => undefined);
      }
    });
  });
}

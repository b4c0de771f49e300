/**
 * Range filters on a Meilisearch index built by a release before them (`quote_length` and
 * `publish_day` not filterable): every request with a range answers 503 telling to run the
 * indexer, as `q` does on an index without its search fields, and every other request serves.
 */
import { Meilisearch } from 'meilisearch';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { fixtureApp, get } from './test-app.ts';
import { FIXTURE_QUOTES } from './test-support/fixtures.ts';
import { buildMeiliCatalogue, dropFilterable } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'range filters on an index built before them';
const source = await meiliEngineSource(inject('containerRuntime'));

if ('skip' in source) {
  const reason = announceSkip(SUITE, source.skip);
  describe.skip(`${SUITE} (meilisearch) (skipped: ${reason})`, () => {
    it('needs the engine', () => {});
  });
} else {
  let engine: MeiliEngine | undefined;
  afterAll(async () => {
    await engine?.stop();
  });
  describe(`${SUITE} (meilisearch)`, () => {
    it('answers 503 service_unavailable to every request with a range, and serves the others', async () => {
      engine = await source.start(SUITE);
      const catalogue = await buildMeiliCatalogue(engine, FIXTURE_QUOTES);
      const uid = catalogue.env.MEILI_INDEX as string;
      const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
      // Make the index just built look like one of the release before range filters.
      await dropFilterable(admin, uid, (a) => a !== 'quote_length' && a !== 'publish_day');
      const app = await fixtureApp('', catalogue.env);
      try {
        const ranged = [
          '/quotes?min_length=20',
          '/quotes?published_from=1900&published_to=2000',
          `/quotes?min_length=20&page=${FIXTURE_QUOTES.length}&limit=1`,
          '/quotes?min_length=20&sort=quote_length&order=desc',
          '/quotes?max_length=400&q=the',
          '/quotes/random?min_length=20',
          '/quotes/random?count=3&published_to=2000',
          '/quotes/today?min_length=20',
          '/quotes/facets?facet=genre&min_length=20',
        ];
        const answers = [];
        for (const url of ranged) {
          const response = await get(app, url);
          answers.push({
            url,
            status: response.statusCode,
            error: (response.json() as { error: string }).error,
          });
        }
        expect(answers).toEqual(ranged.map((url) => ({ url, status: 503, error: 'service_unavailable' })));
        for (const url of ['/quotes?limit=5', '/quotes/random', '/quotes/facets?facet=genre']) {
          expect({ url, status: (await get(app, url)).statusCode }).toEqual({ url, status: 200 });
        }
      } finally {
        await app.close();
        await catalogue.remove();
      }
    }, 120_000);
  });
}

/**
 * The facet suite (facets.suite.ts) on a real Meilisearch, found as every Meilisearch suite finds
 * one (test-support/meilisearch-engine.ts); each catalogue is built by the real builder with the
 * indexer's key and read with the service's key.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createMeiliBuilder } from './catalogue/meilisearch/builder.ts';
import type { Quote } from './catalogue/port.ts';
import { describeFacets } from './facets.suite.ts';
import { buildFixtureCatalogue, fixtureApp, get } from './test-app.ts';
import { FIXTURE_QUOTES } from './test-support/fixtures.ts';
import { buildMeiliCatalogue } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'facets';
const source = await meiliEngineSource(inject('containerRuntime'));

if ('skip' in source) {
  const reason = announceSkip(SUITE, source.skip);
  describe.skip(`GET /quotes/facets (meilisearch) (skipped: ${reason})`, () => {
    it('needs the engine', () => {});
  });
} else {
  let engine: Promise<MeiliEngine> | undefined;
  afterAll(async () => {
    if (engine !== undefined) await (await engine).stop();
  });
  describe('facet counts across a reindex (meilisearch)', () => {
    it('answers from the new catalogue once it is live, never from counts kept for the old one', async () => {
      engine ??= source.start(SUITE);
      const live = await engine;
      const before = FIXTURE_QUOTES.slice(0, 20);
      const after = FIXTURE_QUOTES.slice(20);
      const catalogue = await buildMeiliCatalogue(live, before);
      const app = await fixtureApp('', catalogue.env);
      try {
        const url = '/quotes/facets?facet=category&facet=genre&limit=100';
        const first = (await get(app, url)).json() as { total_quotes: number };
        expect(first.total_quotes).toBe(before.length);
        const builder = await createMeiliBuilder({
          host: live.host,
          apiKey: live.masterKey,
          index: catalogue.env.MEILI_INDEX as string,
        });
        await builder.add(after);
        await builder.commit();
        // The service notices a new catalogue within a second (INFO_TTL_MS).
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        const second = await get(app, url);
        expect(second.json()).toEqual(await facetsOf(after, url));
      } finally {
        await app.close();
        await catalogue.remove();
      }
    }, 120_000);
  });

  describeFacets('meilisearch', async (quotes) => {
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
}

/** What the embedded engine answers for `quotes`: the reference, checked against the model by facets.test.ts. */
async function facetsOf(quotes: readonly Quote[], url: string): Promise<unknown> {
  const catalogue = await buildFixtureCatalogue(quotes);
  const app = await fixtureApp(catalogue.path);
  try {
    return (await get(app, url)).json();
  } finally {
    await app.close();
    catalogue.remove();
  }
}

/**
 * The authors and works suite (authors.suite.ts) on a real Meilisearch, found as every
 * Meilisearch suite finds one (test-support/meilisearch-engine.ts); each catalogue is built by
 * the real builder with the indexer's key and read with the service's key.
 */
import { afterAll, describe, inject, it } from 'vitest';
import { describeDirectory } from './authors.suite.ts';
import { fixtureApp } from './test-app.ts';
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
}

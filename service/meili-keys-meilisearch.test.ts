/**
 * The deployment's key step (deploy/meili-keys.ts) on a real engine, when a release changes the
 * scope of a key that running processes hold: they must keep working.
 */
import { Meilisearch } from 'meilisearch';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ensureKeys, keySpecs } from '../deploy/meili-keys.ts';
import { fixtureApp, get } from './test-app.ts';
import { FIXTURE_QUOTES } from './test-support/fixtures.ts';
import { buildMeiliCatalogue } from './test-support/meilisearch-catalogue.ts';
import { announceSkip, type MeiliEngine, meiliEngineSource } from './test-support/meilisearch-engine.ts';

const SUITE = 'key step';
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
    it('narrows the scope of the keys a running service and indexer hold without taking them away', async () => {
      engine = await source.start(SUITE);
      const catalogue = await buildMeiliCatalogue(engine, FIXTURE_QUOTES);
      const live = catalogue.env.MEILI_INDEX as string;
      const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
      // Keys as an earlier release made them: every index named like the live one.
      for (const key of (await admin.getKeys({ limit: 1000 })).results) {
        if (key.name?.startsWith(`${live}-`)) await admin.deleteKey(key.uid);
      }
      const [indexerSpec, searchSpec] = keySpecs(live);
      if (indexerSpec === undefined || searchSpec === undefined) throw new Error('two key specs expected');
      const earlier = async (spec: typeof searchSpec) =>
        (
          await admin.createKey({
            name: spec.name,
            actions: spec.actions,
            indexes: [`${live}*`],
            expiresAt: null,
          })
        ).key;
      const indexerKey = await earlier(indexerSpec);
      const searchKey = await earlier(searchSpec);
      const neighbour = `${live}_staging`;
      await admin.createIndex(neighbour, { primaryKey: 'id' }).waitTask({ timeout: 30_000 });
      const app = await fixtureApp('', { ...catalogue.env, MEILI_API_KEY: searchKey });
      try {
        expect((await get(app, '/quotes?limit=1')).statusCode).toBe(200);

        const values = await ensureKeys(admin, live);

        expect(Object.fromEntries(values)).toEqual({ 'indexer.key': indexerKey, 'search.key': searchKey });
        const scopes = (await admin.getKeys({ limit: 1000 })).results
          .filter((key) => key.name?.startsWith(`${live}-`))
          .map(({ name, key, indexes }) => ({ name, key, indexes: [...indexes].sort() }))
          .sort((a, b) => String(a.name).localeCompare(String(b.name)));
        expect(scopes).toEqual([
          { name: indexerSpec.name, key: indexerKey, indexes: [...indexerSpec.indexes].sort() },
          { name: searchSpec.name, key: searchKey, indexes: [...searchSpec.indexes].sort() },
        ]);
        // The running service still reads with the key it started with.
        const after = await get(app, '/quotes?limit=1');
        expect(after.statusCode).toBe(200);
        // The indexer's key still reaches its live index, and neither reaches the neighbour now.
        const asIndexer = new Meilisearch({ host: engine.host, apiKey: indexerKey, timeout: 10_000 });
        expect((await asIndexer.index(live).getStats()).numberOfDocuments).toBe(FIXTURE_QUOTES.length);
        for (const key of [indexerKey, searchKey]) {
          const response = await fetch(`${engine.host}/indexes/${neighbour}/documents`, {
            headers: { authorization: `Bearer ${key}` },
          });
          expect(response.status).toBe(403);
        }
      } finally {
        await app.close();
        // The catalogue's own keys were replaced above: its indexes and the keys by name go here.
        for (const uid of [live, `${live}_authors`, `${live}_works`, neighbour]) {
          await admin.deleteIndex(uid).waitTask({ timeout: 30_000 });
        }
        for (const key of (await admin.getKeys({ limit: 1000 })).results) {
          if (key.name?.startsWith(`${live}-`)) await admin.deleteKey(key.uid);
        }
      }
    }, 120_000);
  });
}

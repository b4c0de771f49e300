/**
 * The full-text search suite (search.suite.ts) on a real Meilisearch, found as every Meilisearch
 * suite finds one (test-support/meilisearch-engine.ts). The indexer builds with the indexer's key
 * and the reader searches with the service's key, both as `deploy/meili-keys.ts` scopes them.
 */
import { randomBytes } from 'node:crypto';
import { Meilisearch } from 'meilisearch';
import { inject } from 'vitest';
import { keySpecs } from '../../deploy/meili-keys.ts';
import { announceSkip, meiliEngineSource } from '../test-support/meilisearch-engine.ts';
import { openMeiliCatalogue } from './meilisearch.ts';
import { createMeiliBuilder } from './meilisearch-builder.ts';
import type { CatalogueIndex } from './port.ts';
import { describeSearch } from './search.suite.ts';

const SUITE = 'full-text search';
const source = await meiliEngineSource(inject('containerRuntime'));

describeSearch(
  'meilisearch',
  async () => {
    if ('skip' in source) throw new Error(source.skip);
    const engine = await source.start(SUITE);
    const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
    const prefix = `search_${randomBytes(4).toString('hex')}`;
    const [indexerSpec, serviceSpec] = keySpecs(prefix);
    if (indexerSpec === undefined || serviceSpec === undefined) throw new Error('two key specs expected');
    const indexerKey = await admin.createKey({
      name: `${prefix}-indexer`,
      actions: indexerSpec.actions,
      indexes: indexerSpec.indexes,
      expiresAt: null,
    });
    const searchKey = await admin.createKey({
      name: `${prefix}-search`,
      actions: serviceSpec.actions,
      indexes: [`${prefix}_*`],
      expiresAt: null,
    });
    const opened: CatalogueIndex[] = [];
    let builds = 0;
    return {
      async load(quotes) {
        // An index per catalogue: each reader keeps serving the one it opened.
        const live = `${prefix}_${++builds}`;
        const builder = await createMeiliBuilder({
          host: engine.host,
          apiKey: indexerKey.key,
          index: live,
          taskTimeoutMs: 120_000,
        });
        try {
          await builder.add(quotes);
          await builder.commit();
        } catch (error) {
          await builder.abort();
          throw error;
        }
        const index = openMeiliCatalogue({
          host: engine.host,
          apiKey: searchKey.key,
          index: live,
          timeoutMs: 10_000,
        });
        opened.push(index);
        return index;
      },
      async teardown() {
        for (const index of opened) await index.close();
        try {
          const ours = (await admin.getRawIndexes({ limit: 1000 })).results.filter((i) =>
            i.uid.startsWith(prefix),
          );
          for (const { uid } of ours) await admin.deleteIndex(uid).waitTask({ timeout: 30_000 });
          await admin.deleteKey(indexerKey.uid);
          await admin.deleteKey(searchKey.uid);
        } finally {
          await engine.stop();
        }
      },
    };
  },
  'skip' in source ? { skip: announceSkip(SUITE, source.skip) } : {},
);

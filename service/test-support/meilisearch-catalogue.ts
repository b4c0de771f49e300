/**
 * A catalogue on a real Meilisearch for the HTTP suites: the deployment's two keys (as
 * `deploy/meili-keys.ts` scopes them), the quotes built into a live index of its own by the real
 * builder with the indexer's key, and the variables that make the service read it with the
 * service's key. Not a test file itself.
 */
import { randomBytes } from 'node:crypto';
import { type Key, Meilisearch } from 'meilisearch';
import { keySpecs } from '../../deploy/meili-keys.ts';
import { createMeiliBuilder } from '../catalogue/meilisearch/builder.ts';
import type { Quote } from '../catalogue/port.ts';
import type { MeiliEngine } from './meilisearch-engine.ts';

export interface MeiliCatalogue {
  /** The variables of a service reading this catalogue. */
  env: Record<string, string>;
  /** Deletes the index and the keys (the engine itself is the caller's). */
  remove(): Promise<void>;
}

export async function buildMeiliCatalogue(
  engine: MeiliEngine,
  quotes: readonly Quote[],
): Promise<MeiliCatalogue> {
  const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
  // A name of its own, so that a shared engine (MEILI_URL) keeps its indexes apart.
  const live = `quotes_${randomBytes(4).toString('hex')}`;
  const keys: Key[] = [];
  for (const spec of keySpecs(live)) {
    keys.push(
      await admin.createKey({
        name: spec.name,
        actions: spec.actions,
        indexes: spec.indexes,
        expiresAt: null,
      }),
    );
  }
  const [indexerKey, serviceKey] = keys;
  if (indexerKey === undefined || serviceKey === undefined) throw new Error('two key specs expected');
  const builder = await createMeiliBuilder({ host: engine.host, apiKey: indexerKey.key, index: live });
  try {
    await builder.add(quotes);
    await builder.commit();
  } catch (error) {
    await builder.abort();
    throw error;
  }
  return {
    env: {
      SEARCH_BACKEND: 'meilisearch',
      MEILI_HOST: engine.host,
      MEILI_INDEX: live,
      MEILI_API_KEY: serviceKey.key,
    },
    async remove() {
      for (const uid of [live, `${live}_authors`, `${live}_works`]) {
        await admin.deleteIndex(uid).waitTask({ timeout: 30_000 });
      }
      for (const key of keys) await admin.deleteKey(key.uid);
    },
  };
}

/**
 * A catalogue on a real Meilisearch for the HTTP suites: the deployment's two keys (as
 * `deploy/meili-keys.ts` scopes them), the quotes built into a live index of its own by the real
 * builder with the indexer's key, and the variables that make the service read it with the
 * service's key. Not a test file itself.
 */
import { randomBytes } from 'node:crypto';
import { type Key, Meilisearch } from 'meilisearch';
import { keySpecs } from '../../deploy/meili-keys.ts';
import { createMeiliBuilder, type MeiliBuilderOptions } from '../catalogue/meilisearch/builder.ts';
import { type MeiliCatalogueOptions, openMeiliCatalogue } from '../catalogue/meilisearch/catalogue.ts';
import type { CatalogueIndex, CatalogueInfo, Quote } from '../catalogue/port.ts';
import { type DelayingProxy, delayingProxy } from './delaying-proxy.ts';
import type { MeiliEngine } from './meilisearch-engine.ts';

export interface MeiliCatalogue {
  /** The variables of a service reading this catalogue. */
  env: Record<string, string>;
  /** Deletes the index and the keys (the engine itself is the caller's). */
  remove(): Promise<void>;
}

/**
 * The deployment's two keys for the live index `live`, scoped as `deploy/meili-keys.ts` scopes
 * them; both reach `indexes` instead when given (a suite with an index per catalogue, in a
 * namespace of its own), with the deployment's actions still.
 */
export async function createDeploymentKeys(
  admin: Meilisearch,
  live: string,
  indexes?: string[],
): Promise<{ indexerKey: Key; searchKey: Key }> {
  const [indexerSpec, serviceSpec] = keySpecs(live);
  if (indexerSpec === undefined || serviceSpec === undefined) throw new Error('two key specs expected');
  const create = (spec: typeof indexerSpec) =>
    admin.createKey({
      name: spec.name,
      actions: spec.actions,
      indexes: indexes ?? spec.indexes,
      expiresAt: null,
    });
  return { indexerKey: await create(indexerSpec), searchKey: await create(serviceSpec) };
}

/**
 * Builds `quotes` as the indexer does: added `chunk` at a time (all at once by default), then
 * committed; the build is aborted on any failure.
 */
export async function buildWith(
  options: MeiliBuilderOptions,
  quotes: readonly Quote[],
  chunk = quotes.length,
): Promise<CatalogueInfo> {
  const builder = await createMeiliBuilder(options);
  try {
    for (let i = 0; i < quotes.length; i += Math.max(1, chunk)) await builder.add(quotes.slice(i, i + chunk));
    return await builder.commit();
  } catch (error) {
    await builder.abort();
    throw error;
  }
}

/**
 * Makes the index `uid` look like one built by an earlier release, whose settings lacked some
 * filterable attributes: keeps only those `keep` accepts, and sets `searchableAttributes` when
 * given (the documents are left as they are).
 */
export async function dropFilterable(
  admin: Meilisearch,
  uid: string,
  keep: (attribute: string) => boolean,
  searchableAttributes?: string[],
): Promise<void> {
  const settings = await admin.index(uid).getSettings();
  await admin
    .index(uid)
    .updateSettings({
      filterableAttributes: (settings.filterableAttributes as string[]).filter(keep),
      ...(searchableAttributes === undefined ? {} : { searchableAttributes }),
    })
    .waitTask({ timeout: 60_000 });
}

/** A reader opened with `options`, through a proxy of `options.host` that keeps every request. */
export async function readerThroughProxy(
  options: MeiliCatalogueOptions,
): Promise<{ proxy: DelayingProxy; reader: CatalogueIndex; close(): Promise<void> }> {
  const proxy = await delayingProxy(options.host);
  const reader = openMeiliCatalogue({ ...options, host: proxy.url });
  return {
    proxy,
    reader,
    async close() {
      await reader.close();
      await proxy.close();
    },
  };
}

export async function buildMeiliCatalogue(
  engine: MeiliEngine,
  quotes: readonly Quote[],
): Promise<MeiliCatalogue> {
  const admin = new Meilisearch({ host: engine.host, apiKey: engine.masterKey, timeout: 10_000 });
  // A name of its own, so that a shared engine (MEILI_URL) keeps its indexes apart.
  const live = `quotes_${randomBytes(4).toString('hex')}`;
  const { indexerKey, searchKey: serviceKey } = await createDeploymentKeys(admin, live);
  const keys = [indexerKey, serviceKey];
  await buildWith({ host: engine.host, apiKey: indexerKey.key, index: live }, quotes);
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

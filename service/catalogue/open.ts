/** Chooses the catalogue backend the configuration names. */
import type { Config } from '../config.ts';
import type { CatalogueBuilder, CatalogueIndex, CatalogueLogger } from './port.ts';

/** Opens the configured backend for reading. Never throws for an unreachable engine: info() does. */
export async function openCatalogue(config: Config, logger?: CatalogueLogger): Promise<CatalogueIndex> {
  if (config.searchBackend === 'meilisearch') {
    const { openMeiliCatalogue } = await import('./meilisearch/catalogue.ts');
    return openMeiliCatalogue({
      host: config.meili.host,
      apiKey: config.meili.apiKey,
      index: config.meili.index,
      timeoutMs: config.meili.timeoutMs,
      maxDeepReads: config.meili.deepReads,
      connections: config.meili.connections,
      warmFacets: true,
      logger,
    });
  }
  const { openSqliteCatalogue } = await import('./sqlite/catalogue.ts');
  return openSqliteCatalogue({
    path: config.sqlitePath,
    textMemoryBytes: config.sqliteTextMemoryBytes,
    logger,
  });
}

/** Starts a new build of the configured backend's catalogue (the indexer's write side). */
export async function createBuilder(config: Config, logger?: CatalogueLogger): Promise<CatalogueBuilder> {
  if (config.searchBackend === 'meilisearch') {
    const { createMeiliBuilder } = await import('./meilisearch/builder.ts');
    return createMeiliBuilder({
      host: config.meili.host,
      apiKey: config.meili.adminKey,
      index: config.meili.index,
      searchCutoffMs: config.meili.timeoutMs,
      logger,
    });
  }
  const { createSqliteBuilder } = await import('./sqlite/builder.ts');
  return createSqliteBuilder({ path: config.sqlitePath, logger });
}

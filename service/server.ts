/**
 * `npm start`: loads the configuration, builds the SQLite catalogue from the bundled data set on
 * first start, listens, and shuts down gracefully (in-flight requests finish; a signal exits within
 * {@link SHUTDOWN_DELAY_MS}).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger } from 'fastify';
import { indexFile } from '../indexer/index-file.ts';
import { buildApp } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';

/** The data set that ships with the repository, as the README's Quick start uses it. */
export const BUNDLED_DATA = fileURLToPath(new URL('../data/quotes.json', import.meta.url));
/** Longest graceful shutdown; past it the process exits 1 (orchestrators kill at 10 s). */
export const SHUTDOWN_DELAY_MS = 9_000;

/** First start: builds SQLITE_PATH from the bundled data when it does not exist yet. */
async function ensureCatalogue(config: Config, log: FastifyBaseLogger): Promise<void> {
  if (config.searchBackend !== 'sqlite' || existsSync(config.sqlitePath)) return;
  log.info({ sqlitePath: config.sqlitePath }, 'building the catalogue from data/quotes.json (first start)');
  const summary = await indexFile(BUNDLED_DATA, config, { logger: log });
  log.info({ records: summary.records, seconds: summary.seconds }, 'catalogue built');
}

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config, { prepare: (log) => ensureCatalogue(config, log) });
  closeWithGrace({ delay: SHUTDOWN_DELAY_MS, logger: app.log }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down: finishing requests in flight');
    await app.close();
  });
  await app.listen({ host: config.host, port: config.port });
}

try {
  await main();
} catch (error) {
  // A bad variable is one line naming it; anything else keeps its stack for whoever debugs it.
  const text =
    error instanceof ConfigError ? error.message : `failed to start: ${(error as Error)?.stack ?? error}`;
  process.stderr.write(`${text}\n`);
  process.exit(1);
}

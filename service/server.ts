/**
 * `npm start`: loads the configuration, builds the SQLite catalogue from the bundled data set on
 * first start, listens, and shuts down gracefully (in-flight requests finish; a signal exits within
 * {@link SHUTDOWN_DELAY_MS}).
 */
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { indexFile } from '../indexer/index-file.ts';
import { buildApp } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';

/** The data set that ships with the repository, as the README's Quick start uses it. */
export const BUNDLED_DATA = fileURLToPath(new URL('../data/quotes.json', import.meta.url));
/** Longest graceful shutdown; past it the process exits 1 (orchestrators kill at 10 s). */
export const SHUTDOWN_DELAY_MS = 9_000;

/**
 * First start: builds SQLITE_PATH from the bundled data when it does not exist yet. A path that
 * can never hold the catalogue (a directory, a place where no file can be created) is a bad
 * SQLITE_PATH, reported as one line like any other bad variable.
 */
async function ensureCatalogue(config: Config, log: FastifyBaseLogger): Promise<void> {
  if (config.searchBackend !== 'sqlite') return;
  const path = config.sqlitePath;
  const accepts = 'SQLITE_PATH must name a catalogue file, or where one can be created';
  try {
    if (statSync(path).isDirectory()) throw new ConfigError(`${accepts}; '${path}' is a directory`);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw asConfigError(error, accepts);
  }
  log.info({ sqlitePath: path }, 'building the catalogue from data/quotes.json (first start)');
  try {
    const summary = await indexFile(BUNDLED_DATA, config, { logger: log });
    log.info({ records: summary.records, seconds: summary.seconds }, 'catalogue built');
  } catch (error) {
    throw asConfigError(error, accepts);
  }
}

/**
 * A file-system failure (it, or its cause, has an errno code such as `EACCES`) as one line;
 * anything else stays as it is, with its stack.
 */
function asConfigError(error: unknown, accepts: string): unknown {
  if (error instanceof ConfigError || !(error instanceof Error)) return error;
  const isErrno = (e: unknown) => /^E[A-Z0-9]+$/.test(String((e as NodeJS.ErrnoException | undefined)?.code));
  return isErrno(error) || isErrno(error.cause) ? new ConfigError(`${accepts}; ${error.message}`) : error;
}

/**
 * Listening failures as one line naming the variable to change: a host name that does not
 * resolve or is not this machine's (HOST), a port in use or reserved (PORT).
 */
async function listen(app: FastifyInstance, config: Config): Promise<void> {
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${config.host}:${config.port}`;
    const byHost: Record<string, string> = {
      ENOTFOUND: 'it does not resolve',
      EAI_AGAIN: 'it does not resolve',
      EADDRNOTAVAIL: 'it is not an address of this machine',
    };
    const byPort: Record<string, string> = {
      EADDRINUSE: 'it is in use',
      EACCES: 'it needs privileges this process lacks',
    };
    const hostReason = code === undefined ? undefined : byHost[code];
    if (hostReason !== undefined) {
      throw new ConfigError(
        `HOST must be a name or address this machine can listen on; cannot listen on ${where}: ${hostReason} (${code})`,
      );
    }
    const portReason = code === undefined ? undefined : byPort[code];
    if (portReason !== undefined) {
      throw new ConfigError(
        `PORT must be a free port this process may use; cannot listen on ${where}: ${portReason} (${code})`,
      );
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config, { prepare: (log) => ensureCatalogue(config, log) });
  closeWithGrace({ delay: SHUTDOWN_DELAY_MS, logger: app.log }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down: finishing requests in flight');
    // A request still arriving (a slow or hostile client) holds close() until its timeout, past
    // the grace delay: the process would be killed before its close hooks ran (catalogue, Redis).
    // Whatever is still open one second before the delay ends is cut.
    const cut = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_DELAY_MS - 1000);
    cut.unref();
    await app.close();
    clearTimeout(cut);
  });
  await listen(app, config);
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

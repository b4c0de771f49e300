/** The project's own errors carry a `code`, as the HTTP Error object carries `error`. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { indexFile } from '../indexer/index-file.ts';
import { CatalogueUnavailableError, normaliseFilters } from './catalogue/port.ts';
import { openSqliteCatalogue } from './catalogue/sqlite/catalogue.ts';
import { CodedError } from './coded-error.ts';
import { loadConfig } from './config.ts';
import { StoreUnavailableError } from './ratelimit/store.ts';
import { withTimeout } from './redis.ts';

const dir = mkdtempSync(join(tmpdir(), 'coded-error-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function codeOf(run: () => unknown): Promise<[string, string] | 'no error'> {
  try {
    await run();
  } catch (error) {
    return [(error as Error).name, error instanceof CodedError ? error.code : 'no code'];
  }
  return 'no error';
}

describe('internal errors', () => {
  const config = loadConfig({ SQLITE_PATH: join(dir, 'quotes.db') });

  it.each([
    [
      'a bad environment variable',
      () => loadConfig({ PORT: 'abc' }),
      ['ConfigError', 'invalid_configuration'],
    ],
    [
      'a filter value the query cannot hold',
      () => normaliseFilters({ author_id: ['x'] } as never),
      ['QueryError', 'bad_parameter'],
    ],
    [
      'a data file that is not there',
      () => indexFile(join(dir, 'missing.json'), config),
      ['IndexInputError', 'unreadable_input'],
    ],
    [
      'a data file with invalid records',
      () => {
        const file = join(dir, 'invalid.ndjson');
        writeFileSync(file, '{"id":"x"}\n');
        return indexFile(file, config);
      },
      ['IndexValidationError', 'invalid_records'],
    ],
    [
      'a run interrupted through its signal',
      () => {
        const file = join(dir, 'one.ndjson');
        writeFileSync(file, '{"id":1}\n');
        return indexFile(file, config, { signal: AbortSignal.abort() });
      },
      ['IndexAbortedError', 'interrupted'],
    ],
    [
      'a Redis call past its bound',
      () => withTimeout(new Promise(() => {}), 1, 'a count'),
      ['TimeoutError', 'timeout'],
    ],
    [
      'a catalogue file that is not there',
      async () => {
        const catalogue = openSqliteCatalogue({ path: join(dir, 'none.db'), reloadCheckMs: 0 });
        try {
          await catalogue.info();
        } finally {
          await catalogue.close();
        }
      },
      ['CatalogueUnavailableError', 'catalogue_unavailable'],
    ],
  ] as const)('%s', async (_name, run, expected) => {
    expect(await codeOf(run)).toEqual(expected);
  });

  it('the rate-limit store and the engine tasks name theirs too', () => {
    expect(new StoreUnavailableError('Redis is down').code).toBe('rate_limit_store_unavailable');
    expect(new CatalogueUnavailableError('engine down').code).toBe('catalogue_unavailable');
  });
});

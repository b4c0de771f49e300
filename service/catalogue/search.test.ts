/** The full-text search suite (search.suite.ts) on the embedded SQLite engine. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogueIndex } from './port.ts';
import { describeSearch } from './search.suite.ts';
import { openSqliteCatalogue } from './sqlite.ts';
import { createSqliteBuilder } from './sqlite-builder.ts';

describeSearch(
  'sqlite',
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quotes-search-suite-'));
    const opened: CatalogueIndex[] = [];
    let builds = 0;
    return {
      async load(quotes) {
        // A file per catalogue: each index keeps serving the file it opened.
        const path = join(dir, `quotes-${++builds}.db`);
        const builder = await createSqliteBuilder({ path });
        try {
          for (let i = 0; i < quotes.length; i += 250) await builder.add(quotes.slice(i, i + 250));
          await builder.commit();
        } catch (error) {
          await builder.abort();
          throw error;
        }
        const index = openSqliteCatalogue({ path, reloadCheckMs: 0 });
        opened.push(index);
        return index;
      },
      async teardown() {
        for (const index of opened) await index.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
  { phraseFirst: true },
);

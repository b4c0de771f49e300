/** The full-text search suite (search.suite.ts) on the embedded SQLite engine. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { type CatalogueIndex, CatalogueUnavailableError, type ListQuery, type Quote } from './port.ts';
import { describeSearch, relevanceQuotes } from './search.suite.ts';
import { createSqliteBuilder } from './sqlite/builder.ts';
import { openSqliteCatalogue } from './sqlite/catalogue.ts';

/**
 * Catalogue files built from the quotes the suite loads, in the order `arrange` gives them, one
 * file per catalogue (each index keeps serving the file it opened).
 */
function sqliteHarness(prefix: string, arrange: (quotes: Quote[]) => Quote[] = (quotes) => quotes) {
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    const opened: CatalogueIndex[] = [];
    let builds = 0;
    return {
      async load(quotes: Quote[]) {
        const path = join(dir, `quotes-${++builds}.db`);
        const builder = await createSqliteBuilder({ path });
        try {
          const arrived = arrange(quotes);
          for (let i = 0; i < arrived.length; i += 250) await builder.add(arrived.slice(i, i + 250));
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
  };
}

describeSearch('sqlite', sqliteHarness('quotes-search-suite-'), { phraseFirst: true });

// The same suite on files whose quotes arrived in reverse id order: the word index of the texts
// is built by arrival and must still list the quotes by id.
describeSearch(
  'sqlite, quotes added in reverse id order',
  sqliteHarness('quotes-search-reversed-', (quotes) => [...quotes].sort((a, b) => b.id - a.id)),
  { phraseFirst: true },
);

describe('a catalogue file of a format before the search table of word pairs', () => {
  it.each([
    // No word index of the texts.
    ['5', "DELETE FROM columns WHERE name = 'dictionary_text_words' OR name LIKE 'text\\_%' ESCAPE '\\';"],
    // A search table of the words (its rows do not matter here), none of their pairs.
    [
      '6',
      "DROP TABLE IF EXISTS search_pairs; DROP TABLE IF EXISTS search; CREATE VIRTUAL TABLE search USING fts5(text, content='', columnsize=0, tokenize='ascii');",
    ],
  ])(
    'of format %s serves everything but q, which answers 503 until the indexer rebuilds it',
    async (format, change) => {
      const dir = await mkdtemp(join(tmpdir(), `quotes-search-format${format}-`));
      const path = join(dir, 'quotes.db');
      try {
        const builder = await createSqliteBuilder({ path });
        await builder.add(relevanceQuotes());
        await builder.commit();
        // What a build of an earlier release wrote.
        const db = new DatabaseSync(path);
        db.exec(`${change} UPDATE meta SET value = '${format}' WHERE key = 'format';`);
        db.close();
        const index = openSqliteCatalogue({ path, reloadCheckMs: 0 });
        try {
          const all = await index.list({ filters: {}, sort: [], page: 1, limit: 3, fields: ['id'] });
          expect(all.items).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
          const search: ListQuery = {
            filters: { q: ['garden'] },
            sort: [],
            page: 1,
            limit: 3,
            fields: ['id'],
          };
          await expect(index.list(search)).rejects.toThrow(CatalogueUnavailableError);
          await expect(index.list(search)).rejects.toThrow(
            /built before this release's search index: run the indexer/,
          );
        } finally {
          await index.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('a catalogue file of a format before language', () => {
  it.each([
    ['3', 'DROP TABLE search_pairs; '],
    ['4', ''],
  ])(
    'of format %s is refused, every call answering 503 until the indexer rebuilds it',
    async (format, drop) => {
      const dir = await mkdtemp(join(tmpdir(), 'quotes-search-old-'));
      const path = join(dir, 'quotes.db');
      try {
        const builder = await createSqliteBuilder({ path });
        await builder.add(relevanceQuotes());
        await builder.commit();
        // What a build of an earlier release wrote: no language column (and, in format 3, no search table).
        const db = new DatabaseSync(path);
        db.exec(
          `${drop}DELETE FROM columns WHERE name IN ('rank_language', 'dictionary_language'); UPDATE meta SET value = '${format}' WHERE key = 'format';`,
        );
        db.close();
        const index = openSqliteCatalogue({ path, reloadCheckMs: 0 });
        try {
          const query: ListQuery = { filters: {}, sort: [], page: 1, limit: 3, fields: ['id'] };
          await expect(index.list(query)).rejects.toThrow(CatalogueUnavailableError);
          await expect(index.list(query)).rejects.toThrow(/before quotes had a language: run the indexer/);
          await expect(index.random({ q: ['garden'] }, null)).rejects.toThrow(/run the indexer/);
          await expect(index.get(1, null)).rejects.toThrow(CatalogueUnavailableError);
        } finally {
          await index.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

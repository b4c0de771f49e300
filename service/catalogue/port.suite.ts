/**
 * The behaviour suite of the catalogue port: every backend runs it unchanged (SQLite in
 * sqlite/catalogue.test.ts; Meilisearch wherever a server is reachable). It loads {@link FIXTURE_QUOTES}
 * once and checks each contract rule twice: against the reference semantics of port.ts
 * (`matches`, `compareQuotes`, `project`) over a matrix of filters and sorts, and against ids
 * written out by hand for the key cases, so that a mistake in the reference is caught too.
 *
 * Nothing here knows about a particular engine: backends differ only in their harness.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_QUOTES } from '../test-support/fixtures.ts';
import { compareQuotes, project } from '../test-support/reference.ts';
import { SKIP_TAG } from '../test-support/suites.ts';
import {
  type CatalogueIndex,
  type Filters,
  matches,
  normaliseFields,
  normaliseFilters,
  QUOTE_FIELDS,
  type Quote,
  type QuoteField,
  type QuoteProjection,
  type RawFilters,
  type SortKey,
} from './port.ts';

/** Builds catalogues for the suite and releases everything it opened. */
export interface CatalogueHarness {
  /**
   * Makes `quotes` the live catalogue (replacing any previous one) and returns an index serving
   * it. May be called more than once; the suite then uses the latest index.
   */
  load(quotes: Quote[]): Promise<CatalogueIndex>;
  /** Closes every index returned by `load` and removes what the harness created. */
  teardown(): Promise<void>;
}

/**
 * Registers the behaviour suite for one backend. With `options.skip` the suite is registered as
 * skipped and the reason is printed, so that a run without the engine is visibly incomplete.
 */
export function describeCatalogueBehaviour(
  backend: string,
  harness: () => Promise<CatalogueHarness> | CatalogueHarness,
  options: { skip?: string } = {},
): void {
  if (options.skip !== undefined) {
    console.warn(`${SKIP_TAG} catalogue behaviour on ${backend}: ${options.skip}`);
    describe.skip(`catalogue behaviour: ${backend} (skipped: ${options.skip})`, () => {
      it('needs the backend', () => {});
    });
    return;
  }
  describe(`catalogue behaviour: ${backend}`, () => {
    let current: CatalogueHarness | undefined;
    let index: CatalogueIndex;

    beforeAll(async () => {
      current = await harness();
      index = await current.load(FIXTURE_QUOTES);
    });
    afterAll(async () => {
      await current?.teardown();
    });

    const listIds = async (filters: Filters, sort: SortKey[] = [], page = 1, limit = 100) => {
      const result = await index.list({ filters, sort, page, limit, fields: ['id'] });
      return { ids: result.items.map((item) => item.id as number), total: result.total };
    };

    it('reports its kind, a version and the number of quotes', async () => {
      expect(index.kind).toMatch(/\S/);
      const info = await index.info();
      expect(info.count).toBe(FIXTURE_QUOTES.length);
      expect(info.version).toMatch(/\S/);
    });

    describe('filters', () => {
      // [description, raw filters, ids matching, sorted by id]
      const cases: [string, RawFilters, number[]][] = [
        ['author equals the folded name, whatever the case and accents', { author: ['EMILE zola'] }, [9, 66]],
        [
          'author folds runs of spaces in the stored name',
          { author: ['  oscar WILDE '] },
          [6, 17, 74, 90, 110],
        ],
        ['author folds a precomposed accent like a combining one', { author: ['Paul Éluard'] }, [33]],
        ['author keeps ø (no decomposition)', { author: ['søren kierkegaard'] }, [14, 101, 180]],
        ['author does not fold ø to o', { author: ['Soren Kierkegaard'] }, []],
        ['author matches lower-case names in any case', { author: ['BELL HOOKS'] }, [301]],
        ['author is an equality, not a prefix', { author: ['jane'] }, []],
        ['work matches one title held by two authors', { work: ['poems'] }, [12, 81]],
        ['work folds compatibility characters (… is ...)', { work: ['J’ACCUSE...!'] }, [9]],
        ['category folds case', { category: ['POETRY'] }, [12, 28, 33, 45, 57, 60, 81]],
        ['category drama', { category: ['drama'] }, [1, 2, 17, 44, 90, 144, 250]],
        ['genre matches any element', { genre: ['romance'] }, [3, 5, 7, 19, 42, 56, 64, 88, 130, 211]],
        [
          'genre matches a whole element, not a word in it',
          { genre: ['Gothic'] },
          [3, 6, 23, 56, 97, 110, 150, 211],
        ],
        ['genre with a space', { genre: ['southern gothic'] }, [31, 140]],
        ['genre folds accents', { genre: ['resistance'] }, [33]],
        ['genre matches a later element in any case', { genre: ['existentialism'] }, [2, 14, 99, 120]],
        ['author_id', { author_id: ['7'] }, [5, 7, 19, 42, 88, 130]],
        ['work_id', { work_id: ['201'] }, [3, 56, 211]],
        [
          'author_like matches the start of a word',
          { author_like: ['bron'] },
          [3, 12, 23, 56, 64, 97, 150, 211],
        ],
        ['author_like folds accents', { author_like: ['Brontë'] }, [3, 12, 23, 56, 64, 97, 150, 211]],
        ['author_like does not match inside a word', { author_like: ['usten'] }, []],
        ['author_like with two words', { author_like: ['jane aus'] }, [5, 7, 19, 42, 88, 130]],
        ['author_like splits on the apostrophe', { author_like: ['o conn'] }, [31, 77, 140]],
        ['author_like with an apostrophe in the value', { author_like: ["O'Connor"] }, [31, 77, 140]],
        ['author_like splits on the hyphen', { author_like: ['jean-paul'] }, [2, 99, 120]],
        ['author_like ignores word order', { author_like: ['paul jean'] }, [2, 99, 120]],
        ['author_like single word across authors', { author_like: ['jean'] }, [2, 99, 120, 250]],
        ['author_like matches a decomposed accent', { author_like: ['paul'] }, [2, 33, 99, 120]],
        ['author_like prefix shared by two names', { author_like: ['emil'] }, [9, 12, 23, 66, 97, 150]],
        ['author_like keeps ø', { author_like: ['sø'] }, [14, 101, 180]],
        ['author_like does not fold ø to o', { author_like: ['so'] }, []],
        [
          'author_like matches words continuing past z (ø)',
          { author_like: ['s'] },
          [1, 2, 14, 44, 45, 60, 81, 99, 101, 120, 144, 180, 200],
        ],
        ['author_like one-letter words', { author_like: ['e'] }, [9, 12, 23, 28, 33, 66, 97, 150]],
        ['work_like with two words', { work_like: ['pride prej'] }, [5, 7, 42, 130]],
        [
          'work_like matches a short word in many titles',
          { work_like: ['and'] },
          [5, 7, 42, 88, 120, 130, 180],
        ],
        ['work_like splits on the typographic apostrophe', { work_like: ['accuse'] }, [9]],
        ['work_like splits on the slash', { work_like: ['or'] }, [14]],
        ['work_like matches the first word too', { work_like: ['the'] }, [6, 17, 77, 90, 110, 200]],
        ['work_like matches a later word', { work_like: ['being'] }, [17, 77, 90, 120]],
        ['work_like folds accents', { work_like: ['VERITE'] }, [33]],
        ['work_like matches digits', { work_like: ['1942'] }, [33]],
        [
          'values of one filter are OR',
          { author_like: ['bron', 'aust'] },
          [3, 5, 7, 12, 19, 23, 42, 56, 64, 88, 97, 130, 150, 211],
        ],
        [
          'values of one filter are OR, multi-word values included',
          { author_like: ['bron', 'o conn'] },
          [3, 12, 23, 31, 56, 64, 77, 97, 140, 150, 211],
        ],
        ['author values are OR', { author: ['jane austen', 'Émile Zola'] }, [5, 7, 9, 19, 42, 66, 88, 130]],
        ['author_id values are OR', { author_id: ['12', '40'] }, [9, 12, 23, 66, 97, 150]],
        [
          'genre values are OR',
          { genre: ['tragedy', 'lyric'] },
          [1, 12, 23, 33, 44, 57, 60, 81, 97, 144, 150, 250],
        ],
        ['filters are AND', { author_like: ['bron'], category: ['fiction'] }, [3, 23, 56, 64, 97, 150, 211]],
        ['like and category are AND', { author_like: ['jean'], category: ['drama'] }, [2, 250]],
        ['genre and author_like are AND', { genre: ['lyric'], author_like: ['william'] }, [60, 81]],
        ['work_like and author_like are AND', { work_like: ['poems'], author_like: ['bronte'] }, [12]],
        [
          'three filters are AND',
          { author_id: ['1'], work_like: ['hamlet'], genre: ['tragedy'] },
          [1, 44, 144],
        ],
        ['AND of disjoint filters is empty', { author: ['jane austen'], genre: ['gothic'] }, []],
        [
          'a like alternative and an exact author',
          { author_like: ['emil'], author: ['emily bronte'] },
          [12, 23, 97, 150],
        ],
      ];
      for (const [name, raw, expected] of cases) {
        it(name, async () => {
          const filters = normaliseFilters(raw);
          // The hand-written ids and the reference semantics must agree before the backend is judged.
          expect(reference(filters, []).map((q) => q.id)).toEqual(expected);
          expect(await listIds(filters)).toEqual({ ids: expected, total: expected.length });
        });
      }

      it('empty filters match every quote', async () => {
        const all = FIXTURE_QUOTES.map((q) => q.id).sort((a, b) => a - b);
        expect(await listIds({})).toEqual({ ids: all, total: 42 });
        expect(await listIds({ author: [], genre: [] })).toEqual({ ids: all, total: 42 });
      });
    });

    describe('sorting', () => {
      const asc = (field: SortKey['field']): SortKey => ({ field, direction: 'asc' });
      const desc = (field: SortKey['field']): SortKey => ({ field, direction: 'desc' });

      it('sorts by folded author, then publish_date descending, then id', async () => {
        const { ids } = await listIds({}, [asc('author'), desc('publish_date')]);
        expect(ids).toEqual([
          301, 64, 3, 211, 56, 28, 9, 66, 23, 97, 150, 12, 77, 140, 31, 19, 5, 7, 42, 130, 88, 250, 2, 120,
          99, 74, 17, 90, 6, 110, 33, 45, 200, 180, 14, 101, 81, 60, 1, 44, 144, 57,
        ]);
      });

      it('orders folded text by code point: Émile among the e, lower case among the rest, ø after y', async () => {
        const result = await index.list({
          filters: {},
          sort: [asc('author')],
          page: 1,
          limit: 100,
          fields: ['author'],
        });
        const authors = [...new Set(result.items.map((item) => item.author))];
        expect(authors).toEqual([
          'bell hooks',
          'Charlotte Brontë',
          'e. e. cummings',
          'Émile Zola',
          'Emily Brontë',
          "Flannery O'Connor",
          'Jane Austen',
          'Jean Racine',
          'Jean-Paul Sartre',
          'Oscar  Wilde',
          'Paul E\u0301luard',
          'Sylvia Plath',
          'Søren Kierkegaard',
          'William Shakespeare',
          'Zoë Ng',
        ]);
      });

      it('sorts genre by the first genre of the list, not by the genre filtered on', async () => {
        const { ids } = await listIds(normaliseFilters({ genre: ['romance'] }), [asc('genre')]);
        // comedy (Emma), gothic (Jane Eyre), psychological (Villette), romance/Romance (the rest).
        expect(ids).toEqual([19, 3, 56, 211, 64, 5, 7, 42, 88, 130]);
      });

      it('sorts publish_date as a string: a bare year before the months and days of that year', async () => {
        const kierkegaard = await listIds(normaliseFilters({ author_id: ['52'] }), [asc('publish_date')]);
        expect(kierkegaard.ids).toEqual([101, 14, 180]);
        const eyre = await listIds(normaliseFilters({ work: ['jane eyre'] }), [asc('publish_date')]);
        expect(eyre.ids).toEqual([56, 211, 3]);
      });

      it('breaks ties by id ascending, also when the key is descending', async () => {
        const { ids } = await listIds({}, [desc('category')]);
        expect(ids.slice(0, 7)).toEqual([12, 28, 33, 45, 57, 60, 81]);
        expect(ids.slice(-7)).toEqual([1, 2, 17, 44, 90, 144, 250]);
      });

      it('sorts by id descending', async () => {
        const { ids } = await listIds({}, [desc('id')]);
        expect(ids).toEqual(FIXTURE_QUOTES.map((q) => q.id).sort((a, b) => b - a));
      });

      it('ignores keys after id (id is unique)', async () => {
        const { ids } = await listIds({}, [desc('id'), asc('author')]);
        expect(ids).toEqual(FIXTURE_QUOTES.map((q) => q.id).sort((a, b) => b - a));
      });

      const sorts: SortKey[][] = [
        [],
        [asc('author')],
        [desc('author')],
        [asc('work')],
        [desc('work')],
        [asc('category')],
        [desc('category')],
        [asc('genre')],
        [desc('genre')],
        [asc('publish_date')],
        [desc('publish_date')],
        [asc('quote_length')],
        [desc('quote_length')],
        [asc('author_id')],
        [desc('author_id')],
        [asc('work_id')],
        [desc('work_id')],
        [asc('id')],
        [desc('id')],
        [asc('category'), desc('publish_date')],
        [desc('genre'), asc('quote_length')],
        [desc('category'), desc('work'), asc('quote_length')],
        [asc('author_id'), desc('work'), desc('id')],
        [asc('category'), desc('genre'), asc('publish_date')],
        [desc('genre'), desc('category'), desc('id')],
      ];
      const filterSets: RawFilters[] = [
        {},
        { genre: ['romance'] },
        { author_like: ['bron'] },
        { category: ['fiction', 'drama'] },
        { genre: ['tragedy', 'lyric'], work_like: ['h'] },
      ];
      for (const raw of filterSets) {
        for (const sort of sorts) {
          const label = sort.map((k) => `${k.field} ${k.direction}`).join(', ') || 'default';
          it(`matches the reference order: ${JSON.stringify(raw)} by ${label}`, async () => {
            const filters = normaliseFilters(raw);
            const expected = reference(filters, sort).map((q) => q.id);
            expect(await listIds(filters, sort)).toEqual({ ids: expected, total: expected.length });
          });
        }
      }
    });

    describe('pages', () => {
      it('splits the default order into pages with an exact total and a partial last page', async () => {
        const all = reference({}, []).map((q) => q.id);
        const seen: number[] = [];
        for (let page = 1; page <= 9; page++) {
          const { ids, total } = await listIds({}, [], page, 5);
          expect(total).toBe(42);
          expect(ids).toHaveLength(page < 9 ? 5 : 2);
          seen.push(...ids);
        }
        expect(seen).toEqual(all);
      });

      it('never overlaps or skips across pages of a sort with large ties', async () => {
        const sort: SortKey[] = [{ field: 'category', direction: 'asc' }];
        const seen: number[] = [];
        for (let page = 1; page <= 11; page++) {
          const { ids, total } = await listIds({}, sort, page, 4);
          expect(total).toBe(42);
          seen.push(...ids);
        }
        expect(seen).toEqual(reference({}, sort).map((q) => q.id));
      });

      it('pages a filtered, sorted result', async () => {
        const filters = normaliseFilters({ genre: ['romance'] });
        const sort: SortKey[] = [{ field: 'genre', direction: 'desc' }];
        const pages = [];
        for (let page = 1; page <= 4; page++) pages.push(await listIds(filters, sort, page, 3));
        expect(pages.map((p) => p.total)).toEqual([10, 10, 10, 10]);
        expect(pages.map((p) => p.ids.length)).toEqual([3, 3, 3, 1]);
        expect(pages.flatMap((p) => p.ids)).toEqual(reference(filters, sort).map((q) => q.id));
      });

      const pagedCases: [RawFilters, SortKey[]][] = [
        [{}, [{ field: 'id', direction: 'desc' }]],
        [
          {},
          [
            { field: 'author', direction: 'asc' },
            { field: 'publish_date', direction: 'desc' },
          ],
        ],
        [
          { category: ['fiction', 'poetry'] },
          [
            { field: 'category', direction: 'desc' },
            { field: 'work', direction: 'asc' },
          ],
        ],
        [{ author_like: ['e'] }, [{ field: 'quote_length', direction: 'desc' }]],
        [{ genre: ['gothic', 'lyric'] }, [{ field: 'publish_date', direction: 'asc' }]],
      ];
      for (const [raw, sort] of pagedCases) {
        it(`pages ${JSON.stringify(raw)} by ${sort.map((k) => `${k.field} ${k.direction}`).join(', ')}`, async () => {
          const filters = normaliseFilters(raw);
          const expected = reference(filters, sort).map((q) => q.id);
          const seen: number[] = [];
          for (let page = 1; page <= Math.ceil(expected.length / 3) + 1; page++) {
            const { ids, total } = await listIds(filters, sort, page, 3);
            expect(total).toBe(expected.length);
            seen.push(...ids);
          }
          expect(seen).toEqual(expected);
        });
      }

      it('returns no items but the exact total for a page past the last', async () => {
        expect(await listIds({}, [], 10, 5)).toEqual({ ids: [], total: 42 });
        expect(await listIds({}, [], 1000, 100)).toEqual({ ids: [], total: 42 });
        expect(await listIds(normaliseFilters({ author_like: ['bron'] }), [], 3, 4)).toEqual({
          ids: [],
          total: 8,
        });
      });

      it('returns the last quote alone with limit 1 on the last page', async () => {
        expect(await listIds({}, [], 42, 1)).toEqual({ ids: [301], total: 42 });
      });

      it('reports total 0 when nothing matches', async () => {
        expect(await listIds(normaliseFilters({ author_like: ['zzz'] }))).toEqual({ ids: [], total: 0 });
      });
    });

    describe('fields', () => {
      const byId = new Map(FIXTURE_QUOTES.map((q) => [q.id, q]));

      it('returns every field of the full quote when fields is null', async () => {
        const result = await index.list({ filters: {}, sort: [], page: 1, limit: 100, fields: null });
        expect(result.items).toEqual(reference({}, []));
        for (const item of result.items) expect(Object.keys(item)).toEqual([...QUOTE_FIELDS]);
      });

      it('returns exactly the requested fields, in contract order', async () => {
        const fields = normaliseFields(['quote', 'id', 'author', 'quote']);
        const result = await index.list({ filters: {}, sort: [], page: 1, limit: 100, fields });
        expect(result.items).toHaveLength(42);
        for (const item of result.items) {
          expect(Object.keys(item)).toEqual(['id', 'author', 'quote']);
          expect(item).toEqual(project(byId.get(item.id as number) as Quote, fields));
        }
      });

      it('returns genre as an array even when alone', async () => {
        const result = await index.list({
          filters: normaliseFilters({ work: ['jane eyre'] }),
          sort: [],
          page: 1,
          limit: 5,
          fields: ['genre'],
        });
        expect(result.items).toEqual([
          { genre: ['gothic', 'romance', 'bildungsroman'] },
          { genre: ['gothic', 'romance', 'bildungsroman'] },
          { genre: ['gothic', 'romance', 'bildungsroman'] },
        ]);
      });

      it('keeps quote_length in code points, not UTF-16 units', async () => {
        const quote = await index.get(57, normaliseFields(['quote_length', 'quote']));
        expect(quote).toEqual({ quote_length: 38, quote: 'I keep the moon 🌙 in a jar of 𝄞 songs.' });
        expect(String(quote?.quote).length).toBe(40);
      });
    });

    describe('get', () => {
      it('returns every quote by its id, unchanged', async () => {
        for (const quote of FIXTURE_QUOTES) expect(await index.get(quote.id, null)).toEqual(quote);
      });

      it('projects the quote to the requested fields', async () => {
        const quote = await index.get(42, normaliseFields(['work', 'author_id', 'id']));
        expect(quote).toEqual({ id: 42, author_id: 7, work: 'Pride and Prejudice' });
        expect(Object.keys(quote ?? {})).toEqual(['id', 'author_id', 'work']);
      });

      it('returns null for an unknown id', async () => {
        expect(await index.get(4, null)).toBeNull();
        expect(await index.get(1_000_000, ['id'])).toBeNull();
      });
    });

    describe('firstMatch', () => {
      it('returns the first of the ids, in their order, whose quote matches, projected', async () => {
        const filters = normaliseFilters({ author_like: ['bron'], category: ['fiction'] });
        // 3, 23, 56, 64, 97, 150 and 211 match; 4 is no quote's id, 1 and 2 do not match.
        expect(await index.firstMatch(filters, [4, 1, 97, 2, 3], ['id', 'author'])).toEqual({
          id: 97,
          author: (FIXTURE_QUOTES.find((q) => q.id === 97) as Quote).author,
        });
        expect(await index.firstMatch(filters, [211, 3], null)).toEqual(
          FIXTURE_QUOTES.find((q) => q.id === 211),
        );
        expect(await index.firstMatch({}, [1_000_000, 2], ['id'])).toEqual({ id: 2 });
      });

      it('returns null when none of the ids matches, or there are none', async () => {
        const filters = normaliseFilters({ genre: ['resistance'] });
        expect(await index.firstMatch(filters, [1, 2, 4, 34], ['id'])).toBeNull();
        expect(await index.firstMatch(filters, [1, 33], ['id'])).toEqual({ id: 33 });
        expect(await index.firstMatch({}, [], ['id'])).toBeNull();
      });
    });

    describe('random', () => {
      it('returns a full quote of the catalogue', async () => {
        const quote = (await index.random({}, null)) as Quote;
        expect(quote).toEqual(FIXTURE_QUOTES.find((q) => q.id === quote.id));
      });

      it('returns only quotes matching the filters, projected', async () => {
        const filters = normaliseFilters({ author_like: ['bron'], category: ['fiction'] });
        const allowed = new Set([3, 23, 56, 64, 97, 150, 211]);
        for (let i = 0; i < 50; i++) {
          const quote = await index.random(filters, ['id', 'author']);
          expect(Object.keys(quote ?? {})).toEqual(['id', 'author']);
          expect(allowed.has(quote?.id as number)).toBe(true);
        }
      });

      it('returns the single match of a one-quote filter', async () => {
        expect(await index.random(normaliseFilters({ genre: ['resistance'] }), ['id'])).toEqual({ id: 33 });
      });

      it('returns null when nothing matches', async () => {
        expect(await index.random(normaliseFilters({ author: ['nobody'] }), null)).toBeNull();
        expect(
          await index.random(normaliseFilters({ author: ['jane austen'], genre: ['gothic'] }), null),
        ).toBeNull();
      });

      it('draws uniformly among the matches of a filter', async () => {
        const filters = normaliseFilters({ genre: ['gothic'] });
        const draws = await drawIds(index, filters, 2400);
        expect([...draws.keys()].sort((a, b) => a - b)).toEqual([3, 6, 23, 56, 97, 110, 150, 211]);
        // 7 degrees of freedom: P(chi² > 40) ≈ 1e-6 for a uniform draw.
        expect(chiSquare(draws, 8, 2400)).toBeLessThan(40);
      });

      it('draws uniformly among all quotes without filters', async () => {
        const draws = await drawIds(index, {}, 42 * 60);
        expect(draws.size).toBe(42);
        // 41 degrees of freedom: P(chi² > 100) ≈ 1e-6 for a uniform draw.
        expect(chiSquare(draws, 42, 42 * 60)).toBeLessThan(100);
      });
    });

    describe('language', () => {
      it('every quote carries its language, and a filter on it selects exactly the model matches', async () => {
        const quote = (await index.get(9, null)) as Quote;
        expect(quote.language).toBe('fr');
        for (const values of [['fr'], ['EN'], ['fr', 'en'], ['de'], ['Fr', 'fr']]) {
          const filters = normaliseFilters({ language: values });
          const expected = FIXTURE_QUOTES.filter((q) => matches(q, filters)).map((q) => q.id);
          expect(await listIds(filters), `language=${values.join('&language=')}`).toEqual({
            ids: expected.sort((a, b) => a - b),
            total: expected.length,
          });
        }
        expect((await listIds(normaliseFilters({ language: ['fr'] }))).ids).toEqual([9, 33, 250]);
      });

      it('combines with the other filters (AND)', async () => {
        const filters = normaliseFilters({ language: ['fr'], author: ['émile zola'] });
        expect(await listIds(filters)).toEqual({ ids: [9], total: 1 });
      });

      it('is a facet with exact counts', async () => {
        const result = await index.facets({ filters: {}, facets: ['language'], limit: 10 });
        const french = FIXTURE_QUOTES.filter((q) => q.language === 'fr').length;
        expect(result).toEqual({
          total: FIXTURE_QUOTES.length,
          facets: {
            language: [
              { value: 'en', count: FIXTURE_QUOTES.length - french },
              { value: 'fr', count: french },
            ],
          },
        });
      });
    });

    describe('random with exclude', () => {
      it('never draws an excluded id, and draws uniformly among the rest', async () => {
        const filters = { ...normaliseFilters({ genre: ['gothic'] }), exclude: [3, 110, 999] };
        const draws = await drawIds(index, filters, 1800);
        expect([...draws.keys()].sort((a, b) => a - b)).toEqual([6, 23, 56, 97, 150, 211]);
        // 5 degrees of freedom: P(chi² > 35) ≈ 1e-6 for a uniform draw.
        expect(chiSquare(draws, 6, 1800)).toBeLessThan(35);
      });

      it('returns null when every match is excluded', async () => {
        const filters = { ...normaliseFilters({ author: ['émile zola'] }), exclude: [9, 66] };
        expect(await index.random(filters, null)).toBeNull();
        expect(await index.randomSample(filters, null, 5)).toEqual([]);
      });

      it('draws several distinct quotes, none excluded, all the rest when fewer remain', async () => {
        const filters = { ...normaliseFilters({ genre: ['gothic'] }), exclude: [3, 6, 23] };
        for (let i = 0; i < 20; i++) {
          const ids = (await index.randomSample(filters, ['id'], 10)).map((q) => q.id as number);
          expect(ids.sort((a, b) => a - b)).toEqual([56, 97, 110, 150, 211]);
        }
        const two = (await index.randomSample(filters, ['id'], 2)).map((q) => q.id as number);
        expect(new Set(two).size).toBe(2);
        for (const id of two) expect([56, 97, 110, 150, 211]).toContain(id);
      });

      it('excludes among all quotes without filters', async () => {
        const all = FIXTURE_QUOTES.map((q) => q.id);
        const exclude = all.filter((id) => id !== 57);
        for (let i = 0; i < 5; i++) expect(await index.random({ exclude }, ['id'])).toEqual({ id: 57 });
      });
    });

    // Last: it replaces the catalogue the tests above read.
    describe('replacement', () => {
      it('serves a rebuilt catalogue under a new version', async () => {
        const before = await index.info();
        const smaller = FIXTURE_QUOTES.filter((q) => q.author_id !== 7);
        index = await (current as CatalogueHarness).load(smaller);
        const after = await index.info();
        expect(after.version).not.toBe(before.version);
        expect(after.count).toBe(36);
        expect(await listIds(normaliseFilters({ author_like: ['austen'] }))).toEqual({ ids: [], total: 0 });
        expect((await listIds({})).total).toBe(36);
      });

      it('filters exactly on values longer than a facet value can be (468 bytes): no two collide', async () => {
        // 199 shared CJK characters (597 bytes) then one that differs: equal on their first 468
        // bytes, which is all of a value the engine's facets keep.
        const shared = '紫'.repeat(199);
        const base = FIXTURE_QUOTES[0] as Quote;
        const long: Quote[] = [
          {
            ...base,
            id: 10,
            author_id: 10,
            author: `${shared}一`,
            work_id: 10,
            work: `${shared}一`,
            category: `${shared}一`,
            genre: [`${shared}一`],
          },
          {
            ...base,
            id: 11,
            author_id: 11,
            author: `${shared}二`,
            work_id: 11,
            work: `${shared}二`,
            category: `${shared}二`,
            genre: [`${shared}二`],
          },
          {
            ...base,
            id: 12,
            author_id: 12,
            author: `${'一'.repeat(150)} ${shared}`,
            work_id: 12,
            work: 'Short',
          },
        ];
        index = await (current as CatalogueHarness).load(long);
        for (const name of ['author', 'work', 'category', 'genre'] as const) {
          expect(await listIds(normaliseFilters({ [name]: [`${shared}一`] })), name).toEqual({
            ids: [10],
            total: 1,
          });
          expect(await listIds(normaliseFilters({ [name]: [`${shared}二`] })), name).toEqual({
            ids: [11],
            total: 1,
          });
          expect(await listIds(normaliseFilters({ [name]: [shared] })), name).toEqual({ ids: [], total: 0 });
        }
        // A word longer than a facet value, matched by its prefixes.
        expect(await listIds(normaliseFilters({ author_like: [`${shared}一`] }))).toEqual({
          ids: [10],
          total: 1,
        });
        expect(await listIds(normaliseFilters({ author_like: [shared] }))).toEqual({
          ids: [10, 11, 12],
          total: 3,
        });
        expect(await listIds(normaliseFilters({ author_like: [`${'一'.repeat(150)} 紫`] }))).toEqual({
          ids: [12],
          total: 1,
        });
      });

      it('serves labels far longer than any query value: whole, found by their words, sorted', async () => {
        // Titles of early novels run to hundreds of characters; the indexer takes up to 1,000.
        const words = Array.from({ length: 130 }, (_, i) => `Wörd${i}`);
        const title = (first: string) => `${first} ${words.join(' ')}`;
        const base = FIXTURE_QUOTES[0] as Quote;
        const long: Quote[] = [
          { ...base, id: 1, work_id: 1, work: title('Life'), genre: ['ǅ'.repeat(1000)] },
          // 'ǅ' folds to two letters: the folded genre is 2,000 long.
          { ...base, id: 2, work_id: 2, work: title('Adventures') },
          { ...base, id: 3, work_id: 3, work: 'Short' },
        ];
        index = await (current as CatalogueHarness).load(long);
        expect(await index.get(1, null)).toEqual(long[0]);
        expect(await listIds(normaliseFilters({ work_like: ['wo word129'] }))).toEqual({
          ids: [1, 2],
          total: 2,
        });
        expect(await listIds(normaliseFilters({ work_like: ['life word12'] }))).toEqual({
          ids: [1],
          total: 1,
        });
        for (const sort of [
          [{ field: 'work', direction: 'asc' }],
          [
            { field: 'genre', direction: 'desc' },
            { field: 'id', direction: 'desc' },
          ],
        ] satisfies SortKey[][]) {
          const expected = [...long].sort((a, b) => compareQuotes(a, b, sort)).map((q) => q.id);
          expect((await listIds({}, sort)).ids, JSON.stringify(sort)).toEqual(expected);
        }
      });
    });
  });
}

/** The contract's answer, computed in memory by port.ts. */
function reference(filters: Filters, sort: readonly SortKey[]): Quote[] {
  return FIXTURE_QUOTES.filter((q) => matches(q, filters)).sort((a, b) => compareQuotes(a, b, sort));
}

async function drawIds(index: CatalogueIndex, filters: Filters, n: number): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  const fields: QuoteField[] = ['id'];
  for (let i = 0; i < n; i++) {
    const quote: QuoteProjection | null = await index.random(filters, fields);
    const id = quote?.id as number;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Pearson's statistic of observed counts against `categories` equally likely outcomes. */
function chiSquare(counts: Map<number, number>, categories: number, n: number): number {
  const expected = n / categories;
  let sum = 0;
  for (const observed of counts.values()) sum += (observed - expected) ** 2 / expected;
  // Outcomes never drawn count too.
  sum += (categories - counts.size) * expected;
  return sum;
}

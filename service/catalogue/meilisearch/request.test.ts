/**
 * Unit tests of the requests the Meilisearch adapter sends, runnable without an engine:
 *
 * - the exact settings object and the exact search request of each contract case, type-checked
 *   against the client's types (`satisfies SearchParams`) and validated against the engine's
 *   OpenAPI description (`Settings_Unchecked`, `SearchQuery`, `SwapIndexesPayload`);
 * - the filters and sorts evaluated by a small model of the engine's documented semantics (its
 *   filter grammar and quoting, facet normalisation, 468-byte truncation, byte-order sorting)
 *   over the stored documents, compared with the contract's reference (`matches`,
 *   `compareQuotes`). The model is no stand-in for the behaviour suite against a real engine
 *   (meilisearch/catalogue.test.ts); it pins down the reasoning the adapter relies on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IndexSwap, Settings } from 'meilisearch';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { FIXTURE_QUOTES } from '../../test-support/fixtures.ts';
import { compareQuotes } from '../../test-support/reference.ts';
import { SKIP_TAG } from '../../test-support/suites.ts';
import {
  fold,
  type ListQuery,
  matches,
  normaliseFilters,
  QUOTE_FIELDS,
  type Quote,
  type RawFilters,
  type SortKey,
} from '../port.ts';
import { engineToken, searchKey } from '../search.ts';
import {
  buildFilter,
  buildIndexUid,
  buildSort,
  countRequest,
  createDocumentEncoder,
  type FetchRequest,
  facetKey,
  filterExpression,
  getRequest,
  inEngineOrder,
  infoRequest,
  MAX_KEY_BYTES,
  MAX_SEARCH_TIMEOUT_MS,
  MAX_SORT_CHUNKS,
  MAX_TOTAL_HITS,
  MEILI_SETTINGS,
  type MeiliQuoteDocument,
  type PagePlan,
  pageRequest,
  pickRequest,
  prefixKeys,
  projectHit,
  publishOrder,
  quoteFilterValue,
  readSortChunks,
  reverseSort,
  SHALLOW_OFFSET,
  SORT_CHUNK_BYTES,
  sortChunks,
} from './request.ts';
import { groupFilters, matchFilter } from './search.ts';

const ALL_FIELDS = [...QUOTE_FIELDS];
const asc = (field: SortKey['field']): SortKey => ({ field, direction: 'asc' });
const desc = (field: SortKey['field']): SortKey => ({ field, direction: 'desc' });
/** A catalogue whose every text sort takes the most chunks. */
const ALL_CHUNKS = { author: 12, work: 12, category: 12, genre: 12 };
/** A plan that reads something (the test fails otherwise). */
const read = (p: PagePlan) => {
  if ('pastEnd' in p) throw new Error('past the end');
  return p;
};
const query = (overrides: Partial<ListQuery> = {}): ListQuery => ({
  filters: {},
  sort: [],
  page: 1,
  limit: 5,
  fields: null,
  ...overrides,
});

describe('index settings', () => {
  it('are exactly the settings the adapter relies on', () => {
    const expected: Settings = {
      displayedAttributes: [...ALL_FIELDS, 'catalogue_version'],
      searchableAttributes: ['q_text', 'q_meta', 'author', 'work'],
      filterableAttributes: [
        'id',
        'author_id',
        'work_id',
        'author_key',
        'work_key',
        'category_key',
        'genre_keys',
        'author_prefixes',
        'work_prefixes',
        'publish_order',
        'q_words',
        'q_text_words',
        'quote_length',
        'publish_day',
        'language',
      ],
      sortableAttributes: [
        'id',
        'author_id',
        'work_id',
        'quote_length',
        'publish_date',
        ...['author_sort', 'work_sort', 'category_sort', 'genre_sort'].flatMap((base) => [
          base,
          ...[2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((i) => `${base}_${i}`),
        ]),
      ],
      rankingRules: ['sort', 'words', 'proximity', 'attributeRank', 'exactness'],
      typoTolerance: { enabled: false },
      pagination: { maxTotalHits: 100_000_000 },
      faceting: { maxValuesPerFacet: 100_000_000 },
      searchCutoffMs: 2_000,
      facetSearch: false,
      prefixSearch: 'indexingTime',
      proximityPrecision: 'byWord',
      localizedAttributes: [{ attributePatterns: ['q_text', 'q_meta'], locales: ['eng'] }],
    };
    expect(MEILI_SETTINGS).toEqual(expected);
  });

  it('cut a search off when the service gives up on it (by default; the builder writes MEILI_TIMEOUT_MS)', () => {
    expect(MEILI_SETTINGS.searchCutoffMs).toBe(loadConfig({}).meili.timeoutMs);
    expect(loadConfig({ MEILI_TIMEOUT_MS: String(MAX_SEARCH_TIMEOUT_MS) }).meili.timeoutMs).toBe(
      MAX_SEARCH_TIMEOUT_MS,
    );
    expect(() => loadConfig({ MEILI_TIMEOUT_MS: String(MAX_SEARCH_TIMEOUT_MS + 1) })).toThrow(
      /MEILI_TIMEOUT_MS/,
    );
  });

  it('put the sort rule first, so a requested order always wins', () => {
    expect(MEILI_SETTINGS.rankingRules[0]).toBe('sort');
  });

  it('let every catalogue the builder accepts count and page exactly', () => {
    expect(MEILI_SETTINGS.pagination.maxTotalHits).toBe(MAX_TOTAL_HITS);
  });

  it('make every attribute a filter or sort uses filterable or sortable', () => {
    const documents = FIXTURE_QUOTES.map(createDocumentEncoder('v1'));
    const filters = [
      ...buildFilter(
        normaliseFilters({ author: ['a'], author_id: ['1'], author_like: ['a b'], work: ['w'] }),
      ),
      ...buildFilter(normaliseFilters({ work_id: ['2'], work_like: ['w'], category: ['c'], genre: ['g'] })),
      ...buildFilter({ ranges: { min_length: 1, max_length: 2, published_from: 3, published_to: 4 } }),
      ...buildFilter(normaliseFilters({ language: ['fr', 'de'] })),
      ...buildFilter({ exclude: [1, 2] }),
    ];
    filters.push(
      matchFilter({ filters: { q: ['a', 'b'] } }),
      groupFilters({ filters: { q: ['a', 'b'] } }).rest,
    );
    const filtered = new Set(
      filters.flatMap((f) => [...f.matchAll(/([a-z_]+) (?:=|IN|STARTS WITH|>=|<=)/g)].map((m) => m[1])),
    );
    // Plus the integers whose ranges place deep pages (meilisearch/runs.ts).
    expect([...new Set(['id', 'publish_order', ...filtered])].sort()).toEqual(
      [...MEILI_SETTINGS.filterableAttributes].sort(),
    );
    const sorted = new Set(
      [
        'id',
        'author',
        'author_id',
        'work',
        'work_id',
        'category',
        'genre',
        'publish_date',
        'quote_length',
      ].flatMap((field) =>
        buildSort([asc(field as SortKey['field'])], ALL_CHUNKS).map((s) => s.split(':')[0]),
      ),
    );
    expect([...sorted].sort()).toEqual([...MEILI_SETTINGS.sortableAttributes].sort());
    // Every attribute they name exists on every document, but the chunks of long values.
    for (const doc of documents) {
      for (const attribute of [...filtered, ...sorted]) {
        if (!/_sort_\d+$/.test(attribute as string)) expect(doc).toHaveProperty(attribute as string);
      }
    }
  });

  it('never display the internal keys', () => {
    const displayed = new Set<string>(MEILI_SETTINGS.displayedAttributes);
    const doc = createDocumentEncoder('v1')(FIXTURE_QUOTES[0] as Quote);
    const internal = Object.keys(doc).filter((k) => !(QUOTE_FIELDS as readonly string[]).includes(k));
    expect(internal.filter((k) => displayed.has(k))).toEqual(['catalogue_version']);
  });
});

describe('facet keys', () => {
  it('keep letters, digits, spaces and plain punctuation as they are', () => {
    expect(facetKey(fold("Flannery O'Connor"))).toBe("flannery o'connor");
    expect(facetKey(fold('Søren Kierkegaard'))).toBe('søren kierkegaard');
    expect(facetKey(fold('e. e. cummings'))).toBe('e. e. cummings');
    expect(facetKey(fold('Tulips & Chimneys'))).toBe('tulips & chimneys');
    expect(facetKey(fold('Either/Or'))).toBe('either/or');
  });

  it('escape quotes, backslashes, their own escape characters and anything else as _hex_', () => {
    expect(facetKey('say "no" \\ yes\\')).toBe('say _22_no_22_ _5c_ yes_5c_');
    expect(facetKey('a_b~c')).toBe('a_5f_b_7e_c');
    expect(facetKey(fold('J’accuse…!'))).toBe('j_2019_accuse...!');
    expect(facetKey('tab\there')).toBe('tab_9_here');
    expect(facetKey('nel\u0085')).toBe('nel_85_');
    expect(facetKey('🌙')).toBe('_1f319_');
  });

  it('are injective on the strings an escape could be confused with', () => {
    const strings = ['a"b', 'a_22_b', 'a_b', 'a_5f_b', 'a\\', 'a\\\\', 'a~', '~a', 'a', 'nel\u0085', 'nel'];
    const keys = strings.map(facetKey);
    expect(new Set(keys).size).toBe(strings.length);
  });

  it('never hold a character the filter parser treats specially', () => {
    for (const text of ['"', '\\', '\\"', '"\\', 'end\\', ...FIXTURE_QUOTES.map((q) => fold(q.work))]) {
      expect(facetKey(text)).not.toMatch(/["\\]/);
    }
  });

  it('become a digest beyond MAX_KEY_BYTES, so long values stay distinct under the facet limit', () => {
    const atLimit = 'é'.repeat(MAX_KEY_BYTES / 2);
    expect(facetKey(atLimit)).toBe(atLimit);
    const long = '漢'.repeat(200);
    const key = facetKey(long);
    expect(key).toMatch(/^~[0-9a-f]{64}$/);
    expect(facetKey(`${long}a`)).not.toBe(facetKey(`${long}b`));
    expect(facetKey(`${'é'.repeat(MAX_KEY_BYTES / 2)}x`)).toMatch(/^~[0-9a-f]{64}$/);
  });

  it('list every code-point prefix of every word for _like', () => {
    expect(prefixKeys("Flannery O'Connor").sort()).toEqual(
      ['f', 'fl', 'fla', 'flan', 'flann', 'flanne', 'flanner', 'flannery', 'o', 'c', 'co', 'con', 'conn']
        .concat(['conno', 'connor'])
        .sort(),
    );
    expect(prefixKeys('Zoë Ng')).toEqual(['z', 'zo', 'zoe', 'n', 'ng']);
    // Astral letters are whole code points; symbols (🌙, 𝄞) are not word characters at all.
    expect(prefixKeys('𠀀𠀁 songs 𝄞')).toEqual(['𠀀', '𠀀𠀁', 's', 'so', 'son', 'song', 'songs']);
  });
});

describe('documents', () => {
  const encode = createDocumentEncoder('lx2-ab12');

  it('hold the quote unchanged plus the folded keys, prefixes and sort values', () => {
    const quote = FIXTURE_QUOTES.find((q) => q.id === 33) as Quote;
    expect(encode(quote)).toEqual({
      ...quote,
      catalogue_version: 'lx2-ab12',
      author_key: 'paul eluard',
      author_sort: 'paul eluard',
      author_prefixes: ['p', 'pa', 'pau', 'paul', 'e', 'el', 'elu', 'elua', 'eluar', 'eluard'],
      work_key: 'poesie et verite 1942',
      work_sort: 'poesie et verite 1942',
      work_prefixes: [
        'p',
        'po',
        'poe',
        'poes',
        'poesi',
        'poesie',
        'e',
        'et',
        'v',
        've',
        'ver',
        'veri',
        'verit',
        'verite',
        '1',
        '19',
        '194',
        '1942',
      ],
      category_key: 'poetry',
      category_sort: 'poetry',
      genre_keys: ['resistance', 'lyric'],
      genre_sort: 'resistance',
      publish_order: publishOrder(quote.publish_date),
      // The contract's words in order, as tokens of letters (search.ts); the keys de-duplicated.
      q_text: 'sur mes cahiers d ecolier sur mon pupitre et les arbres j ecris ton nom'
        .split(' ')
        .map(engineToken)
        .join(' '),
      q_meta: 'paul eluard poesie et verite 1942'.split(' ').map(engineToken).join(' '),
      q_words: [
        ...'sur mes cahiers d ecolier mon pupitre et les arbres j ecris ton nom'.split(' '),
        ...'paul eluard poesie verite 1942'.split(' '),
      ],
      q_text_words: 'sur mes cahiers d ecolier mon pupitre et les arbres j ecris ton nom'.split(' '),
      // 1942-01-01, counted from 0000-01-01 (1970-01-01 is day 719,528).
      publish_day: 709_301,
    });
  });

  it('carry publish dates as integers in the order of the strings, ties included', () => {
    const dates = [
      '1851',
      '1851-01',
      '1851-01-01',
      '1851-01-02',
      '1851-02',
      '1851-12-31',
      '1852',
      '0999',
      '2024-10',
    ];
    const byString = [...dates].sort();
    const byOrder = [...dates].sort((a, b) => publishOrder(a) - publishOrder(b));
    expect(byOrder).toEqual(byString);
    expect(new Set(dates.map(publishOrder)).size).toBe(dates.length);
    expect(publishOrder('1851-01-01')).toBe(18_510_101);
  });

  it('fold spacing, case and genre duplicates, and sort genre by the first one', () => {
    const wilde = encode(FIXTURE_QUOTES.find((q) => q.id === 17) as Quote);
    expect([wilde.author_key, wilde.author_sort]).toEqual(['oscar wilde', 'oscar wilde']);
    const gothic = encode({ ...(FIXTURE_QUOTES[0] as Quote), genre: ['Gothic', 'gothic', 'Romance'] });
    expect([gothic.genre_keys, gothic.genre_sort]).toEqual([['gothic', 'romance'], 'gothic']);
  });

  it('keep the sort value readable where the key must escape', () => {
    const doc = encode({ ...(FIXTURE_QUOTES[0] as Quote), work: 'J’accuse…!' });
    expect([doc.work_key, doc.work_sort]).toEqual(['j_2019_accuse...!', 'j’accuse...!']);
  });

  it('serialise with the Quote fields first, in contract order', () => {
    const doc = encode(FIXTURE_QUOTES[0] as Quote);
    expect(Object.keys(doc).slice(0, QUOTE_FIELDS.length)).toEqual(ALL_FIELDS);
  });
});

describe('filters', () => {
  const filter = (raw: RawFilters) => buildFilter(normaliseFilters(raw));

  it('are empty without constraints', () => {
    expect(filter({})).toEqual([]);
    expect(buildFilter({ author: [], genre: [], author_like: [] })).toEqual([]);
  });

  it('compare one folded value with =, several with IN', () => {
    expect(filter({ author: ['  Émile   ZOLA '] })).toEqual(['author_key = "emile zola"']);
    expect(filter({ author: ['Jane Austen', 'Émile Zola', 'JANE AUSTEN'] })).toEqual([
      'author_key IN ["jane austen", "emile zola"]',
    ]);
    expect(filter({ genre: ['Southern Gothic'] })).toEqual(['genre_keys = "southern gothic"']);
    expect(filter({ category: ['POETRY', 'drama'] })).toEqual(['category_key IN ["poetry", "drama"]']);
    expect(filter({ work: ['J’ACCUSE...!'] })).toEqual(['work_key = "j_2019_accuse...!"']);
  });

  it('carry quotes and backslashes of values only as escapes', () => {
    expect(filter({ author: ['Say "No" \\'] })).toEqual(['author_key = "say _22_no_22_ _5c_"']);
    expect(filter({ work: ['\\"', 'ends with \\'] })).toEqual(['work_key IN ["_5c__22_", "ends with _5c_"]']);
  });

  it('compare ids as numbers', () => {
    expect(filter({ author_id: ['7'] })).toEqual(['author_id = 7']);
    expect(filter({ work_id: ['201', '101', '201'] })).toEqual(['work_id IN [201, 101]']);
  });

  it('require every word of a _like value as a word prefix, any value matching', () => {
    expect(filter({ author_like: ['aust'] })).toEqual(['author_prefixes = "aust"']);
    expect(filter({ author_like: ['Jane  AUS'] })).toEqual([
      'author_prefixes = "jane" AND author_prefixes = "aus"',
    ]);
    expect(filter({ author_like: ['jane aus', 'Brontë'] })).toEqual([
      '(author_prefixes = "jane" AND author_prefixes = "aus") OR author_prefixes = "bronte"',
    ]);
    expect(filter({ work_like: ['pride prej', 'jar 𝄞 𠀀'] })).toEqual([
      '(work_prefixes = "pride" AND work_prefixes = "prej") OR (work_prefixes = "jar" AND work_prefixes = "𠀀")',
    ]);
  });

  it('AND the parameters, in a fixed order whatever the request order', () => {
    expect(
      filter({
        genre: ['lyric'],
        work_like: ['poems'],
        author_id: ['1', '8'],
        category: ['poetry'],
        author: ['x'],
      }),
    ).toEqual([
      'author_key = "x"',
      'author_id IN [1, 8]',
      'work_prefixes = "poems"',
      'category_key = "poetry"',
      'genre_keys = "lyric"',
    ]);
  });

  it('hold the words of q as one more filter: each word whole, the last its beginning', () => {
    expect(buildFilter({ genre: ['lyric'], q: ['quiet', 'gard'] })).toEqual([
      'genre_keys = "lyric"',
      `q_words = "${searchKey('quiet')}" AND q_words STARTS WITH "${searchKey('gard')}"`,
    ]);
    expect(buildFilter({ q: ['garden', 'garden'] })).toEqual([
      `q_words = "${searchKey('garden')}" AND q_words STARTS WITH "${searchKey('garden')}"`,
    ]);
  });

  it('refuse to quote a value that is not a key', () => {
    expect(quoteFilterValue('jane austen')).toBe('"jane austen"');
    expect(() => quoteFilterValue('a"b')).toThrow(/not a facet key/);
    expect(() => quoteFilterValue('a\\')).toThrow(/not a facet key/);
  });
});

describe('sort', () => {
  it('defaults to id ascending', () => {
    expect(buildSort([])).toEqual(['id:asc']);
  });

  it('maps text keys to their folded sort attributes and ends with id ascending', () => {
    expect(buildSort([asc('author'), desc('publish_date')])).toEqual([
      'author_sort:asc',
      'publish_date:desc',
      'id:asc',
    ]);
    expect(buildSort([desc('genre'), asc('quote_length'), desc('work'), asc('category')])).toEqual([
      'genre_sort:desc',
      'quote_length:asc',
      'work_sort:desc',
      'category_sort:asc',
      'id:asc',
    ]);
    expect(buildSort([desc('author_id'), asc('work_id')])).toEqual([
      'author_id:desc',
      'work_id:asc',
      'id:asc',
    ]);
  });

  it('keeps an explicit id key as the last one, in its direction', () => {
    expect(buildSort([desc('id')])).toEqual(['id:desc']);
    expect(buildSort([asc('category'), desc('id'), asc('author')])).toEqual(['category_sort:asc', 'id:desc']);
    expect(buildSort([asc('category'), desc('category')])).toEqual(['category_sort:asc', 'id:asc']);
  });
});

describe('sort chunks', () => {
  const compareTuples = (x: readonly string[], y: readonly string[]) => {
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      // A missing chunk sorts after every other; only a tie on all before compares it.
      if (x[i] === undefined || y[i] === undefined) return x[i] === y[i] ? 0 : x[i] === undefined ? 1 : -1;
      const c = Buffer.compare(
        Buffer.from(normaliseFacet(x[i] as string)),
        Buffer.from(normaliseFacet(y[i] as string)),
      );
      if (c !== 0) return c;
    }
    return 0;
  };
  const sign = (n: number) => Math.sign(n);

  it('keep a value under SORT_CHUNK_BYTES whole, as the one sort attribute', () => {
    expect(sortChunks('jane austen')).toEqual(['jane austen']);
    expect(sortChunks('d'.repeat(SORT_CHUNK_BYTES - 1))).toEqual(['d'.repeat(SORT_CHUNK_BYTES - 1)]);
  });

  it('cut a longer value after the first boundary at or past SORT_CHUNK_BYTES, marking the cuts', () => {
    expect(sortChunks('d'.repeat(400))).toEqual([`${'d'.repeat(400)}|`, '|']);
    expect(sortChunks(`${'d'.repeat(399)}€z`)).toEqual([`${'d'.repeat(399)}€|`, '|z']);
    expect(sortChunks(`${'d'.repeat(399)} z`)).toEqual([`${'d'.repeat(399)} |`, '|z']);
    expect(sortChunks(`${'d'.repeat(400)} z`)).toEqual([`${'d'.repeat(400)}|`, '| z']);
    const cjk = sortChunks('語'.repeat(400));
    expect(cjk).toHaveLength(3);
    expect(cjk.map((c) => Buffer.byteLength(c))).toEqual([403, 404, 397]);
  });

  it('stay under the engine limit and stop at MAX_SORT_CHUNKS', () => {
    const long = sortChunks('😀'.repeat(5_000));
    expect(long).toHaveLength(MAX_SORT_CHUNKS);
    for (const chunk of long) expect(Buffer.byteLength(chunk)).toBeLessThanOrEqual(SORT_CHUNK_BYTES + 5);
    expect(long.at(-1)?.endsWith('|')).toBe(true);
  });

  it('compare, under the engine normalisation, as the whole values compare by code point', () => {
    const values = [
      'a',
      'd'.repeat(399),
      'd'.repeat(400),
      `${'d'.repeat(399)}€z`,
      `${'d'.repeat(399)}az`,
      `${'d'.repeat(399)} z`,
      `${'d'.repeat(399)} `.trimEnd(),
      `${'d'.repeat(399)}\u0001`,
      `${'d'.repeat(400)} z`,
      `${'d'.repeat(400)}\u0001`,
      `${'d'.repeat(400)}a`,
      `${'d'.repeat(398)}😀`,
      `${'d'.repeat(398)}ø`,
      `${'d'.repeat(397)}ø a`,
      `${'ø'.repeat(240)} a`,
      `${'ø'.repeat(240)} b`,
      `${'ø'.repeat(240)}`,
      `${'語'.repeat(400)}a`,
      `${'語'.repeat(400)}`,
      `${'語'.repeat(399)}b`,
      'z'.repeat(1_000),
      `${'z'.repeat(999)}a`,
    ];
    for (const x of values) {
      for (const y of values) {
        const whole = Buffer.compare(Buffer.from(x), Buffer.from(y));
        expect(sign(compareTuples(sortChunks(x), sortChunks(y))), `${x.slice(-3)} ${y.slice(-3)}`).toBe(
          sign(whole),
        );
      }
    }
  });

  it('are read from the first document only as counts of more than one chunk', () => {
    expect(readSortChunks(undefined)).toEqual({});
    expect(readSortChunks({ author: 3, work: 1, genre: 'x', category: 99, other: 4 })).toEqual({
      author: 3,
      category: MAX_SORT_CHUNKS,
    });
  });

  it('are stored as the sort attribute and its numbered chunks, and counted per field', () => {
    const encode = createDocumentEncoder('v');
    const quote = FIXTURE_QUOTES[0] as Quote;
    const short = encode(quote);
    expect(Object.keys(short).filter((k) => /_sort/.test(k))).toEqual([
      'author_sort',
      'work_sort',
      'category_sort',
      'genre_sort',
    ]);
    expect(encode.sortChunks()).toEqual({});
    const long = encode({ ...quote, work: 'w'.repeat(900), genre: ['g', 'x'.repeat(500)] });
    expect(long.work_sort).toBe(`${'w'.repeat(400)}|`);
    expect(long.work_sort_2).toBe(`|${'w'.repeat(400)}|`);
    expect(long.work_sort_3).toBe(`|${'w'.repeat(100)}`);
    expect(long.genre_sort).toBe('g');
    expect(encode.sortChunks()).toEqual({ work: 3 });
  });

  it('sort a text key by each of its chunks, in its direction, and reverse them all', () => {
    const chunks = { author: 3, genre: 2 };
    const sort = buildSort([desc('author'), asc('work'), asc('genre')], chunks);
    expect(sort).toEqual([
      'author_sort:desc',
      'author_sort_2:desc',
      'author_sort_3:desc',
      'work_sort:asc',
      'genre_sort:asc',
      'genre_sort_2:asc',
      'id:asc',
    ]);
    const page = pageRequest(query({ sort: [desc('author')], page: 9, limit: 10 }), 100, chunks);
    expect(read(page).request.sort).toEqual([
      'author_sort:asc',
      'author_sort_2:asc',
      'author_sort_3:asc',
      'id:desc',
    ]);
    expect(read(page).reversed).toBe(true);
    expect(buildSort([asc('quote_length'), asc('id')], chunks)).toEqual(['quote_length:asc', 'id:asc']);
  });
});

describe('document requests', () => {
  const plan = (q: ListQuery, total?: number) => pageRequest(q, total);

  it('list the default page: 5 quotes by id, every field, read forward', () => {
    expect(plan(query())).toEqual({
      request: { sort: ['id:asc'], offset: 0, limit: 5, fields: ALL_FIELDS },
      reversed: false,
    });
  });

  it('list a filtered, sorted page of chosen fields, the filter as one expression', () => {
    const { request } = read(
      plan(
        query({
          filters: normaliseFilters({ author_like: ['bron', 'jane aus'], category: ['fiction'] }),
          sort: [asc('author'), desc('publish_date')],
          page: 3,
          limit: 2,
          fields: ['id', 'author', 'quote'],
        }),
      ),
    );
    expect(request satisfies FetchRequest).toEqual({
      filter:
        '(author_prefixes = "bron" OR (author_prefixes = "jane" AND author_prefixes = "aus")) AND (category_key = "fiction")',
      sort: ['author_sort:asc', 'publish_date:desc', 'id:asc'],
      offset: 4,
      limit: 2,
      fields: ['id', 'author', 'quote'],
    });
  });

  it('read a page in the first half forward, and one in the second half backwards', () => {
    const sort = [desc('quote_length')];
    // 10 matches, pages of 3: [0,3) [3,6) [6,9) [9,10).
    expect(read(plan(query({ sort, page: 1, limit: 3 }), 10)).request).toMatchObject({ offset: 0, limit: 3 });
    // [3,6): its middle is before 5, forward.
    expect(read(plan(query({ sort, page: 2, limit: 3 }), 10))).toMatchObject({
      request: { sort: ['quote_length:desc', 'id:asc'], offset: 3, limit: 3 },
      reversed: false,
    });
    // [6,9): the matches [1,4) from the other end, every key reversed.
    expect(read(plan(query({ sort, page: 3, limit: 3 }), 10))).toMatchObject({
      request: { sort: ['quote_length:asc', 'id:desc'], offset: 1, limit: 3 },
      reversed: true,
    });
    // The last, short page: only the one match there is, first from the other end.
    expect(read(plan(query({ sort, page: 4, limit: 3 }), 10))).toMatchObject({
      request: { offset: 0, limit: 1 },
      reversed: true,
    });
  });

  it('answer a page past the last without any request', () => {
    expect(plan(query({ page: 5, limit: 3 }), 12)).toEqual({ pastEnd: true });
    expect(plan(query({ page: Number.MAX_SAFE_INTEGER, limit: 100 }), 12)).toEqual({ pastEnd: true });
    expect(plan(query({ page: 2 }), 0)).toEqual({ pastEnd: true });
  });

  it('reverse every sort key, the id tie-breaker included', () => {
    expect(reverseSort(['author_sort:asc', 'publish_date:desc', 'id:asc'])).toEqual([
      'author_sort:desc',
      'publish_date:asc',
      'id:desc',
    ]);
    expect(reverseSort(buildSort([desc('id')]))).toEqual(['id:asc']);
  });

  it('read exactly the forward slice backwards, for every page of every size (model of the engine)', () => {
    // The engine's order of 23 matches is a fixed permutation; reading backwards walks it from
    // the end. Every page the plan reads, reversed, must be that slice of the forward order.
    const order = Array.from({ length: 23 }, (_, i) => (i * 7) % 23);
    for (const limit of [1, 2, 5, 7, 23, 100]) {
      for (let page = 1; page <= Math.ceil(23 / limit) + 1; page++) {
        const p = plan(query({ page, limit }), order.length);
        const start = (page - 1) * limit;
        if ('pastEnd' in p) {
          expect(start, `page ${page} of ${limit}`).toBeGreaterThanOrEqual(23);
          continue;
        }
        const source = p.reversed ? [...order].reverse() : order;
        const got = source.slice(p.request.offset, p.request.offset + p.request.limit);
        if (p.reversed) got.reverse();
        expect(got, `page ${page} of ${limit}`).toEqual(order.slice(start, start + limit));
        // No read walks past the middle of the matches.
        expect(p.request.offset, `page ${page} of ${limit}`).toBeLessThanOrEqual(23 / 2);
      }
    }
  });

  it('read shallow pages without a count first', () => {
    expect(SHALLOW_OFFSET).toBeGreaterThanOrEqual(100);
  });

  it('count without documents and without sorting', () => {
    expect(countRequest('genre_keys = "gothic"') satisfies FetchRequest).toEqual({
      filter: 'genre_keys = "gothic"',
      offset: 0,
      limit: 0,
    });
    expect(countRequest(undefined)).toEqual({ offset: 0, limit: 0 });
  });

  it('pick the match at a random offset, in the engine order (no sort)', () => {
    expect(pickRequest('genre_keys = "gothic"', 6, ['id']) satisfies FetchRequest).toEqual({
      filter: 'genre_keys = "gothic"',
      offset: 6,
      limit: 1,
      fields: ['id'],
    });
    expect(pickRequest(undefined, 0, null)).toEqual({ offset: 0, limit: 1, fields: ALL_FIELDS });
  });

  it('get one quote by its primary key, with the chosen fields', () => {
    expect(getRequest('quotes', 42, ['id', 'work'])).toEqual({
      path: 'indexes/quotes/documents/42',
      params: { fields: 'id,work' },
    });
  });

  describe('in the engine order', () => {
    const fields = ['id', 'author'];
    it('leaves out the id:asc that ends a sort, and asks each document its version', () => {
      expect(
        inEngineOrder({
          filter: 'a = 1',
          sort: ['author_sort:asc', 'id:asc'],
          offset: 20,
          limit: 20,
          fields,
        }),
      ).toEqual({
        filter: 'a = 1',
        sort: ['author_sort:asc'],
        offset: 20,
        limit: 20,
        fields: [...fields, 'catalogue_version'],
      });
    });
    it('sends no sort when id:asc was all of it, and asks the version once', () => {
      expect(
        inEngineOrder({ sort: ['id:asc'], offset: 0, limit: 5, fields: ['id', 'catalogue_version'] }),
      ).toEqual({ offset: 0, limit: 5, fields: ['id', 'catalogue_version'] });
    });
    it('keeps a sort that does not end in id:asc: a page read backwards, an order by id descending', () => {
      expect(
        inEngineOrder({ sort: ['author_sort:desc', 'id:desc'], offset: 0, limit: 5, fields }),
      ).toBeUndefined();
      expect(inEngineOrder({ sort: ['id:desc'], offset: 0, limit: 5, fields })).toBeUndefined();
      expect(inEngineOrder({ offset: 0, limit: 0 })).toBeUndefined();
    });
  });

  it('read the size, the version and the order mark in one request', () => {
    expect(infoRequest() satisfies FetchRequest).toEqual({
      offset: 0,
      limit: 1,
      fields: ['catalogue_version', 'catalogue_order', 'catalogue_sort_chunks'],
    });
  });

  it('join filter parameters with AND, each in parentheses when there are several', () => {
    expect(filterExpression([])).toBeUndefined();
    expect(filterExpression(['a = "1"'])).toBe('a = "1"');
    expect(filterExpression(['a = "1" OR a = "2"', 'b IN ["x", "y"]'])).toBe(
      '(a = "1" OR a = "2") AND (b IN ["x", "y"])',
    );
  });
});

describe('hits', () => {
  it('project to exactly the requested fields in contract order, dropping everything else', () => {
    const doc = createDocumentEncoder('v')(FIXTURE_QUOTES[0] as Quote);
    const hit = { catalogue_version: 'v', quote: doc.quote, id: doc.id, author: doc.author, author_key: 'x' };
    const projected = projectHit(hit, ['id', 'author', 'quote']);
    expect(Object.keys(projected)).toEqual(['id', 'author', 'quote']);
    expect(projected).toEqual({ id: doc.id, author: doc.author, quote: doc.quote });
    expect(projectHit(doc, null)).toEqual(FIXTURE_QUOTES[0]);
    expect(Object.keys(projectHit(doc, null))).toEqual(ALL_FIELDS);
  });

  it('refuse a document without a requested field (an index not built by the indexer)', () => {
    expect(() => projectHit({ id: 3 }, ['id', 'author'])).toThrow(/document 3 .* no 'author'/);
  });
});

describe('build index names', () => {
  it('stay within the engine uid alphabet', () => {
    expect(buildIndexUid('quotes', 'lx2abc-0a1b2c3d')).toBe('quotes_build_lx2abc-0a1b2c3d');
  });
});

// ---------------------------------------------------------------------------------------------
// The engine's OpenAPI description

const OPENAPI_NAME = 'meilisearch-openapi-v1.53.json';

function findOpenApi(): string | undefined {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
  const candidates = [
    process.env.MEILI_OPENAPI,
    join(root, 'reference', OPENAPI_NAME),
    join(root, '..', 'shared', 'reference', OPENAPI_NAME),
  ];
  return candidates.find((path): path is string => path !== undefined && existsSync(path));
}

type Schema = Record<string, unknown>;

/** The subset of JSON Schema the engine's OpenAPI uses for these objects. */
function validate(schema: Schema, value: unknown, root: Schema, path = '$'): string[] {
  if (typeof schema.$ref === 'string') {
    const target = (schema.$ref as string).replace('#/', '').split('/');
    let resolved: unknown = root;
    for (const part of target) resolved = (resolved as Schema)[part];
    return validate(resolved as Schema, value, root, path);
  }
  const errors: string[] = [];
  if (Array.isArray(schema.oneOf)) {
    const passing = (schema.oneOf as Schema[]).filter((s) => validate(s, value, root, path).length === 0);
    if (passing.length !== 1) errors.push(`${path}: matches ${passing.length} of oneOf`);
  }
  if (Array.isArray(schema.allOf)) {
    for (const s of schema.allOf as Schema[]) errors.push(...validate(s, value, root, path));
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    const actual =
      value === null
        ? 'null'
        : Array.isArray(value)
          ? 'array'
          : Number.isInteger(value)
            ? 'integer'
            : typeof value;
    const ok = types.includes(actual) || (actual === 'integer' && types.includes('number'));
    if (!ok) return [...errors, `${path}: ${actual} is not ${types.join('|')}`];
  }
  if (Array.isArray(schema.enum) && !(schema.enum as unknown[]).includes(value)) {
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof schema.minimum === 'number' && typeof value === 'number' && value < schema.minimum) {
    errors.push(`${path}: ${value} < ${schema.minimum}`);
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => {
      errors.push(...validate(schema.items as Schema, item, root, `${path}[${i}]`));
    });
  }
  if (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    schema.properties !== undefined
  ) {
    const properties = schema.properties as Record<string, Schema>;
    for (const [key, item] of Object.entries(value)) {
      if (properties[key] !== undefined)
        errors.push(...validate(properties[key], item, root, `${path}.${key}`));
      else if (schema.additionalProperties === false) errors.push(`${path}.${key}: not allowed`);
    }
    for (const key of (schema.required as string[] | undefined) ?? []) {
      if (!(key in value)) errors.push(`${path}.${key}: required`);
    }
  }
  return errors;
}

const openApiPath = findOpenApi();
if (openApiPath === undefined) {
  console.warn(
    `${SKIP_TAG} OpenAPI checks: ${OPENAPI_NAME} not found (set MEILI_OPENAPI, or place it in reference/ or ../shared/reference/)`,
  );
}

describe.skipIf(openApiPath === undefined)('requests against the engine OpenAPI description (v1.53)', () => {
  const spec = openApiPath === undefined ? {} : (JSON.parse(readFileSync(openApiPath, 'utf8')) as Schema);
  const schemas = () => (spec.components as { schemas: Record<string, Schema> }).schemas;
  const schema = (name: string) => {
    const found = schemas()[name];
    if (found === undefined) throw new Error(`schema ${name} missing from the OpenAPI description`);
    return found;
  };
  const properties = (name: string) => Object.keys(schema(name).properties as object);

  it('describes version 1.53', () => {
    expect((spec.info as { version: string }).version).toMatch(/^1\.53\./);
  });

  it('knows every key of the settings object and accepts its values', () => {
    expect(Object.keys(MEILI_SETTINGS).filter((k) => !properties('Settings_Unchecked').includes(k))).toEqual(
      [],
    );
    expect(validate(schema('Settings_Unchecked'), MEILI_SETTINGS, spec)).toEqual([]);
  });

  const requests: [string, FetchRequest][] = [
    ['default list', read(pageRequest(query())).request],
    [
      'filtered, sorted, projected list read backwards',
      read(
        pageRequest(
          query({
            filters: normaliseFilters({
              author_like: ['jane aus', 'bron'],
              genre: ['gothic'],
              work_id: ['1', '2'],
            }),
            sort: [desc('genre'), asc('quote_length')],
            page: 4,
            limit: 100,
            fields: ['id', 'genre'],
          }),
          420,
        ),
      ).request,
    ],
    ['count', countRequest('genre_keys = "gothic"')],
    ['pick', pickRequest('genre_keys = "gothic"', 3, null)],
    ['info', infoRequest()],
    [
      'sorted list in the engine order',
      inEngineOrder(read(pageRequest(query({ sort: [asc('author')] }))).request) as FetchRequest,
    ],
    ['default list in the engine order', inEngineOrder(read(pageRequest(query())).request) as FetchRequest],
  ];
  for (const [name, request] of requests) {
    it(`knows every key of the ${name} documents fetch and accepts its values`, () => {
      expect(Object.keys(request).filter((k) => !properties('BrowseQuery').includes(k))).toEqual([]);
      expect(validate(schema('BrowseQuery'), request, spec)).toEqual([]);
    });
  }

  it('accepts both swap payloads the builder sends (swap, then rename on the first run)', () => {
    const swaps: IndexSwap[] = [
      { indexes: ['quotes', 'quotes_build_x'], rename: false },
      { indexes: ['quotes_build_x', 'quotes'], rename: true },
    ];
    const body = (spec.paths as Record<string, { post: { requestBody: unknown } }>)['/swap-indexes']?.post
      .requestBody as { content: { 'application/json': { schema: Schema } } };
    expect(validate(body.content['application/json'].schema, swaps, spec)).toEqual([]);
  });

  it('serves the routes the adapter and the builder call', () => {
    const paths = spec.paths as Record<string, Record<string, unknown>>;
    const used: [string, string][] = [
      ['/indexes/{index_uid}/documents/fetch', 'post'],
      ['/indexes/{index_uid}/documents/{document_id}', 'get'],
      ['/indexes', 'get'],
      ['/indexes', 'post'],
      ['/indexes/{index_uid}', 'get'],
      ['/indexes/{index_uid}', 'delete'],
      ['/indexes/{index_uid}/settings', 'patch'],
      ['/indexes/{index_uid}/documents', 'post'],
      ['/indexes/{index_uid}/stats', 'get'],
      ['/swap-indexes', 'post'],
      ['/tasks/{task_id}', 'get'],
      ['/tasks/cancel', 'post'],
      ['/keys', 'get'],
      ['/keys', 'post'],
    ];
    expect(used.filter(([path, method]) => paths[path]?.[method] === undefined)).toEqual([]);
  });

  it('rejects what it should (the validator is not vacuous)', () => {
    expect(validate(schema('SearchQuery'), { hitsPerPage: -1 }, spec)).not.toEqual([]);
    expect(validate(schema('Settings_Unchecked'), { prefixSearch: 'always' }, spec)).not.toEqual([]);
    expect(validate(schema('Settings_Unchecked'), { sortableAttributes: 'id' }, spec)).not.toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// A model of the engine's documented filter and sort semantics

/** The engine's facet normalisation: trim (Unicode White_Space), NFKD, lower-case, 468 bytes. */
function normaliseFacet(value: string): string {
  const normal = value
    .replace(/^\p{White_Space}+|\p{White_Space}+$/gu, '')
    .normalize('NFKD')
    .toLowerCase();
  let out = '';
  for (const ch of normal) {
    if (Buffer.byteLength(out + ch) > 468) break;
    out += ch;
  }
  return out;
}

type Token = { kind: 'word' | 'string' | 'punct'; text: string };

/** The filter tokenizer: a backslash skips the next character, and only `\"` is unescaped. */
function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if ('()[],='.includes(c)) {
      tokens.push({ kind: 'punct', text: c });
      i++;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let escaped = false;
      while (j < input.length && input[j] !== c) {
        if (input[j] === '\\') {
          if (j + 1 >= input.length) throw new Error('malformed value');
          escaped ||= input[j + 1] === c;
          j += 2;
        } else j++;
      }
      if (j >= input.length) throw new Error(`unterminated value in ${input}`);
      const raw = input.slice(i + 1, j);
      tokens.push({ kind: 'string', text: escaped ? raw.replaceAll(`\\${c}`, c) : raw });
      i = j + 1;
    } else {
      let j = i;
      while (j < input.length && !/[\s()[\],="']/.test(input[j] as string)) j++;
      tokens.push({ kind: 'word', text: input.slice(i, j) });
      i = j;
    }
  }
  return tokens;
}

type Doc = object;
const attributeOf = (doc: Doc, attribute: string): unknown => (doc as Record<string, unknown>)[attribute];
type Predicate = (doc: Doc) => boolean;

/** Parses the grammar subset the adapter writes: `=`, `IN [...]`, AND over OR, parentheses. */
function parseFilter(input: string): Predicate {
  const tokens = tokenize(input);
  let pos = 0;
  const peek = () => tokens[pos];
  const take = (text?: string): Token => {
    const token = tokens[pos++];
    if (token === undefined || (text !== undefined && token.text !== text)) {
      throw new Error(`expected ${text ?? 'a token'} at ${pos} in ${input}`);
    }
    return token;
  };
  const literal = (token: Token) =>
    token.kind === 'word' && /^[0-9]+$/.test(token.text) ? Number(token.text) : token.text;
  const equalsAny = (attribute: string, wanted: (string | number)[]): Predicate => {
    return (doc) => {
      const stored = attributeOf(doc, attribute);
      const values = Array.isArray(stored) ? stored : [stored];
      return values.some((v) =>
        wanted.some((w) =>
          typeof v === 'number'
            ? v === w
            : typeof v === 'string' && typeof w === 'string' && normaliseFacet(v) === normaliseFacet(w),
        ),
      );
    };
  };
  const condition = (): Predicate => {
    if (peek()?.text === '(') {
      take('(');
      const inner = or();
      take(')');
      return inner;
    }
    const attribute = take().text;
    const operator = take().text;
    if (operator === '=') return equalsAny(attribute, [literal(take())]);
    if (operator !== 'IN') throw new Error(`unsupported operator ${operator}`);
    take('[');
    const values = [literal(take())];
    while (peek()?.text === ',') {
      take(',');
      values.push(literal(take()));
    }
    take(']');
    return equalsAny(attribute, values);
  };
  const and = (): Predicate => {
    const parts = [condition()];
    while (peek()?.text === 'AND') {
      take('AND');
      parts.push(condition());
    }
    return (doc) => parts.every((p) => p(doc));
  };
  const or = (): Predicate => {
    const parts = [and()];
    while (peek()?.text === 'OR') {
      take('OR');
      parts.push(and());
    }
    return (doc) => parts.some((p) => p(doc));
  };
  const predicate = or();
  if (pos !== tokens.length) throw new Error(`trailing tokens in ${input}`);
  return predicate;
}

/** The array form: every element must hold. */
function engineFilter(filter: readonly string[]): Predicate {
  const parts = filter.map(parseFilter);
  return (doc) => parts.every((p) => p(doc));
}

/** Strings compare by the bytes of their normalised form, numbers as numbers. */
function engineCompare(sort: readonly string[]): (a: Doc, b: Doc) => number {
  return (a, b) => {
    for (const key of sort) {
      const [attribute, direction] = key.split(':') as [string, string];
      const x = attributeOf(a, attribute);
      const y = attributeOf(b, attribute);
      // Without the attribute (or with an empty string) a document comes after every other one,
      // whichever the direction.
      const missingX = x === undefined || x === '';
      const missingY = y === undefined || y === '';
      if (missingX || missingY) {
        if (missingX && missingY) continue;
        return missingX ? 1 : -1;
      }
      const c =
        typeof x === 'number' && typeof y === 'number'
          ? x - y
          : Buffer.compare(Buffer.from(normaliseFacet(String(x))), Buffer.from(normaliseFacet(String(y))));
      if (c !== 0) return direction === 'asc' ? c : -c;
    }
    return 0;
  };
}

/** Quotes whose text tests the encoding: quotes, backslashes, escapes, U+0085, very long names. */
function adversarialQuotes(): Quote[] {
  const base = FIXTURE_QUOTES[0] as Quote;
  const names = [
    'Say "No" \\ Yes',
    'Back\\',
    'Back',
    'a"b',
    'a_22_b',
    'under_score',
    'tilde~x',
    'Nel\u0085',
    'Nel',
    "children's",
    'x\uFEFFy',
    '𠀀𠀁 Poet',
    '漢'.repeat(170),
    `${'漢'.repeat(160)}a`,
    `${'漢'.repeat(160)}b`,
  ];
  return names.map((name, i) => ({
    ...base,
    id: 10_000 + i,
    author: name,
    author_id: 10_000 + i,
    work: `${name} works`,
    work_id: 20_000 + i,
    category: name,
    genre: [name, 'adversarial'],
  }));
}

describe('filters and sorts under the engine model', () => {
  const quotes = [...FIXTURE_QUOTES, ...adversarialQuotes()];
  const encode = createDocumentEncoder('model');
  const docs: MeiliQuoteDocument[] = quotes.map(encode);
  const ids = (list: { id: number }[]) => list.map((q) => q.id).sort((a, b) => a - b);

  const cases: RawFilters[] = [
    { author: ['EMILE zola'] },
    { author: ['  oscar WILDE '] },
    { author: ['Paul Éluard'] },
    { author: ['søren kierkegaard'] },
    { author: ['Soren Kierkegaard'] },
    { author: ['jane'] },
    { work: ['poems'] },
    { work: ['J’ACCUSE...!'] },
    { category: ['POETRY'] },
    { genre: ['Gothic'] },
    { genre: ['southern gothic'] },
    { genre: ['resistance'] },
    { author_id: ['7', '12'] },
    { work_id: ['201'] },
    { author_like: ['bron'] },
    { author_like: ['usten'] },
    { author_like: ['jane aus'] },
    { author_like: ["O'Connor"] },
    { author_like: ['paul jean'] },
    { author_like: ['sø'] },
    { author_like: ['so'] },
    { author_like: ['e'] },
    { author_like: ['bron', 'aust'] },
    { work_like: ['pride prej'] },
    { work_like: ['accuse'] },
    { work_like: ['or'] },
    { work_like: ['1942'] },
    { work_like: ['jar 𝄞'] },
    { author_like: ['emil'], author: ['emily bronte'] },
    { genre: ['lyric'], author_like: ['william'] },
    { author_id: ['1'], work_like: ['hamlet'], genre: ['tragedy'] },
    // Adversarial values: every one must match itself and nothing else.
    { author: ['Say "No" \\ Yes'] },
    { author: ['Back\\'] },
    { author: ['back'] },
    { author: ['A"B'] },
    { author: ['a_22_b'] },
    { author: ['Nel\u0085'] },
    { author: ['nel'] },
    { category: ["CHILDREN'S"] },
    { genre: ['tilde~x', 'under_score'] },
    { author: ['漢'.repeat(170)] },
    { author: [`${'漢'.repeat(160)}a`] },
    { author: ['漢'.repeat(160)] },
    { author_like: ['漢'.repeat(150)] },
    { author_like: ['back'] },
    { author_like: ['x y'] },
    { author_like: ['𠀀'] },
    { author_like: ['𠀁'] },
  ];
  for (const raw of cases) {
    it(`select what the contract selects: ${JSON.stringify(raw).slice(0, 90)}`, () => {
      const filters = normaliseFilters(raw);
      const predicate = engineFilter(buildFilter(filters));
      const expected = ids(quotes.filter((q) => matches(q, filters)));
      expect(ids(docs.filter(predicate))).toEqual(expected);
    });
  }

  it('has cases that select something, and cases that select nothing', () => {
    const sizes = cases.map((raw) => quotes.filter((q) => matches(q, normaliseFilters(raw))).length);
    expect(sizes.filter((n) => n === 0).length).toBeGreaterThan(2);
    expect(sizes.filter((n) => n === 1).length).toBeGreaterThan(5);
    expect(sizes.filter((n) => n > 1).length).toBeGreaterThan(10);
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
    [desc('author_id')],
    [asc('work_id')],
    [desc('id')],
    [asc('category'), desc('publish_date')],
    [desc('genre'), asc('quote_length')],
    [desc('category'), desc('work'), asc('quote_length')],
  ];
  it('sorts names past the engine’s 468-byte limit by their chunks', () => {
    expect(quotes.filter((q) => Buffer.byteLength(fold(q.author)) > 468)).toHaveLength(3);
    expect(encode.sortChunks()).toEqual({ author: 2, work: 2, category: 2, genre: 2 });
  });

  it('relies on folded text being a fixed point of the engine normalisation', () => {
    // The engine trims Unicode White_Space, U+0085 (NEL) included, which JavaScript's \s lacks:
    // port.fold collapses it too, so every code point, alone or at an end, is stable.
    const unstable: number[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      const folded = fold(`${ch}x${ch}`);
      if (normaliseFacet(folded) !== folded) unstable.push(cp);
    }
    expect(unstable).toEqual([]);
  });
  for (const sort of sorts) {
    const label = sort.map((k) => `${k.field} ${k.direction}`).join(', ') || 'default';
    it(`order as the contract orders: ${label}`, () => {
      const expected = [...quotes].sort((a, b) => compareQuotes(a, b, sort)).map((q) => q.id);
      const actual = [...docs].sort(engineCompare(buildSort(sort, encode.sortChunks()))).map((d) => d.id);
      expect(actual).toEqual(expected);
    });
  }
});

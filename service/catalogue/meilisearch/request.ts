/**
 * Pure translation between the catalogue port and Meilisearch: the index settings, the document
 * stored for each quote, the filter and sort expressions, and the search request of each port
 * call. No I/O here, so every request the adapter sends is asserted exactly in unit tests.
 *
 * How the contract's text rules survive the engine (docs/api.md#text-matching):
 *
 * - The engine normalises facet strings itself (trim, NFKD, lower-case) and compares filters and
 *   sorts on that form. Every stored key is already the contract's folded form ({@link fold}),
 *   which is a fixed point of that normalisation (`fold` trims Unicode White_Space, as the
 *   engine does), so the engine's own step changes nothing.
 * - Equality filters never carry raw user text: they compare {@link facetKey} encodings, which
 *   hold no `"` or `\` (the filter parser unescapes only `\"`, so a value ending with a backslash
 *   cannot be written at all) and stay under the engine's 468-byte facet limit (longer values
 *   are truncated by the engine and would match each other).
 * - `_like` filters compare against the precomputed prefixes of every word ({@link prefixKeys})
 *   with `=`. `STARTS WITH` on word lists would need fewer stored values, but it was an
 *   experimental operator gated behind `containsFilter` until mid-2025 (meilisearch#5801) and
 *   the v1.53 OpenAPI does not document it; `=` on an array field is core filtering in every
 *   1.x engine, and exact.
 * - Text sorts use separate `*_sort` attributes holding the folded form: the engine compares
 *   their bytes, and UTF-8 byte order is code point order. The engine keeps only the first 468
 *   bytes of a sort string, so a longer value is stored in chunks, `author_sort`, `author_sort_2`
 *   and on ({@link sortChunks}), and sorted by all of them; a catalogue without long values
 *   sorts by one attribute per key, as the first document records ({@link SortChunks}).
 * - Reads go through the documents routes, not `/search`: `POST /documents/fetch` (filter,
 *   sort, offset, limit, fields, and an exact `total` of matches, uncapped) and `GET
 *   /documents/{id}`. For a listing without full-text search they give the same answer as a
 *   search for a fraction of its cost; the service's key therefore holds `documents.get`.
 *   The engine walks the sorted matches up to a page's offset, so deep pages are read from the
 *   nearer end with every sort key reversed ({@link pageRequest}), or placed by counts of ranges
 *   of their sort key and read without the walk (`meilisearch/runs.ts`).
 * - `id` ends every sort, so the order is total: a page read backwards is exactly the reversed
 *   slice of the forward order, ties included.
 */
import { createHash } from 'node:crypto';
import type { Settings } from 'meilisearch';
import {
  CatalogueUnavailableError,
  type Direction,
  type FacetField,
  type Filters,
  fold,
  type ListQuery,
  normaliseSort,
  QUOTE_FIELDS,
  type Quote,
  type QuoteField,
  type QuoteProjection,
  type SortField,
  type SortKey,
  wordSet,
  words,
} from '../port.ts';
import { publishDay, type Ranges } from '../ranges.ts';
import { engineToken, searchKey } from '../search.ts';

/**
 * Upper bound of `pagination.maxTotalHits`, and so of the catalogue size: exact totals
 * (`totalHits`) and pages are capped by it. The builder refuses larger catalogues.
 */
export const MAX_TOTAL_HITS = 100_000_000;

/** Longest `MEILI_TIMEOUT_MS` the service accepts. */
export const MAX_SEARCH_TIMEOUT_MS = 60_000;

/** `MEILI_TIMEOUT_MS` when unset, and the search cut-off of an index built without one. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 2_000;

/**
 * `MEILI_CONNECTIONS` when unset: the connections one service instance keeps to the engine, and
 * so the requests it has the engine work on at once; more wait in the service, in order, within
 * their deadline. Without a bound, a flood of clients is a flood of engine connections, each
 * request working at once. Measured at 1M (docs/benchmarks.md#history), two services on one
 * engine in turns: at 16 the uncached mix kept its throughput with a lower p99 (113 and 114 ms
 * against 128 and 130 unbounded) but `/quotes/random`, whose reads are short, lost 5 to 10%; at
 * 32 both kept their throughput (1.00 and 1.10 of the unbounded service's).
 */
export const DEFAULT_ENGINE_CONNECTIONS = 32;

/**
 * Deep pages (read after a count) one service instance has the engine read at once. Each can
 * keep an engine core busy for a few hundred milliseconds on a large catalogue; past this many,
 * more would only queue in the engine until every one of them timed out. A deep page beyond them
 * waits in the service for a read to end, for at most half of what is left of its call's time
 * (so that it can still be read once admitted), and is answered 503 with Retry-After when none
 * ends by then. The default of `MEILI_DEEP_READS`, which sets it (about twice the engine's cores).
 */
export const MAX_DEEP_READS = 4;

/**
 * Longest stored facet key, in UTF-8 bytes: below the engine's 468-byte facet limit, with room
 * for the engine's own normalisation. Longer keys are replaced by a digest.
 */
export const MAX_KEY_BYTES = 400;

/** A quote as the Meilisearch index stores it: the Quote plus keys computed at index time. */
export interface MeiliQuoteDocument extends Quote {
  /** The build that wrote this document: the catalogue version {@link CatalogueInfo} reports. */
  catalogue_version: string;
  /**
   * {@link ENGINE_ORDER_ID} on the engine's first document of a catalogue the indexer found held
   * in id order (meilisearch/builder.ts); absent on every other document.
   */
  catalogue_order?: typeof ENGINE_ORDER_ID;
  /** On the engine's first document of a catalogue with long text values: how many chunks each sorts by. */
  catalogue_sort_chunks?: SortChunks;
  author_key: string;
  author_sort: string;
  author_prefixes: string[];
  work_key: string;
  work_sort: string;
  work_prefixes: string[];
  category_key: string;
  category_sort: string;
  genre_keys: string[];
  /** Folded first genre: `genre` sorts by the first genre of the list. */
  genre_sort: string;
  /** `publish_date` as an integer in the same order ({@link publishOrder}), so ranges of it can be counted. */
  publish_order: number;
  /** The chunks of a long `*_sort` value after the first ({@link sortChunks}). */
  [chunk: `${string}_sort_${number}`]: string;
  /** Full-text search (search.ts): the words of the quote's text, in order, as engine tokens. */
  q_text: string;
  /** The words of the author's name, then of the work's title, as engine tokens. */
  q_meta: string;
  /** {@link searchKey} of every distinct word of text, author and work: what `q` filters match. */
  q_words: string[];
  /** {@link searchKey} of every distinct word of the text alone: the first relevance groups. */
  q_text_words: string[];
  /** Day number of the first day of publish_date (ranges.ts): what `published_*` compare. */
  publish_day: number;
}

/** The attributes `q` ranks by: the quote's words, then its author's and work's. */
export const SEARCH_ATTRIBUTES = ['q_text', 'q_meta'] as const;
/**
 * The one locale of the search attributes and queries: the tokens are ASCII letters, which any
 * Latin-script locale keeps whole; a detected language could bring a segmenter that splits them.
 */
export const SEARCH_LOCALE = 'eng';

/** Attributes searches may return: the Quote fields and the version marker, never the keys. */
const DISPLAYED_ATTRIBUTES = [...QUOTE_FIELDS, 'catalogue_version'];

/** The text sort keys whose values the index may store in several chunks. */
export const CHUNKED_FIELDS = ['author', 'work', 'category', 'genre'] as const;
export type ChunkedField = (typeof CHUNKED_FIELDS)[number];

/**
 * How many sort attributes each text key spans in one catalogue: the most chunks any of its
 * values needed, recorded only above one. A catalogue without the record (every value short, or
 * built before chunks) sorts by one attribute per key.
 */
export type SortChunks = Partial<Record<ChunkedField, number>>;

/**
 * Least UTF-8 bytes of a chunk that another follows. A chunk ends at the first code point
 * boundary at or past it, so it holds at most 3 bytes more (and its two marks): well below the
 * engine's 468-byte limit on sort strings.
 */
export const SORT_CHUNK_BYTES = 400;

/**
 * Most chunks of one value: 11 full chunks hold 4,400 bytes, more than 1,000 code points (the
 * longest label) take unless folding expands them. Values that agree on all of them tie and
 * fall to the next key.
 */
export const MAX_SORT_CHUNKS = 12;

/**
 * Written after a chunk that another follows, and before every chunk but the first. The engine
 * trims white space from sort strings: a chunk cut next to a space would lose it otherwise. Any
 * constant keeps the order: two chunks that both end with it are never prefixes of each other.
 */
const CHUNK_MARK = '|';

/** `base`, then `base_2` up to `base_<count>`: the sort attributes of a value in `count` chunks. */
export function chunkAttributes(base: string, count: number): string[] {
  return [base, ...Array.from({ length: Math.max(0, count - 1) }, (_, i) => `${base}_${i + 2}`)];
}

function utf8Bytes(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/**
 * The stored sort strings of a folded value, whose tuple the engine compares as it would compare
 * the whole value by code point. A value under {@link SORT_CHUNK_BYTES} is itself. A longer one
 * is cut after the first code point boundary at or past SORT_CHUNK_BYTES, again and again. The
 * cut depends only on the bytes before that boundary, so two values cut at different places
 * differ before both cuts; and a value whose rest reaches the limit gets one more chunk, even
 * empty, so that a value that is the prefix of another sorts before it rather than tying.
 */
export function sortChunks(folded: string): string[] {
  // UTF-16 code units take at most 3 UTF-8 bytes each.
  if (folded.length * 3 < SORT_CHUNK_BYTES || Buffer.byteLength(folded) < SORT_CHUNK_BYTES) return [folded];
  const chunks: string[] = [];
  let start = 0;
  let at = 0;
  let bytes = 0;
  while (at < folded.length && chunks.length < MAX_SORT_CHUNKS) {
    const codePoint = folded.codePointAt(at) as number;
    at += codePoint > 0xffff ? 2 : 1;
    bytes += utf8Bytes(codePoint);
    if (bytes >= SORT_CHUNK_BYTES) {
      chunks.push(folded.slice(start, at));
      start = at;
      bytes = 0;
    }
  }
  // Past MAX_SORT_CHUNKS the rest is dropped: the last chunk stored is then not the end.
  const whole = chunks.length < MAX_SORT_CHUNKS;
  if (whole) chunks.push(folded.slice(start));
  const last = chunks.length - 1;
  return chunks.map(
    (chunk, i) => `${i > 0 ? CHUNK_MARK : ''}${chunk}${i < last || !whole ? CHUNK_MARK : ''}`,
  );
}

/** The record of a catalogue's first document, or none when it is not one this release writes. */
export function readSortChunks(value: unknown): SortChunks {
  const out: SortChunks = {};
  if (typeof value !== 'object' || value === null) return out;
  for (const field of CHUNKED_FIELDS) {
    const count = (value as Record<string, unknown>)[field];
    if (Number.isSafeInteger(count) && (count as number) > 1) {
      out[field] = Math.min(count as number, MAX_SORT_CHUNKS);
    }
  }
  return out;
}

/**
 * The index settings, applied to every new index before its documents.
 *
 * - `searchCutoffMs` at the service's timeout (the builder writes `MEILI_TIMEOUT_MS` there; this
 *   is the default): a search nobody waits for any more stops, rather than keeping the engine
 *   busy (an abandoned search once ran for over a minute). Listings without `q` read through the
 *   documents routes and never meet it; a search with `q` that it cuts short is refused
 *   (meilisearch/search.ts), never served partly unranked.
 * - Typo tolerance and facet search are off: the service matches only through filters, so they
 *   would cost indexing time and could only blur exact semantics. Prefix search is on for the
 *   ranking of `q` alone (below).
 * - `searchableAttributes` is kept small for the same reason; author and work keep the
 *   dashboard's search box useful.
 * - Full-text search (`q`, search.ts, meilisearch/search.ts) matches through the `q_words` and
 *   `q_text_words` filters, exactly, and asks the engine's own search only to rank: over
 *   `q_text` and `q_meta`, the contract's words as tokens of letters that the tokenizer keeps
 *   whole (pinned to one locale, so that no language's segmenter splits them). Ranking needs
 *   word positions (`proximityPrecision: byWord`) and the last word read as a prefix (prefix
 *   search at indexing time).
 */
export const MEILI_SETTINGS = {
  displayedAttributes: DISPLAYED_ATTRIBUTES,
  searchableAttributes: ['q_text', 'q_meta', 'author', 'work'],
  filterableAttributes: [
    // Ranges of id (and of author_id, work_id) are counted to place deep pages without the
    // engine's walk (meilisearch/runs.ts).
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
    // Range filters compare numbers: the length as stored, the date as its first day's number.
    'quote_length',
    'publish_day',
    // ISO 639-1 codes, stored as they are compared: lower-case letters, their own facet key.
    'language',
  ],
  sortableAttributes: [
    'id',
    'author_id',
    'work_id',
    'quote_length',
    'publish_date',
    ...chunkAttributes('author_sort', MAX_SORT_CHUNKS),
    ...chunkAttributes('work_sort', MAX_SORT_CHUNKS),
    ...chunkAttributes('category_sort', MAX_SORT_CHUNKS),
    ...chunkAttributes('genre_sort', MAX_SORT_CHUNKS),
  ],
  // Relevance is proximity, then which attribute matched, then exact words before prefixes; ties
  // fall to the engine's order of documents. `typo` has nothing to rank with typos off, and
  // `wordPosition` (a match nearer the start first) cost a sixth of a ranked search's time.
  rankingRules: ['sort', 'words', 'proximity', 'attributeRank', 'exactness'],
  typoTolerance: { enabled: false },
  pagination: { maxTotalHits: MAX_TOTAL_HITS },
  // Facet counts list every value of the matches, so that the service ranks them itself: the
  // engine's own cut (100 values by default) would drop values tied at the boundary.
  faceting: { maxValuesPerFacet: MAX_TOTAL_HITS },
  searchCutoffMs: DEFAULT_SEARCH_TIMEOUT_MS,
  facetSearch: false,
  prefixSearch: 'indexingTime',
  proximityPrecision: 'byWord',
  localizedAttributes: [{ attributePatterns: [...SEARCH_ATTRIBUTES], locales: [SEARCH_LOCALE] }],
} as const satisfies Settings;

/** The sortable attribute behind each sort key of the contract. */
const SORT_ATTRIBUTES: Record<SortField, string> = {
  id: 'id',
  author: 'author_sort',
  author_id: 'author_id',
  work: 'work_sort',
  work_id: 'work_id',
  category: 'category_sort',
  genre: 'genre_sort',
  publish_date: 'publish_date',
  quote_length: 'quote_length',
};

/** Characters a facet key keeps as they are: letters, digits, space and plain ASCII punctuation. */
const KEY_KEEP = /[\p{L}\p{N} !#$%&'()*+,\-./:;<=>?@[\]^`{|}]/u;
/** Marks a digest key; never kept as is (see {@link KEY_KEEP}), so no plain key starts with it. */
const DIGEST_MARK = '~';

/**
 * The filter-safe, injective encoding of an already folded string. Letters, digits, space and
 * ASCII punctuation other than `"`, `\`, `_` and `~` stay as they are (so keys stay readable in
 * the engine's dashboard); any other code point becomes `_<hex>_`. A result longer than
 * {@link MAX_KEY_BYTES} is replaced by `~` and the SHA-256 of the folded string.
 */
export function facetKey(folded: string): string {
  let out = '';
  for (const ch of folded) {
    out += KEY_KEEP.test(ch) ? ch : `_${(ch.codePointAt(0) as number).toString(16)}_`;
  }
  if (Buffer.byteLength(out) <= MAX_KEY_BYTES) return out;
  return DIGEST_MARK + createHash('sha256').update(folded).digest('hex');
}

/** Keys of every code-point prefix of every word of `text`: what `_like` words are matched against. */
export function prefixKeys(text: string): string[] {
  const keys = new Set<string>();
  for (const word of wordSet(text)) {
    let prefix = '';
    for (const ch of word) {
      prefix += ch;
      keys.add(facetKey(prefix));
    }
  }
  return [...keys];
}

interface TextKeys {
  key: string;
  /** {@link sortChunks} of the folded value. */
  sort: string[];
  prefixes: string[];
}

/** Distinct author names and titles memoised per encoder before starting afresh. */
const MAX_MEMO_ENTRIES = 100_000;

/** Turns quotes into documents for one build, and says how many sort chunks they needed. */
export interface DocumentEncoder {
  (quote: Quote): MeiliQuoteDocument;
  /** The {@link SortChunks} of every document encoded so far. */
  sortChunks(): SortChunks;
}

/** The sort attributes of one text value: `<base>` and, for a long value, its other chunks. */
export function sortAttributesOf(base: string, chunks: readonly string[]): Record<string, string> {
  const names = chunkAttributes(base, chunks.length);
  return Object.fromEntries(chunks.map((chunk, i) => [names[i], chunk]));
}

/**
 * Returns a function that turns quotes into {@link MeiliQuoteDocument}s for one build. Keys of
 * authors, works, categories and genres are memoised: a catalogue repeats them on every quote.
 */
export function createDocumentEncoder(version: string): DocumentEncoder {
  const memo = new Map<string, TextKeys>();
  const chunked: SortChunks = {};
  const note = (field: ChunkedField, keys: TextKeys): string[] => {
    if (keys.sort.length > (chunked[field] ?? 1)) chunked[field] = keys.sort.length;
    return keys.sort;
  };
  const keysOf = (text: string, withPrefixes: boolean): TextKeys => {
    let keys = memo.get(text);
    if (keys === undefined || (withPrefixes && keys.prefixes.length === 0)) {
      const folded = fold(text);
      keys = {
        key: facetKey(folded),
        sort: sortChunks(folded),
        prefixes: withPrefixes ? prefixKeys(text) : [],
      };
      if (memo.size >= MAX_MEMO_ENTRIES) memo.clear();
      memo.set(text, keys);
    }
    return keys;
  };
  const metaOf = (quote: Quote): { tokens: string; keys: string[] } => {
    const key = `${quote.author}\u0000${quote.work}`;
    let meta = metaMemo.get(key);
    if (meta === undefined) {
      const own = [...words(quote.author), ...words(quote.work)];
      meta = { tokens: own.map(engineToken).join(' '), keys: [...new Set(own)].map(searchKey) };
      if (metaMemo.size >= MAX_MEMO_ENTRIES) metaMemo.clear();
      metaMemo.set(key, meta);
    }
    return meta;
  };
  const metaMemo = new Map<string, { tokens: string; keys: string[] }>();
  // A catalogue's texts share most of their words, and a word's token costs a UTF-8 copy.
  const tokenMemo = new Map<string, string>();
  const tokenOf = (word: string): string => {
    let token = tokenMemo.get(word);
    if (token === undefined) {
      token = engineToken(word);
      if (tokenMemo.size >= MAX_MEMO_ENTRIES) tokenMemo.clear();
      tokenMemo.set(word, token);
    }
    return token;
  };
  const encode = (quote: Quote): MeiliQuoteDocument => {
    const text = words(quote.quote);
    const textKeys = [...new Set(text)].map(searchKey);
    const meta = metaOf(quote);
    const author = keysOf(quote.author, true);
    const work = keysOf(quote.work, true);
    const category = keysOf(quote.category, false);
    const genres = quote.genre.map((g) => keysOf(g, false));
    return {
      id: quote.id,
      author: quote.author,
      author_id: quote.author_id,
      work: quote.work,
      work_id: quote.work_id,
      category: quote.category,
      genre: quote.genre,
      publish_date: quote.publish_date,
      quote_length: quote.quote_length,
      source: quote.source,
      quote: quote.quote,
      language: quote.language,
      catalogue_version: version,
      author_key: author.key,
      author_sort: '',
      ...sortAttributesOf('author_sort', note('author', author)),
      author_prefixes: author.prefixes,
      work_key: work.key,
      work_sort: '',
      ...sortAttributesOf('work_sort', note('work', work)),
      work_prefixes: work.prefixes,
      category_key: category.key,
      category_sort: '',
      ...sortAttributesOf('category_sort', note('category', category)),
      genre_keys: [...new Set(genres.map((g) => g.key))],
      genre_sort: '',
      ...sortAttributesOf('genre_sort', genres[0] === undefined ? [''] : note('genre', genres[0])),
      publish_order: publishOrder(quote.publish_date),
      q_text: text.map(tokenOf).join(' '),
      q_meta: meta.tokens,
      q_words: [...new Set([...textKeys, ...meta.keys])],
      q_text_words: textKeys,
      publish_day: publishDayOf(quote.publish_date),
    };
  };
  return Object.assign(encode, { sortChunks: () => ({ ...chunked }) });
}

/**
 * `YYYY`, `YYYY-MM` or `YYYY-MM-DD` as the integer YYYYMMDD, a missing month or day counting as
 * 00: the order of the strings exactly (a bare year before its months, a month before its days)
 * and the same ties, which a day count could not give (1851 and 1851-01-01 would tie).
 */
export function publishOrder(date: string): number {
  const [year = '0', month = '0', day = '0'] = date.split('-');
  return Number(year) * 10_000 + Number(month) * 100 + Number(day);
}

/**
 * A double-quoted filter value. Only keys and integers reach filters, so a value holding `"` or
 * `\` (which the engine's parser cannot always express) is a bug here, not user input.
 */
export function quoteFilterValue(value: string): string {
  if (/["\\]/.test(value)) throw new Error(`filter value ${JSON.stringify(value)} is not a facet key`);
  return `"${value}"`;
}

function equals(attribute: string, keys: readonly string[]): string {
  const unique = [...new Set(keys)];
  if (unique.length === 1) return `${attribute} = ${quoteFilterValue(unique[0] as string)}`;
  return `${attribute} IN [${unique.map(quoteFilterValue).join(', ')}]`;
}

function idsIn(attribute: string, ids: readonly number[]): string {
  if (ids.length === 1) return `${attribute} = ${ids[0]}`;
  return `${attribute} IN [${ids.join(', ')}]`;
}

/** One `_like` filter: every word of an alternative is a word prefix; any alternative may match. */
function prefixes(attribute: string, alternatives: readonly (readonly string[])[]): string {
  const clauses = alternatives.map((words) =>
    words.map((w) => `${attribute} = ${quoteFilterValue(facetKey(w))}`).join(' AND '),
  );
  if (clauses.length === 1) return clauses[0] as string;
  return clauses.map((c, i) => ((alternatives[i]?.length ?? 0) > 1 ? `(${c})` : c)).join(' OR ');
}

/**
 * The words of `q` over one attribute of search keys (meilisearch/search.ts): each word equal to
 * one of the document's, the last the beginning of one.
 */
export function wordsClause(attribute: string, words: readonly string[]): string {
  const last = words.at(-1) as string;
  const whole = [...new Set(words.slice(0, -1))];
  const clauses = whole.map((w) => `${attribute} = ${quoteFilterValue(searchKey(w))}`);
  clauses.push(`${attribute} STARTS WITH ${quoteFilterValue(searchKey(last))}`);
  return clauses.join(' AND ');
}

/**
 * The filter of a port {@link Filters} in the engine's array form: one expression per filter
 * parameter, ANDed by the engine; values of one parameter are ORed inside its expression. `q`
 * is a filter too: the set of its matches, whatever order they are read in. Empty when nothing
 * constrains the result.
 */
export function buildFilter(filters: Filters): string[] {
  const parts: string[] = [];
  const some = <T>(values: readonly T[] | undefined): values is readonly T[] =>
    values !== undefined && values.length > 0;
  if (some(filters.author)) parts.push(equals('author_key', filters.author.map(facetKey)));
  if (some(filters.author_id)) parts.push(idsIn('author_id', filters.author_id));
  if (some(filters.author_like)) parts.push(prefixes('author_prefixes', filters.author_like));
  if (some(filters.work)) parts.push(equals('work_key', filters.work.map(facetKey)));
  if (some(filters.work_id)) parts.push(idsIn('work_id', filters.work_id));
  if (some(filters.work_like)) parts.push(prefixes('work_prefixes', filters.work_like));
  if (some(filters.category)) parts.push(equals('category_key', filters.category.map(facetKey)));
  if (some(filters.genre)) parts.push(equals('genre_keys', filters.genre.map(facetKey)));
  parts.push(...rangeFilter(filters.ranges));
  if (some(filters.language)) parts.push(equals('language', filters.language.map(facetKey)));
  if (some(filters.exclude)) parts.push(`NOT ${idsIn('id', [...new Set(filters.exclude)])}`);
  if (some(filters.q)) parts.push(wordsClause('q_words', filters.q));
  return parts;
}

/** The range filters: one comparison per bound, on integers only. */
export function rangeFilter(ranges: Ranges | undefined): string[] {
  if (ranges === undefined) return [];
  const parts: string[] = [];
  const bound = (attribute: string, operator: '>=' | '<=', value: number | undefined) => {
    if (value === undefined) return;
    if (!Number.isSafeInteger(value)) throw new Error(`range bound ${value} is not an integer`);
    parts.push(`${attribute} ${operator} ${value}`);
  };
  bound('quote_length', '>=', ranges.min_length);
  bound('quote_length', '<=', ranges.max_length);
  bound('publish_day', '>=', ranges.published_from);
  bound('publish_day', '<=', ranges.published_to);
  return parts;
}

/** The day number the index stores for a publish date the indexer has validated. */
function publishDayOf(date: string): number {
  const day = publishDay(date);
  if (day === undefined) throw new Error(`publish_date ${JSON.stringify(date)} is not a date`);
  return day;
}

/**
 * The engine's sort of port sort keys, always ending with id (ascending unless id was given): a
 * text key by each of its chunks in `chunks`, all in its direction.
 */
export function buildSort(sort: readonly SortKey[], chunks: SortChunks = {}): string[] {
  const keys = normaliseSort(sort);
  const out = keys.flatMap((k) =>
    chunkAttributes(SORT_ATTRIBUTES[k.field], chunks[k.field as ChunkedField] ?? 1).map(
      (attribute) => `${attribute}:${k.direction}`,
    ),
  );
  if (keys.at(-1)?.field !== 'id') out.push('id:asc');
  return out;
}

/** The attributes a search retrieves: the requested fields, or every Quote field. */
export function retrievedFields(fields: readonly QuoteField[] | null): QuoteField[] {
  return [...(fields ?? QUOTE_FIELDS)];
}
/**
 * The body of `POST /indexes/{uid}/documents/fetch`: the matches of `filter` in `sort` order,
 * `limit` of them from `offset`, with an exact `total` of matches in the answer.
 */
export interface FetchRequest {
  filter?: string;
  sort?: string[];
  offset: number;
  limit: number;
  fields?: string[];
}

/** What `POST /indexes/{uid}/documents/fetch` answers. */
export interface FetchResponse<T = Record<string, unknown>> {
  results: T[];
  offset: number;
  limit: number;
  total: number;
}

/**
 * The filter of {@link buildFilter} as one expression: the parameters ANDed, each in parentheses
 * when there is more than one (a `_like` parameter ORs its values). Undefined without constraint.
 */
export function filterExpression(parts: readonly string[]): string | undefined {
  if (parts.length === 0) return undefined;
  if (parts.length === 1) return parts[0];
  return parts.map((part) => `(${part})`).join(' AND ');
}

export function withFilter(filter: string | undefined, request: FetchRequest): FetchRequest {
  return filter === undefined ? request : { filter, ...request };
}

/**
 * Pages that start before this offset are read forward at once: the engine walks at most this
 * many matches to reach them, and the same answer says how many matches there are. Deeper pages
 * first count the matches, so the page is read from its nearer end.
 */
export const SHALLOW_OFFSET = 1_000;

/** The engine's sort with every key reversed, `id` included: the exact reverse of {@link buildSort}. */
export function reverseSort(sort: readonly string[]): string[] {
  return sort.map((key) => (key.endsWith(':asc') ? `${key.slice(0, -4)}:desc` : `${key.slice(0, -5)}:asc`));
}

/** How one page is read: a request, and whether its results come in reverse order. */
export type PagePlan = { request: FetchRequest; reversed: boolean } | { pastEnd: true };

/**
 * `list`: the request of one page. Without `total` (a page before {@link SHALLOW_OFFSET}) it is
 * read forward, and the answer's total says whether it exists. With the exact `total` of
 * matches, a page past the last is answered without reading anything, and a page whose middle
 * lies in the second half of the matches is read from the other end: every sort key reversed
 * (id last, so the order stays total), at `total - end`, then the hits are reversed. The engine
 * walks the sorted matches up to the page, so no page costs more than half of them.
 */
export function pageRequest(query: ListQuery, total?: number, chunks: SortChunks = {}): PagePlan {
  const filter = filterExpression(buildFilter(query.filters));
  const sort = buildSort(query.sort, chunks);
  const fields = retrievedFields(query.fields);
  const offset = (query.page - 1) * query.limit;
  if (total === undefined) {
    return { request: withFilter(filter, { sort, offset, limit: query.limit, fields }), reversed: false };
  }
  if (offset >= total) return { pastEnd: true };
  const end = Math.min(offset + query.limit, total);
  const limit = end - offset;
  if (offset + end <= total) {
    return { request: withFilter(filter, { sort, offset, limit, fields }), reversed: false };
  }
  return {
    request: withFilter(filter, { sort: reverseSort(sort), offset: total - end, limit, fields }),
    reversed: true,
  };
}

/** The exact number of matches of a filter: no document, no sort, only the filter evaluated. */
export function countRequest(filter: string | undefined): FetchRequest {
  return withFilter(filter, { offset: 0, limit: 0 });
}

/**
 * `random`, second step: the match at `offset` (drawn uniformly in the exact total). No sort:
 * the engine's own order of documents is fixed for one catalogue, so a uniform offset is a
 * uniform quote, and the engine reaches any offset of that order by skipping whole blocks.
 */
export function pickRequest(
  filter: string | undefined,
  offset: number,
  fields: readonly QuoteField[] | null,
): FetchRequest {
  return withFilter(filter, { offset, limit: 1, fields: retrievedFields(fields) });
}

/**
 * An unfiltered page in id order when the catalogue's ids are every integer from `first` to
 * `last`: its ids are known, so it is read as the range of them (the engine looks the bounds up)
 * instead of an offset the engine walks to. Undefined for a page past the last.
 */
export function idRangeRequest(
  span: { first: number; last: number },
  direction: Direction,
  offset: number,
  limit: number,
  fields: readonly QuoteField[] | null,
): FetchRequest | undefined {
  const total = span.last - span.first + 1;
  if (offset >= total) return undefined;
  const count = Math.min(limit, total - offset);
  const low = direction === 'asc' ? span.first + offset : span.last - offset - count + 1;
  return {
    filter: `id >= ${low} AND id <= ${low + count - 1}`,
    sort: [`id:${direction}`],
    offset: 0,
    limit: count,
    fields: [...new Set([...retrievedFields(fields), 'catalogue_version'])],
  };
}

/**
 * `get`: the path and query of `GET /indexes/{uid}/documents/{id}`, a lookup of the primary key.
 */
export function getRequest(
  index: string,
  id: number,
  fields: readonly QuoteField[] | null,
): { path: string; params: { fields: string } } {
  return {
    path: `indexes/${encodeURIComponent(index)}/documents/${id}`,
    params: { fields: retrievedFields(fields).join(',') },
  };
}

/**
 * The lowest (`asc`) or highest (`desc`) id of the catalogue, with the total and the build that
 * answered: sorted by id with no filter, the engine reads the first value of the id's facet.
 */
export function idEndRequest(direction: 'asc' | 'desc'): FetchRequest {
  return { sort: [`id:${direction}`], offset: 0, limit: 1, fields: ['id', 'catalogue_version'] };
}

/**
 * `info`: the catalogue size (exact) and, from any one document, the version its build wrote.
 * One request, so both come from the same catalogue even during a swap. The first document also
 * holds the marks of the build: its engine order, and how many chunks its text sorts take.
 */
export function infoRequest(): FetchRequest {
  return { offset: 0, limit: 1, fields: ['catalogue_version', 'catalogue_order', 'catalogue_sort_chunks'] };
}

/**
 * The mark of a catalogue whose documents the engine holds in ascending id order. The engine
 * lists the matches of a filter in its own order of documents, and breaks ties of a sort the
 * same way: in such a catalogue, an `id:asc` ending a sort orders nothing the engine's own order
 * does not, yet costs it a sort of every tie (a third to half of a sorted page's work).
 */
export const ENGINE_ORDER_ID = 'id';

/**
 * `request` as read from a catalogue marked {@link ENGINE_ORDER_ID}: without the `id:asc` that
 * ends its sort (without any sort when that was all of it), and with each document's version, so
 * that an answer from another catalogue (a swap since the mark was read) is told apart. Undefined
 * for a request whose sort does not end in `id:asc` (a page read backwards, by id descending).
 */
export function inEngineOrder(request: FetchRequest): FetchRequest | undefined {
  const { sort, fields, ...rest } = request;
  if (sort?.at(-1) !== 'id:asc' || fields === undefined) return undefined;
  const keys = sort.slice(0, -1);
  return {
    ...rest,
    ...(keys.length > 0 ? { sort: keys } : {}),
    fields: fields.includes('catalogue_version') ? fields : [...fields, 'catalogue_version'],
  };
}

/**
 * A hit as the port returns it: exactly the requested fields, in {@link QUOTE_FIELDS} order,
 * whatever else the engine sent. A missing field means the index was not built by this indexer.
 */
export function projectHit(hit: object, fields: readonly QuoteField[] | null): QuoteProjection {
  const source = hit as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of fields ?? QUOTE_FIELDS) {
    const value = source[field];
    // A quote whose record gave no language has none (and the indexer always writes the others).
    if (value === undefined && field === 'language') continue;
    if (value === undefined || value === null) {
      // An index built by an earlier release lacks the fields added since: cured by the indexer.
      throw new CatalogueUnavailableError(
        `document ${String(source.id)} of the Meilisearch index has no '${field}': run the indexer to rebuild it`,
      );
    }
    // The response schema would coerce a number written as text, or a name written as a number,
    // into an answer that looks right, and fail on a list that is not one: neither is a quote the
    // indexer wrote.
    if (!FIELD_TYPES[field](value)) {
      throw new CatalogueUnavailableError(
        `document ${String(source.id)} of the Meilisearch index has a '${field}' of another type: run the indexer to rebuild it`,
      );
    }
    out[field] = value;
  }
  return out as QuoteProjection;
}

/** A whole number of zero or more, as the engine writes ids, counts and totals. */
export const isCount = (value: unknown): value is number =>
  Number.isSafeInteger(value) && (value as number) >= 0;
export const isText = (value: unknown): value is string => typeof value === 'string';
export const isTexts = (value: unknown): value is string[] => Array.isArray(value) && value.every(isText);

/** What each field of a quote the indexer wrote holds. */
const FIELD_TYPES: Record<QuoteField, (value: unknown) => boolean> = {
  id: isCount,
  author: isText,
  author_id: isCount,
  work: isText,
  work_id: isCount,
  category: isText,
  genre: isTexts,
  publish_date: isText,
  quote_length: isCount,
  source: isText,
  quote: isText,
  language: isText,
};

/** Index uid of a build: the live name plus a stamp, within the engine's uid alphabet. */
export function buildIndexUid(live: string, stamp: string): string {
  return `${live}_build_${stamp}`;
}

/** Prefix shared by the build indexes of a live index (left over when a build was killed). */
export function buildIndexPrefix(live: string): string {
  return `${live}_build_`;
}

// ---- Facets (`/quotes/facets`) -----------------------------------------------------------------

/**
 * The attribute whose facet distribution counts each facet field: the same keys the equality
 * filters compare, so a value's count is the total of the filter on it.
 */
export const FACET_ATTRIBUTES: Record<FacetField, string> = {
  author: 'author_key',
  work: 'work_key',
  category: 'category_key',
  genre: 'genre_keys',
  language: 'language',
};

/** The body of `POST /indexes/{uid}/search` for facet counts. */
export interface FacetSearchRequest {
  filter?: string;
  facets: string[];
  page: 1;
  hitsPerPage: 0;
}

/** What that search answers, as far as facets go. */
export interface FacetSearchResponse {
  totalHits: number;
  facetDistribution?: Record<string, Record<string, number>>;
}

/**
 * `facets`: no hit, the exact number of matches (`totalHits`, which `page`/`hitsPerPage` give),
 * and the distribution of every requested facet's keys over the matches. No `q`: a placeholder
 * search matches what the filter matches.
 */
export function facetSearchRequest(
  filter: string | undefined,
  fields: readonly FacetField[],
): FacetSearchRequest {
  const request: FacetSearchRequest = {
    facets: fields.map((field) => FACET_ATTRIBUTES[field]),
    page: 1,
    hitsPerPage: 0,
  };
  return filter === undefined ? request : { filter, ...request };
}

/**
 * The folded string a {@link facetKey} encodes, or undefined for a digest key (a long value,
 * whose folded form only a document holding it can tell).
 */
export function decodeFacetKey(key: string): string | undefined {
  if (key.startsWith(DIGEST_MARK)) return undefined;
  return key.replace(/_([0-9a-f]+)_/g, (_match, hex: string) =>
    String.fromCodePoint(Number.parseInt(hex, 16)),
  );
}

/**
 * The display value of a facet key (the port's rule: the spelling of the lowest-id quote whose
 * value folds to it): the lowest-id quote holding the key, with the field to read it from and
 * the catalogue version that answered.
 */
export function displayRequest(field: FacetField, key: string): FetchRequest {
  return {
    filter: `${FACET_ATTRIBUTES[field]} = ${quoteFilterValue(key)}`,
    sort: ['id:asc'],
    offset: 0,
    limit: 1,
    fields: [field, 'catalogue_version'],
  };
}

/** The display value of `key` in a quote: the field itself, or the quote's first genre holding it. */
export function displayValue(
  field: FacetField,
  key: string,
  hit: Record<string, unknown>,
): string | undefined {
  const value = hit[field];
  if (field !== 'genre') return typeof value === 'string' ? value : undefined;
  if (!Array.isArray(value)) return undefined;
  return value.find((genre): genre is string => typeof genre === 'string' && facetKey(fold(genre)) === key);
}

/**
 * Matches up to this many are sampled from one read of all their ids (then one read of the drawn
 * quotes by id): the filter is evaluated twice, where reading each drawn offset would evaluate it
 * once per offset. More matches are sampled offset by offset.
 */
export const SAMPLE_SCAN = 10_000;

/**
 * Drawn offsets at most this far apart are read in one request (the engine walks a short run
 * of documents for the price of one request).
 */
export const SAMPLE_GAP = 16;

/**
 * `randomSample`: the ids of the first {@link SAMPLE_SCAN} matches in the engine's own order (the
 * order offsets count in), with the exact total and the build that answered.
 */
export function sampleScanRequest(filter: string | undefined, limit = SAMPLE_SCAN): FetchRequest {
  return withFilter(filter, { offset: 0, limit, fields: ['id', 'catalogue_version'] });
}

/**
 * `randomSample` by rejection: which of the candidate `ids` match `filter`, with `fields`. One
 * evaluation of the filter for as many candidates as the request names.
 */
export function sampleCandidatesRequest(
  filter: string | undefined,
  ids: readonly number[],
  fields: readonly string[],
): FetchRequest {
  for (const id of ids) {
    if (!Number.isSafeInteger(id)) throw new Error(`id ${id} is not an integer`);
  }
  const among = idsIn('id', ids);
  return {
    filter: filter === undefined ? among : `(${filter}) AND ${among}`,
    offset: 0,
    limit: ids.length,
    fields: [...fields],
  };
}

/** `randomSample`, second read when every id is known: the drawn quotes by id. */
export function sampleByIdsRequest(
  ids: readonly number[],
  fields: readonly QuoteField[] | null,
): FetchRequest {
  for (const id of ids) {
    if (!Number.isSafeInteger(id)) throw new Error(`id ${id} is not an integer`);
  }
  return {
    filter: idsIn('id', ids),
    offset: 0,
    limit: ids.length,
    fields: [...new Set([...retrievedFields(fields), 'id', 'catalogue_version'])],
  };
}

/**
 * `randomSample` on many matches: runs of drawn offsets, each read in one request (offsets at most
 * {@link SAMPLE_GAP} apart share a run), in the engine's own order as {@link pickRequest} reads.
 */
export function sampleRunRequests(
  filter: string | undefined,
  offsets: readonly number[],
  fields: readonly QuoteField[] | null,
): { request: FetchRequest; offset: number }[] {
  const sorted = [...offsets].sort((a, b) => a - b);
  const runs: { first: number; last: number }[] = [];
  for (const offset of sorted) {
    const run = runs.at(-1);
    if (run !== undefined && offset - run.last <= SAMPLE_GAP) run.last = offset;
    else runs.push({ first: offset, last: offset });
  }
  const wanted = [...new Set([...retrievedFields(fields), 'catalogue_version'])];
  return runs.map(({ first, last }) => ({
    offset: first,
    request: withFilter(filter, { offset: first, limit: last - first + 1, fields: wanted }),
  }));
}

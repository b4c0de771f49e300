/**
 * The catalogue port: the one definition of the quote index that the service reads and the
 * indexer writes. Every backend (embedded SQLite, Meilisearch) implements {@link CatalogueIndex}
 * and passes the same behaviour suite (`port.suite.ts`).
 *
 * Text semantics live here and nowhere else: {@link fold} and {@link words} are exactly the
 * contract's "folded form" and "words" (docs/api.md#text-matching), and backends store keys
 * computed by these functions at index time so that all of them agree.
 */

import { CodedError } from '../coded-error.ts';
import type { Directory } from './authors.ts';
import { QUOTE_FIELDS, type Quote, type QuoteField, type SortField } from './fields.ts';
import { isLanguageCode, LANGUAGE_EXPECTED } from './language.ts';
import { inRanges, type Ranges } from './ranges.ts';

export { QUOTE_FIELDS, type Quote, type QuoteField, SORT_FIELDS, type SortField } from './fields.ts';

/** A quote projected to the requested fields: exactly those keys, in {@link QUOTE_FIELDS} order. */
export type QuoteProjection = Partial<Quote>;

export type Direction = 'asc' | 'desc';

/**
 * One sort key. Text keys (`author`, `work`, `category`, `genre`) order by their folded form,
 * compared by Unicode code point; `genre` by the first genre of the list; `publish_date` by its
 * raw string. Backends always append `id asc` as the final tie-breaker, so it never needs to be
 * given here (and {@link normaliseSort} drops keys that can no longer change the order).
 */
export interface SortKey {
  field: SortField;
  direction: Direction;
}

/**
 * Filters, already folded and validated. Every present property must hold (AND across
 * properties); within one property any value may match (OR). An absent or empty array means
 * "no constraint". Built only by {@link normaliseFilters} (or the HTTP edge through it).
 */
export interface Filters {
  /** Folded author names; matches when fold(quote.author) equals one of them. */
  author?: string[];
  /** Folded work titles; matches when fold(quote.work) equals one of them. */
  work?: string[];
  /** Folded categories. */
  category?: string[];
  /** Folded genres; matches when any element of fold(quote.genre[i]) equals one of them. */
  genre?: string[];
  author_id?: number[];
  work_id?: number[];
  /**
   * Word-prefix alternatives for the author name. Each inner array is one requested value split
   * into {@link words} (never empty); it matches when every word of it is the beginning of some
   * word of the author's name. The outer array is OR.
   */
  author_like?: string[][];
  /** As {@link Filters.author_like}, on the work title. */
  work_like?: string[][];
  /**
   * Full-text search (`q`): the words of the query in order, never empty. Matches when every word
   * equals a word of the quote's text, its author or its work, except the last, which may also be
   * the beginning of such a word. Built only by `parseSearch` (search.ts).
   */
  q?: string[];
  /** Bounds on quote_length and on publish_date (as day numbers): see ranges.ts. */
  ranges?: Ranges;
  /** ISO 639-1 codes (lower case); matches when quote.language equals one of them. */
  language?: string[];
  /**
   * Ids no answer may hold (`/quotes/random?exclude=`): the quotes with them count as not
   * matching. Only random draws take it; at most {@link MAX_EXCLUDE} ids.
   */
  exclude?: number[];
}
export const FILTER_NAMES = [
  'author',
  'author_id',
  'author_like',
  'work',
  'work_id',
  'work_like',
  'category',
  'genre',
  'language',
] as const;
export type FilterName = (typeof FILTER_NAMES)[number];

/** A list request: one page of the quotes matching `filters`, ordered by `sort` then id. */
export interface ListQuery {
  filters: Filters;
  /** Primary key first. Empty means by id ascending. */
  sort: SortKey[];
  /** 1-based page number. */
  page: number;
  /** Items per page, 1..{@link MAX_LIMIT}. */
  limit: number;
  /** Fields to return, without duplicates, in {@link QUOTE_FIELDS} order; null for all. */
  fields: readonly QuoteField[] | null;
  /**
   * With `filters.q` and no order asked for: relevance order (search.ts says exactly which),
   * instead of `sort`. Ignored without `filters.q`.
   */
  ranked?: boolean;
}

/**
 * A page of results. `total` is the exact number of quotes matching the filters (never an
 * estimate). `items` is empty when the page lies past the last one; the HTTP layer turns that
 * (and `total === 0`) into 404.
 */
export interface ListResult {
  items: QuoteProjection[];
  total: number;
}

/**
 * What surrounds the items of a list answer written as JSON (see CatalogueIndex.listJson): the
 * text before the array, and the text after it, which depends on the page (and may throw, for
 * the HTTP layer's "nothing found" answers).
 */
export interface JsonEnvelope {
  head: string;
  tail(total: number, count: number): string;
}

/** What a backend knows about the catalogue it serves. */
export interface CatalogueInfo {
  /**
   * Changes whenever the catalogue is replaced (an opaque string written by the indexer). Cheap
   * to read: the HTTP layer mixes it into every ETag.
   */
  version: string;
  /** Number of quotes. */
  count: number;
}

/** Fields `/quotes/facets` counts values of: the text filters' fields. */
export const FACET_FIELDS = ['author', 'work', 'category', 'genre', 'language'] as const;
export type FacetField = (typeof FACET_FIELDS)[number];
/** Most ids one {@link CatalogueIndex.firstMatch} call takes. */
export const MAX_FIRST_MATCH_IDS = 1_000;

/** Default and largest number of values listed per facet. */
export const DEFAULT_FACET_LIMIT = 20;
export const MAX_FACET_LIMIT = 100;

/**
 * A facet request: for each of `facets`, the values among the quotes matching `filters`. Shaped
 * like {@link ListQuery} (filters beside what is asked of the matches), so that whatever narrows
 * a list narrows facets the same way.
 */
export interface FacetQuery {
  filters: Filters;
  /** Without duplicates, in {@link FACET_FIELDS} order; never empty. */
  facets: readonly FacetField[];
  /** Values per facet, 1..{@link MAX_FACET_LIMIT}. */
  limit: number;
}

/**
 * One facet value: the matching quotes whose field equals it (folded, as the filter of the same
 * name compares; `genre`: any element does), counted exactly. `value` is the spelling of the
 * quote with the lowest id among all the catalogue's quotes whose value folds to it (`genre`:
 * that quote's first genre that does), whatever the filters: one spelling per folded value, the
 * same on every backend and for every request on one catalogue.
 */
export interface FacetValue {
  value: string;
  count: number;
}

/**
 * The answer to a {@link FacetQuery}: `total`, the exact number of matching quotes, and per
 * requested facet at most `limit` values, by count descending, then by folded value (code point
 * order). Nothing matching is `total === 0` with empty lists, not an error.
 */
export interface FacetResult {
  total: number;
  facets: Partial<Record<FacetField, FacetValue[]>>;
}

/**
 * Orders facet values as {@link FacetResult} says and keeps the first `limit`: counts descending,
 * then folded values by code point. `folded` gives each value's folded form.
 */
export function rankFacetValues<T extends { count: number }>(
  values: T[],
  folded: (value: T) => string,
  limit: number,
): T[] {
  return values.sort((a, b) => b.count - a.count || compareCodePoints(folded(a), folded(b))).slice(0, limit);
}

/**
 * The catalogue index as the service reads it.
 *
 * Errors: a backend throws {@link CatalogueUnavailableError} when its engine cannot be reached,
 * times out, or holds no catalogue yet (the HTTP layer answers 503). Any other thrown error is a
 * bug (500). "Nothing found" is never an error: it is `null` or `total === 0`.
 *
 * Live reload: when the indexer replaces the catalogue, a backend serves the new one within 5 s
 * without restart, and every single call sees either the old catalogue or the new one, never a mix.
 */
export interface CatalogueIndex {
  /** Backend name for logs and metrics (`sqlite`, `meilisearch`). */
  readonly kind: string;
  /** Current catalogue version and size; throws CatalogueUnavailableError when there is none. */
  info(): Promise<CatalogueInfo>;
  list(query: ListQuery): Promise<ListResult>;
  /**
   * Optional: `list` with the items already serialised, for a backend that can write them
   * faster than objects are serialised (the embedded engine). The same answer as `list`, as the
   * UTF-8 bytes of `envelope.head`, the JSON array of the page's quotes, then `envelope.tail`.
   * The array is byte for byte what the list route's response serialiser makes of
   * `list(query).items`: fields in QUOTE_FIELDS order, strings escaped as JSON.stringify escapes
   * them, no white space. A backend that cannot write a page so (Meilisearch, for an answer it
   * cannot pass through as the engine wrote it) returns the page as `list` would instead, and the
   * route serialises it.
   */
  listJson?(query: ListQuery, envelope: JsonEnvelope): Promise<Buffer | ListResult>;
  /** One quote by id, or null when no quote has it. */
  get(id: number, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null>;
  /**
   * Optional: `get` with the quote already serialised, for a backend that has it as bytes
   * (Meilisearch passes the engine's document through): byte for byte what the route's
   * serialiser makes of `get(id, fields)`, in a buffer of its own. A quote it cannot give so
   * comes as `get` gives it, and the route serialises it.
   */
  getJson?(id: number, fields: readonly QuoteField[] | null): Promise<Buffer | QuoteProjection | null>;
  /** One quote chosen uniformly at random among those matching, or null when none matches. */
  random(filters: Filters, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null>;
  /**
   * The first of `ids`, in their order, whose quote matches `filters`, or null when none does
   * (an id no quote has is passed over). At most {@link MAX_FIRST_MATCH_IDS} ids: one evaluation
   * of the filters answers for all of them, which makes drawing candidates and keeping the first
   * match cheap where the matches are many.
   */
  firstMatch(
    filters: Filters,
    ids: readonly number[],
    fields: readonly QuoteField[] | null,
  ): Promise<QuoteProjection | null>;
  /** Facet counts of the quotes matching the query's filters (see {@link FacetResult}). */
  facets(query: FacetQuery): Promise<FacetResult>;
  /**
   * Up to `count` distinct quotes drawn uniformly without replacement among those matching, in
   * draw order (every ordered selection equally likely); all of them when fewer match, none when
   * none matches. `count` is 1..MAX_SAMPLE (sample.ts).
   */
  randomSample(
    filters: Filters,
    fields: readonly QuoteField[] | null,
    count: number,
  ): Promise<QuoteProjection[]>;
  /**
   * Optional: the failure of the backend's last engine request when none succeeded since (a
   * remote engine found down, refusing or too slow), so that readiness follows it at once rather
   * than at the next read. Backends without a remote engine leave it out.
   */
  recentFailure?(): CatalogueUnavailableError | undefined;
  /** Authors and works of the catalogue (authors.ts), from the same catalogue version as the quotes. */
  directory?(): Directory;
  /** Releases connections, timers and file handles. Idempotent. */
  close(): Promise<void>;
}

/** The engine is unreachable, timed out, or holds no catalogue: the request may succeed later. */
export class CatalogueUnavailableError extends CodedError {
  override name = 'CatalogueUnavailableError';
  readonly code = 'catalogue_unavailable';
  /** Whole seconds after which the engine said it would take the request (it sheds load). */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, options?: ErrorOptions & { retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export const DEFAULT_LIMIT = 5;
export const MAX_LIMIT = 100;
/** At most this many values for one repeated filter (docs/api.md#listing-quotes). */
export const MAX_FILTER_VALUES = 20;
/** Longest accepted parameter value, in characters. */
export const MAX_VALUE_LENGTH = 200;

const MARKS = /\p{M}/gu;
// Unicode's White_Space property, which the engines use too. JavaScript's \s and trim() differ
// from it both ways: they lack U+0085 (NEXT LINE) and take U+FEFF (a format character) as space.
const SPACES = /\p{White_Space}+/gu;
const WORD = /[\p{L}\p{N}]+/gu;

/**
 * The contract's folded form: Unicode NFKD, combining marks (category M) removed, lower-cased,
 * runs of white space collapsed to one space, trimmed. `Brontë` → `bronte`; `ø` stays `ø`.
 */
export function fold(text: string): string {
  const spaced = text.normalize('NFKD').replace(MARKS, '').toLowerCase().replace(SPACES, ' ');
  // Every run of white space is one ' ' now: trimming is dropping one at either end.
  const start = spaced.startsWith(' ') ? 1 : 0;
  const end = spaced.endsWith(' ') ? spaced.length - 1 : spaced.length;
  return start === 0 && end === spaced.length ? spaced : spaced.slice(start, Math.max(start, end));
}

/** The maximal runs of letters and digits of the folded form: `Jean-Paul O'Neil` → jean, paul, o, neil. */
export function words(text: string): string[] {
  return fold(text).match(WORD) ?? [];
}

/** Unique words of a text, for word-prefix indexes. */
export function wordSet(text: string): string[] {
  return [...new Set(words(text))];
}

/** Compares strings by Unicode code point (UTF-16 comparison differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** Number of Unicode code points of a string (the unit of `quote_length`). */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Raw filter values as they arrive from a request, each a list in arrival order. */
export type RawFilters = Partial<Record<FilterName, readonly string[]>>;

/**
 * Folds and de-duplicates raw filter values into {@link Filters}. Throws {@link QueryError} for a
 * value that cannot match by construction of the contract (an id that is not an integer ≥ 1, a
 * `_like` value with no word, an empty or oversized value, too many values).
 */
export function normaliseFilters(raw: RawFilters): Filters {
  const filters: Filters = {};
  for (const name of FILTER_NAMES) {
    const values = raw[name];
    if (values === undefined || values.length === 0) continue;
    if (values.length > MAX_FILTER_VALUES) {
      throw new QueryError(name, `${name} accepts at most ${MAX_FILTER_VALUES} values, got ${values.length}`);
    }
    for (const value of values) checkValue(name, value);
    switch (name) {
      case 'author_id':
      case 'work_id':
        filters[name] = distinctInOrder(values.map((v) => parseIdValue(name, v)));
        break;
      case 'language':
        filters.language = distinctInOrder(values.map(parseLanguageValue));
        break;
      case 'author_like':
      case 'work_like':
        filters[name] = values.map((v) => {
          const w = wordSet(v);
          if (w.length === 0) {
            throw new QueryError(name, `${name} must contain at least one letter or digit, got '${v}'`);
          }
          return w;
        });
        break;
      default: {
        const folded = values.map(fold);
        if (folded.some((v) => v === '')) {
          // Folding removes both, so such a value could only ever match a label the indexer refuses.
          throw new QueryError(
            name,
            `${name} must hold more than white space and combining marks; expected a text of 1 to ${MAX_VALUE_LENGTH} characters`,
          );
        }
        filters[name] = distinctInOrder(folded);
      }
    }
  }
  return filters;
}

/**
 * Canonical sort keys: drops keys after the first `id` key (id is unique, so later keys cannot
 * change the order) and repeated fields (a repeated key only re-compares equal values).
 */
export function normaliseSort(keys: readonly SortKey[]): SortKey[] {
  const out: SortKey[] = [];
  const seen = new Set<SortField>();
  for (const key of keys) {
    if (seen.has(key.field)) continue;
    seen.add(key.field);
    out.push({ field: key.field, direction: key.direction });
    if (key.field === 'id') break;
  }
  return out;
}

/** Fields without duplicates, in {@link QUOTE_FIELDS} order; null stays null (all fields). */
export function normaliseFields(fields: readonly QuoteField[] | null): readonly QuoteField[] | null {
  if (fields === null) return null;
  const wanted = new Set(fields);
  return QUOTE_FIELDS.filter((f) => wanted.has(f));
}

/** Number of pages for a total: ceil(total / limit); 0 when nothing matches. */
export function totalPages(total: number, limit: number): number {
  return Math.ceil(total / limit);
}

/** A value of a query that breaks the contract's rules; `parameter` names the culprit. */
export class QueryError extends CodedError {
  override name = 'QueryError';
  readonly code = 'bad_parameter';
  readonly parameter: string;
  constructor(parameter: string, message: string) {
    super(message);
    this.parameter = parameter;
  }
}

function checkValue(name: string, value: string): void {
  if (value.length === 0) throw new QueryError(name, `${name} must not be empty`);
  const tooLong = lengthProblem(name, value);
  if (tooLong !== undefined) throw new QueryError(name, tooLong);
}

/** Why `value` is longer than {@link MAX_VALUE_LENGTH}, or undefined when it is not. */
export function lengthProblem(name: string, value: string): string | undefined {
  // Characters are code points, as the indexer counts them: a 200-character name written in
  // astral letters must stay searchable. UTF-16 length is an upper bound, so it gates the count.
  if (value.length <= MAX_VALUE_LENGTH) return undefined;
  const length = codePointLength(value);
  return length > MAX_VALUE_LENGTH
    ? `${name} must be at most ${MAX_VALUE_LENGTH} characters, got ${length}`
    : undefined;
}

/** A decimal integer ≥ 1, without sign or leading zeros, of any size: how every id, page and limit is written. */
export const DECIMAL_INTEGER = /^[1-9][0-9]*$/;

/** What to add to the message refusing `value` as an integer: why `007` is refused, else nothing. */
export function integerHint(value: string): string {
  return /^0+[1-9][0-9]*$/.test(value) ? ' (written without leading zeros)' : '';
}

/**
 * An id filter value: any decimal integer ≥ 1. One beyond the safe integer range is valid but no
 * quote can have it, so it becomes 0, an id that matches nothing (ids are ≥ 1).
 */
function parseIdValue(name: string, value: string): number {
  if (!DECIMAL_INTEGER.test(value))
    throw new QueryError(name, `${name} must be an integer ≥ 1${integerHint(value)}, got '${value}'`);
  const id = Number(value);
  return Number.isSafeInteger(id) ? id : NO_ID;
}

/** A `language` value: any case of an ISO 639-1 code, compared in lower case. */
function parseLanguageValue(value: string): string {
  const code = value.toLowerCase();
  if (!isLanguageCode(code)) {
    throw new QueryError('language', `language must be ${LANGUAGE_EXPECTED}, got '${value.slice(0, 40)}'`);
  }
  return code;
}

/** Most ids `exclude` takes. */
export const MAX_EXCLUDE = 100;

/** An id no quote has: filters on it match nothing. */
export const NO_ID = 0;

/** Distinct values in the order first given: repeated values are one value, order kept. */
function distinctInOrder<T>(values: T[]): T[] {
  return [...new Set(values)];
}

/** Reference matcher of the contract's filters, used by tests and in-memory checks. */
export function matches(quote: Quote, filters: Filters): boolean {
  const has = <T>(values: T[] | undefined, test: (v: T) => boolean) =>
    values === undefined || values.length === 0 || values.some(test);
  const prefixes = (alternatives: string[][] | undefined, text: string) => {
    if (alternatives === undefined || alternatives.length === 0) return true;
    const own = words(text);
    return alternatives.some((alt) => alt.every((p) => own.some((w) => w.startsWith(p))));
  };
  return (
    has(filters.author, (v) => fold(quote.author) === v) &&
    has(filters.work, (v) => fold(quote.work) === v) &&
    has(filters.category, (v) => fold(quote.category) === v) &&
    has(filters.genre, (v) => quote.genre.some((g) => fold(g) === v)) &&
    has(filters.author_id, (v) => quote.author_id === v) &&
    has(filters.work_id, (v) => quote.work_id === v) &&
    prefixes(filters.author_like, quote.author) &&
    prefixes(filters.work_like, quote.work) &&
    inRanges(quote, filters.ranges) &&
    has(filters.language, (v) => quote.language === v) &&
    !(filters.exclude ?? []).includes(quote.id)
  );
}

/**
 * Writes a new catalogue beside the live one. Nothing is visible to readers until
 * {@link CatalogueBuilder.commit}, which replaces the live catalogue atomically (SQLite: rename
 * of a finished file; Meilisearch: index swap). On any failure call
 * {@link CatalogueBuilder.abort}: the live catalogue stays exactly as it was.
 */
export interface CatalogueBuilder {
  /** Adds validated, complete quotes; ids are unique across the whole build. */
  add(quotes: readonly Quote[]): Promise<void>;
  /** Makes the built catalogue live and returns its info (the new version and count). */
  commit(): Promise<CatalogueInfo>;
  /** Discards the build. Idempotent; safe after a failed commit. */
  abort(): Promise<void>;
}

/** The slice of a pino/Fastify logger that backends use. */
export interface CatalogueLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

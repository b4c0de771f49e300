/**
 * The HTTP edge of every quote route: the raw query string becomes the port's typed, validated,
 * normalised query (docs/api.md#listing-quotes to #the-genre-form). Nothing past this module sees
 * a raw string, and every rule that can fail here answers 400 with `details` naming the parameter
 * and what it accepts.
 *
 * The query string is parsed by hand rather than by Fastify's parser because the contract needs
 * what a generic parser loses: the arrival order of `sort`/`order` values, repeats of
 * single-valued parameters, and a 400 (not a silent fallback) for broken percent-encoding.
 */

import { LANGUAGE_EXPECTED } from './catalogue/language.ts';
import {
  DECIMAL_INTEGER,
  DEFAULT_LIMIT,
  type Direction,
  FACET_FIELDS,
  FILTER_NAMES,
  type FilterName,
  type Filters,
  integerHint,
  type ListQuery,
  lengthProblem,
  MAX_EXCLUDE,
  MAX_LIMIT,
  MAX_VALUE_LENGTH,
  normaliseFields,
  normaliseFilters,
  normaliseSort,
  QUOTE_FIELDS,
  QueryError,
  type QuoteField,
  type RawFilters,
  SORT_FIELDS,
  type SortField,
  type SortKey,
} from './catalogue/port.ts';
import { parseRanges, RANGE_EXPECTED, RANGE_NAMES, type RangeName, rangesKey } from './catalogue/ranges.ts';
import { MAX_SAMPLE } from './catalogue/sample.ts';
import { MAX_QUERY_WORD_LENGTH, MAX_QUERY_WORDS, parseSearch } from './catalogue/search.ts';
import { badRequest } from './errors.ts';

/**
 * Longest accepted query string (after `?`, before decoding): room for one filter at its
 * contract limits in any script (20 values of 200 characters of three UTF-8 bytes, each byte
 * encoded as %XX: 36,120), with others beside it. The server's header limit is above it
 * (http-server.ts), so that this check, which names the query, is the one that answers.
 */
export const MAX_QUERY_LENGTH = 60_000;
/**
 * Highest page number sent to a backend: it keeps `(page - 1) * limit` an exact integer for
 * every backend. A larger page is still a valid page (the contract sets no upper bound) and lies
 * past the last page of any catalogue of fewer than a billion quotes: it is queried as
 * `MAX_PAGE + 1`, so that its 404 can name the last page.
 */
export const MAX_PAGE = 1_000_000_000;
/** At most this many `sort` keys (and `order` values): there are only nine distinct keys. */
export const MAX_SORT_KEYS = 20;
/** Default page size of `/api/v1/quotes`. */
export const V1_DEFAULT_LIMIT = 10;
/** Keys `orderby` accepts on `/api/v1/quotes`. */
export const V1_ORDER_FIELDS = ['author', 'work', 'genre', 'publish_date', 'quote_length'] as const;
/** Fields every `/api/v1/quotes` item holds, in response order. */
export const V1_FIELDS: readonly QuoteField[] = normaliseFields([
  'id',
  'author',
  'work',
  'genre',
  'publish_date',
  'quote_length',
  'source',
  'quote',
]) as readonly QuoteField[];

const V1_PATH = '/api/v1/quotes';

/** Decoded query parameters: name → values in arrival order. Names keep their first-arrival order. */
export type RawQuery = Map<string, string[]>;

/** What a request for one quote or a random quote asks for. */
export interface RandomQuery {
  filters: Filters;
  fields: readonly QuoteField[] | null;
  /** `/quotes/random?count=N`: how many distinct quotes to draw (an array answer); absent: one. */
  count?: number;
}

const LIST_PARAMS = [
  ...FILTER_NAMES,
  ...RANGE_NAMES,
  'q',
  'sort',
  'order',
  'page',
  'limit',
  'fields',
] as const;
const RANDOM_PARAMS = [...FILTER_NAMES, ...RANGE_NAMES, 'q', 'count', 'exclude', 'fields'] as const;
const ID_PARAMS = ['fields'] as const;
const TODAY_PARAMS = [...FILTER_NAMES, ...RANGE_NAMES, 'fields'] as const;
const V1_PARAMS = ['genre', 'page', 'limit', 'orderby', 'sort'] as const;
/** Names some route accepts: elsewhere they are "not accepted here" rather than unknown. */
const KNOWN_PARAMS: ReadonlySet<string> = new Set([...LIST_PARAMS, ...RANDOM_PARAMS, ...V1_PARAMS]);

const list = (values: readonly string[]) => values.join(', ');

/** What each parameter accepts, as the second half of every 400 about it. */
const EXPECTED: Record<string, string> = {
  author_id: 'an integer ≥ 1',
  work_id: 'an integer ≥ 1',
  sort: `one or more of ${list(SORT_FIELDS)}, comma-separated or repeated`,
  order: 'asc or desc, once for every sort key or once per sort key',
  page: 'an integer ≥ 1',
  limit: `an integer from 1 to ${MAX_LIMIT}`,
  fields: `one or more of ${list(QUOTE_FIELDS)}, comma-separated`,
  orderby: `one of ${list(V1_ORDER_FIELDS)}`,
  facet: `one or more of ${list(FACET_FIELDS)}, comma-separated or repeated`,
  q: `words to search for, up to ${MAX_QUERY_WORDS} of at most ${MAX_QUERY_WORD_LENGTH} characters each`,
  ...RANGE_EXPECTED,
  count: `an integer from 1 to ${MAX_SAMPLE}`,
  exclude: `up to ${MAX_EXCLUDE} ids (integers ≥ 1), comma-separated`,
  language: LANGUAGE_EXPECTED,
};
/** On `/api/v1/quotes`, `sort` is the direction: what it accepts there. */
const V1_EXPECTED: Record<string, string> = { ...EXPECTED, sort: 'asc or desc' };
const expected = (name: string, path?: string) =>
  (path === V1_PATH ? V1_EXPECTED : EXPECTED)[name] ?? `a text of 1 to ${MAX_VALUE_LENGTH} characters`;

/**
 * Splits and decodes the query string of a request URL (`request.raw.url`). `+` and `%20` decode
 * to a space; empty `&&` segments are skipped. Throws a 400 for a query string longer than
 * {@link MAX_QUERY_LENGTH}, a name or value whose percent-encoding is not valid UTF-8, and a
 * parameter without a name.
 */
export function readQuery(url: string): RawQuery {
  const params: RawQuery = new Map();
  const start = url.indexOf('?');
  if (start === -1) return params;
  // A fragment is never part of the query (clients do not send one; the router ignores it too).
  const hash = url.indexOf('#', start);
  const raw = url.slice(start + 1, hash === -1 ? undefined : hash);
  if (raw.length > MAX_QUERY_LENGTH) {
    throw badRequest(`the query string must be at most ${MAX_QUERY_LENGTH} characters, got ${raw.length}`);
  }
  for (const pair of raw.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    const name = decode(rawName);
    if (name === undefined) {
      throw badRequest(
        `the parameter name '${shorten(rawName)}' has invalid percent-encoding; encode each UTF-8 byte as %XX`,
      );
    }
    if (name === '')
      throw badRequest(`every query parameter needs a name before '=', got '${shorten(pair)}'`);
    const value = decode(rawValue);
    if (value === undefined) {
      throw badRequest(
        `${shorten(name)} has invalid percent-encoding in '${shorten(rawValue)}'; encode each UTF-8 byte as %XX and a literal % as %25`,
      );
    }
    const values = params.get(name);
    if (values === undefined) params.set(name, [value]);
    else values.push(value);
  }
  return params;
}

/** `+` is a space; `%XX` sequences must form valid UTF-8. Undefined when they do not. */
function decode(text: string): string | undefined {
  return decodePercent(text.includes('+') ? text.replaceAll('+', ' ') : text);
}

/** Text with its `%XX` sequences decoded; undefined when they do not form valid UTF-8. */
export function decodePercent(text: string): string | undefined {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** Echoes client input in details without letting a huge value flood the response. */
export function shorten(text: string): string {
  return text.length <= 40 ? text : `${text.slice(0, 40)}…`;
}

/**
 * The structural rules shared by every route, applied in arrival order: only `allowed` names, no
 * empty value, no NUL character, no value over {@link MAX_VALUE_LENGTH} characters, and
 * single-valued parameters at most once.
 */
export function checkParams(
  params: RawQuery,
  path: string,
  allowed: readonly string[],
  repeatable: ReadonlySet<string>,
) {
  for (const [name, values] of params) {
    if (!allowed.includes(name)) {
      const what = KNOWN_PARAMS.has(name)
        ? `${name} is not accepted on ${path}`
        : `unknown parameter '${shorten(name)}'`;
      throw badRequest(`${what}; ${path} accepts ${list(allowed)}`);
    }
    for (const value of values) {
      if (value === '') throw badRequest(`${name} must not be empty; expected ${expected(name, path)}`);
      if (value.includes('\0')) throw badRequest(`${name} must not contain NUL characters`);
      // Section 4 bounds every value, not only filter values: a 250-digit page is a 400, not a
      // page past the last. A list of ids is bounded by its own count instead.
      const tooLong = name === 'exclude' ? excludeLengthProblem(value) : lengthProblem(name, value);
      if (tooLong !== undefined) throw badRequest(tooLong);
    }
    if (values.length > 1 && !repeatable.has(name)) {
      throw badRequest(
        `${name} must be given at most once, got ${values.length} values; expected ${expected(name, path)}`,
      );
    }
  }
}

const FILTERS_REPEATABLE: ReadonlySet<string> = new Set(FILTER_NAMES);
const LIST_REPEATABLE: ReadonlySet<string> = new Set([...FILTER_NAMES, 'sort', 'order']);
const NONE_REPEATABLE: ReadonlySet<string> = new Set();
const V1_REPEATABLE: ReadonlySet<string> = new Set(['genre']);

/** Filters through the port's own rules (folding, ids, word prefixes, counts, lengths). */
export function readFilters(params: RawQuery, names: readonly FilterName[] = FILTER_NAMES): Filters {
  const raw: RawFilters = {};
  for (const name of names) {
    const values = params.get(name);
    if (values !== undefined) raw[name] = values;
  }
  try {
    const filters = normaliseFilters(raw);
    const ranges = names === FILTER_NAMES ? readRanges(params) : undefined;
    if (ranges !== undefined) filters.ranges = ranges;
    return filters;
  } catch (error) {
    if (error instanceof QueryError) throw badRequest(error.message);
    throw error;
  }
}

/** The range filters (single-valued; checkParams has refused repeats and empty values). */
function readRanges(params: RawQuery) {
  const raw: Partial<Record<RangeName, string>> = {};
  for (const name of RANGE_NAMES) {
    const value = params.get(name)?.[0];
    if (value !== undefined) raw[name] = value;
  }
  return parseRanges(raw);
}

/** Comma-separated and repeated values as one list of tokens, in order; an empty token is a 400. */
export function tokens(params: RawQuery, name: string, max: number): string[] {
  const values = params.get(name);
  if (values === undefined) return [];
  const out: string[] = [];
  for (const value of values) {
    for (const token of value.split(',')) {
      if (token === '') {
        throw badRequest(`${name} has an empty item in '${shorten(value)}'; expected ${expected(name)}`);
      }
      out.push(token);
    }
  }
  if (out.length > max) throw badRequest(`${name} accepts at most ${max} items, got ${out.length}`);
  return out;
}

/** Values of `order` (and of `sort` on `/api/v1/quotes`), in any case. */
export const DIRECTIONS: readonly Direction[] = ['asc', 'desc'];

function direction(name: string, value: string): Direction {
  const lower = value.toLowerCase();
  if ((DIRECTIONS as readonly string[]).includes(lower)) return lower as Direction;
  throw badRequest(`${name} must be asc or desc, got '${shorten(value)}'`);
}

function readSort(params: RawQuery): SortKey[] {
  const fields = tokens(params, 'sort', MAX_SORT_KEYS).map((token) => {
    if (!(SORT_FIELDS as readonly string[]).includes(token)) {
      throw badRequest(`sort does not accept '${shorten(token)}'; allowed: ${list(SORT_FIELDS)}`);
    }
    return token as SortField;
  });
  const keys: SortField[] = fields.length === 0 ? ['id'] : fields;
  const orders = tokens(params, 'order', MAX_SORT_KEYS).map((token) => direction('order', token));
  if (orders.length > 1 && orders.length !== keys.length) {
    const what =
      fields.length === 0 ? '1 key (id, the default)' : `${keys.length} key${keys.length === 1 ? '' : 's'}`;
    throw badRequest(
      `order has ${orders.length} values but sort has ${what}; give one order for all keys or exactly one per sort key`,
    );
  }
  const sort = normaliseSort(keys.map((field, i) => ({ field, direction: orders[i] ?? orders[0] ?? 'asc' })));
  return withoutImpliedTieBreak(sort);
}

/** `id asc` ends every order anyway: dropping it gives equivalent requests one canonical form. */
function withoutImpliedTieBreak(sort: SortKey[]): SortKey[] {
  const last = sort.at(-1);
  return last?.field === 'id' && last.direction === 'asc' ? sort.slice(0, -1) : sort;
}

export function readLimit(params: RawQuery, fallback: number): number {
  return readUpTo(params, 'limit', MAX_LIMIT) ?? fallback;
}

/**
 * An integer parameter from 1 to `max`, or undefined when absent. Longer digit strings than
 * `max` has are refused before they are read as a number.
 */
function readUpTo(params: RawQuery, name: string, max: number): number | undefined {
  const value = params.get(name)?.[0];
  if (value === undefined) return undefined;
  if (!DECIMAL_INTEGER.test(value) || value.length > String(max).length || Number(value) > max) {
    throw badRequest(
      `${name} must be an integer from 1 to ${max}${integerHint(value)}, got '${shorten(value)}'`,
    );
  }
  return Number(value);
}

/** Any integer ≥ 1; pages beyond {@link MAX_PAGE} are queried as `MAX_PAGE + 1` (past the last). */
export function readPage(params: RawQuery): number {
  const value = params.get('page')?.[0];
  if (value === undefined) return 1;
  if (!DECIMAL_INTEGER.test(value)) {
    throw badRequest(`page must be an integer ≥ 1${integerHint(value)}, got '${shorten(value)}'`);
  }
  return Math.min(Number(value), MAX_PAGE + 1);
}

function readFields(params: RawQuery): readonly QuoteField[] | null {
  if (!params.has('fields')) return null;
  const fields = tokens(params, 'fields', Number.POSITIVE_INFINITY).map((token) => {
    if (!(QUOTE_FIELDS as readonly string[]).includes(token)) {
      throw badRequest(`fields does not accept '${shorten(token)}'; allowed: ${list(QUOTE_FIELDS)}`);
    }
    return token as QuoteField;
  });
  return normaliseFields(fields);
}

/** `GET /quotes`: filters, sort, order, page, limit, fields (docs/api.md#listing-quotes). */
export function parseListQuery(params: RawQuery): ListQuery {
  checkParams(params, '/quotes', LIST_PARAMS, LIST_REPEATABLE);
  const query: ListQuery = {
    filters: withSearch(readFilters(params), params),
    sort: readSort(params),
    page: readPage(params),
    limit: readLimit(params, DEFAULT_LIMIT),
    fields: readFields(params),
  };
  // Relevance is the order of a search that asks for none: any `sort` or `order` means the sort.
  if (query.filters.q !== undefined && !params.has('sort') && !params.has('order')) query.ranked = true;
  return query;
}

/** The filters with `q` (search.ts), when given. */
export function withSearch(filters: Filters, params: RawQuery): Filters {
  const value = params.get('q')?.[0];
  if (value === undefined) return filters;
  try {
    filters.q = parseSearch(value);
  } catch (error) {
    if (error instanceof QueryError) throw badRequest(`${error.message}; expected ${expected('q')}`);
    throw error;
  }
  return filters;
}

/** `GET /quotes/random`: the filters and `fields`, nothing else (docs/api.md#one-quote-and-a-random-one). */
export function parseRandomQuery(params: RawQuery): RandomQuery {
  checkParams(params, '/quotes/random', RANDOM_PARAMS, FILTERS_REPEATABLE);
  const query: RandomQuery = { filters: withSearch(readFilters(params), params), fields: readFields(params) };
  const count = readCount(params);
  if (count !== undefined) query.count = count;
  const exclude = readExclude(params);
  if (exclude !== undefined) query.filters.exclude = exclude;
  return query;
}

/** `GET /quotes/today`: the filters (ranges included) and `fields`. */
export function parseTodayQuery(params: RawQuery): RandomQuery {
  checkParams(params, '/quotes/today', TODAY_PARAMS, FILTERS_REPEATABLE);
  return { filters: readFilters(params), fields: readFields(params) };
}

/** A canonical text of a filter set alone (equal for equivalent filters), as {@link listKey} writes it. */
export function filtersKey(filters: Filters): string {
  return listKey('', { filters, sort: [], page: 1, limit: 1, fields: null });
}

/** Longest `exclude` value: {@link MAX_EXCLUDE} ids of 16 digits (beyond any safe id) and their commas. */
const MAX_EXCLUDE_LENGTH = MAX_EXCLUDE * 17;

function excludeLengthProblem(value: string): string | undefined {
  return value.length > MAX_EXCLUDE_LENGTH
    ? `exclude must be at most ${MAX_EXCLUDE_LENGTH} characters, got ${value.length}; expected ${expected('exclude')}`
    : undefined;
}

/**
 * `exclude` on `/quotes/random`: ids left out of the draw, without duplicates. An id beyond the
 * safe range is valid but no quote has it, so it excludes nothing and is dropped.
 */
function readExclude(params: RawQuery): number[] | undefined {
  if (!params.has('exclude')) return undefined;
  const ids = new Set<number>();
  for (const token of tokens(params, 'exclude', MAX_EXCLUDE)) {
    if (!DECIMAL_INTEGER.test(token)) {
      throw badRequest(
        `exclude must list integers ≥ 1${integerHint(token)}, got '${shorten(token)}'; expected ${expected('exclude')}`,
      );
    }
    const id = Number(token);
    if (Number.isSafeInteger(id)) ids.add(id);
  }
  return [...ids];
}

/** `count` on `/quotes/random`: 1 to MAX_SAMPLE distinct quotes. */
function readCount(params: RawQuery): number | undefined {
  return readUpTo(params, 'count', MAX_SAMPLE);
}

/**
 * `GET /quotes/{id}`: the id (an integer ≥ 1) and `fields` only
 * (docs/api.md#one-quote-and-a-random-one). `id` is null for an integer beyond the safe range: a
 * valid id that no quote can have (the indexer only accepts safe integers), which the route answers
 * 404 once the parameters have passed.
 */
export function parseIdQuery(
  id: string,
  params: RawQuery,
): { id: number | null; fields: readonly QuoteField[] | null } {
  if (!DECIMAL_INTEGER.test(id)) {
    throw badRequest(`id must be an integer ≥ 1${integerHint(id)}, got '${shorten(id)}'`);
  }
  checkParams(params, '/quotes/{id}', ID_PARAMS, NONE_REPEATABLE);
  const n = Number(id);
  return { id: Number.isSafeInteger(n) ? n : null, fields: readFields(params) };
}

/** `GET /api/v1/quotes`: genre (required), page, limit, orderby, sort as direction (docs/api.md#the-genre-form). */
export function parseV1Query(params: RawQuery): ListQuery {
  checkParams(params, V1_PATH, V1_PARAMS, V1_REPEATABLE);
  if (!params.has('genre')) {
    throw badRequest(`genre is required on /api/v1/quotes; give one or more genres, e.g. genre=tragedy`);
  }
  const orderby = params.get('orderby')?.[0] ?? 'author';
  if (!(V1_ORDER_FIELDS as readonly string[]).includes(orderby)) {
    throw badRequest(`orderby must be one of ${list(V1_ORDER_FIELDS)}, got '${shorten(orderby)}'`);
  }
  const sortValue = params.get('sort')?.[0];
  return {
    filters: readFilters(params, ['genre']),
    sort: [
      {
        field: orderby as SortField,
        direction: sortValue === undefined ? 'asc' : direction('sort', sortValue),
      },
    ],
    page: readPage(params),
    limit: readLimit(params, V1_DEFAULT_LIMIT),
    fields: V1_FIELDS,
  };
}

/**
 * A canonical text of what a list request asks for: equal for requests that must give the same
 * result (values re-ordered inside an OR, repeated values, case or accents folded away, redundant
 * sort keys), different otherwise. ETags hash it with the catalogue version.
 */
export function listKey(route: string, query: ListQuery): string {
  const filters: unknown[] = [];
  for (const name of FILTER_NAMES) {
    const values = query.filters[name];
    if (values === undefined || values.length === 0) continue;
    const canonical =
      name === 'author_like' || name === 'work_like'
        ? sortedDistinct((values as string[][]).map((alt) => sortedDistinct(alt).join(' ')))
        : sortedDistinct((values as (string | number)[]).map(String));
    filters.push(name, canonical);
  }
  const sort = query.sort.map((key) => `${key.field}:${key.direction}`);
  // The words of q in order (the last one is a prefix, and relevance reads their order).
  if (query.filters.q !== undefined) filters.push('q', query.filters.q, query.ranked === true);
  const ranges = rangesKey(query.filters.ranges);
  if (ranges !== '') filters.push('ranges', ranges);
  return JSON.stringify([route, filters, sort, query.page, query.limit, query.fields]);
}

/** Sorted distinct values: the order of OR alternatives never changes a result. */
function sortedDistinct(values: string[]): string[] {
  return [...new Set(values)].sort();
}

/**
 * The HTTP edge of `/authors`, `/works` and their ids: query strings become the port's
 * {@link DirectoryQuery} (catalogue/authors.ts), with the quote paths' rules and messages (every
 * value bounded, single-valued parameters once, a 400 naming the parameter and what it accepts).
 */
import {
  AUTHOR_FIELDS,
  type AuthorField,
  DIRECTORY_SORTS,
  type DirectoryQuery,
  type DirectorySort,
  WORK_FIELDS,
  type WorkField,
} from './catalogue/authors.ts';
import {
  DECIMAL_INTEGER,
  DEFAULT_LIMIT,
  type Filters,
  integerHint,
  normaliseFilters,
  QueryError,
  type RawFilters,
} from './catalogue/port.ts';
import { badRequest } from './errors.ts';
import { checkParams, DIRECTIONS, type RawQuery, readLimit, readPage, shorten, tokens } from './query.ts';

/** What a list of authors or works asks for: the port's query and the fields of each item. */
export interface DirectoryRequest<F extends string> {
  query: DirectoryQuery;
  fields: readonly F[] | null;
}

/** The word-prefix parameter of each list and the quote filter it is. */
const LIKE = { authors: ['name_like', 'author_like'], works: ['title_like', 'work_like'] } as const;
const QUOTE_FILTERS = ['category', 'genre', 'language'] as const;
const SORT_NAMES = {
  authors: ['name', 'quote_count', 'id'],
  works: ['title', 'quote_count', 'id'],
} as const;

const PARAMS = {
  authors: [...QUOTE_FILTERS, 'name_like', 'sort', 'order', 'page', 'limit', 'fields'],
  works: [...QUOTE_FILTERS, 'title_like', 'author_id', 'sort', 'order', 'page', 'limit', 'fields'],
} as const;
const REPEATABLE = {
  authors: new Set<string>([...QUOTE_FILTERS, 'name_like']),
  works: new Set<string>([...QUOTE_FILTERS, 'title_like', 'author_id']),
};

/** `GET /authors` or `GET /works`. */
export function parseDirectoryQuery(kind: 'authors', params: RawQuery): DirectoryRequest<AuthorField>;
export function parseDirectoryQuery(kind: 'works', params: RawQuery): DirectoryRequest<WorkField>;
export function parseDirectoryQuery(
  kind: 'authors' | 'works',
  params: RawQuery,
): DirectoryRequest<AuthorField | WorkField> {
  const path = `/${kind}`;
  checkParams(params, path, PARAMS[kind], REPEATABLE[kind]);
  const [likeName, likeFilter] = LIKE[kind];
  const raw: RawFilters = {};
  for (const name of QUOTE_FILTERS) {
    const values = params.get(name);
    if (values !== undefined) raw[name] = values;
  }
  const like = params.get(likeName);
  if (like !== undefined) raw[likeFilter] = like;
  const authorIds = kind === 'works' ? params.get('author_id') : undefined;
  if (authorIds !== undefined) raw.author_id = authorIds;
  let filters: Filters;
  try {
    filters = normaliseFilters(raw);
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    // The port names its own filter; the request named the parameter of this path.
    throw badRequest(error.message.replaceAll(likeFilter, likeName));
  }
  const names: readonly string[] = SORT_NAMES[kind];
  const sortValue = params.get('sort')?.[0] ?? names[0];
  const at = names.indexOf(sortValue as string);
  if (at < 0)
    throw badRequest(`sort must be one of ${names.join(', ')}, got '${shorten(sortValue as string)}'`);
  const orderValue = (params.get('order')?.[0] ?? 'asc').toLowerCase();
  if (!(DIRECTIONS as readonly string[]).includes(orderValue)) {
    throw badRequest(`order must be asc or desc, got '${shorten(params.get('order')?.[0] ?? '')}'`);
  }
  const allowed: readonly string[] = kind === 'authors' ? AUTHOR_FIELDS : WORK_FIELDS;
  let fields: string[] | null = null;
  if (params.has('fields')) {
    const wanted = new Set(
      tokens(params, 'fields', Number.POSITIVE_INFINITY).map((token) => {
        if (!allowed.includes(token)) {
          throw badRequest(`fields does not accept '${shorten(token)}'; allowed: ${allowed.join(', ')}`);
        }
        return token;
      }),
    );
    fields = allowed.filter((f) => wanted.has(f));
  }
  return {
    query: {
      filters,
      sort: DIRECTORY_SORTS[at] as DirectorySort,
      direction: orderValue as 'asc' | 'desc',
      page: readPage(params),
      limit: readLimit(params, DEFAULT_LIMIT),
    },
    fields: fields as (AuthorField | WorkField)[] | null,
  };
}

/** `GET /authors/{id}` or `/works/{id}`: an integer id ≥ 1 (null: beyond any id), no parameter. */
export function parseDirectoryId(kind: 'authors' | 'works', id: string, params: RawQuery): number | null {
  if (!DECIMAL_INTEGER.test(id)) {
    throw badRequest(`id must be an integer ≥ 1${integerHint(id)}, got '${shorten(id)}'`);
  }
  const [name] = params.keys();
  if (name !== undefined) throw badRequest(`/${kind}/{id} takes no parameters, got '${shorten(name)}'`);
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : null;
}

/** A canonical text of a list request, for ETags: equal for requests with the same answer. */
export function directoryKey(kind: string, request: DirectoryRequest<string>): string {
  const { filters, sort, direction, page, limit } = request.query;
  const canonical = Object.entries(filters)
    .filter(([, values]) => Array.isArray(values) && values.length > 0)
    .map(([name, values]) => [
      name,
      (values as unknown[])
        .map((v) => (Array.isArray(v) ? [...new Set(v)].sort().join(' ') : String(v)))
        .sort(),
    ])
    .sort();
  return JSON.stringify([kind, canonical, sort, direction, page, limit, request.fields]);
}

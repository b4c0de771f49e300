/**
 * The HTTP edge of `GET /quotes/facets`: its query string becomes the port's {@link FacetQuery},
 * with the rules every quote route shares (query.ts): the filters of `/quotes`, exactly as there,
 * plus `facet` (required, repeatable or comma-separated) and `limit` (values per facet).
 */
import {
  DEFAULT_FACET_LIMIT,
  FACET_FIELDS,
  type FacetField,
  type FacetQuery,
  FILTER_NAMES,
} from './catalogue/port.ts';
import { RANGE_NAMES } from './catalogue/ranges.ts';
import { badRequest } from './errors.ts';
import {
  checkParams,
  listKey,
  type RawQuery,
  readFilters,
  readLimit,
  shorten,
  tokens,
  withSearch,
} from './query.ts';

export const FACETS_PATH = '/quotes/facets';
/** Every filter of `/quotes` narrows facets too: a filter added there belongs here as well. */
const FACET_PARAMS = [...FILTER_NAMES, ...RANGE_NAMES, 'q', 'facet', 'limit'] as const;
const FACET_REPEATABLE: ReadonlySet<string> = new Set([...FILTER_NAMES, 'facet']);

/** `GET /quotes/facets`: the filters and `q`, `facet` (at least one), `limit` (1 to 100, default 20). */
export function parseFacetQuery(params: RawQuery): FacetQuery {
  checkParams(params, FACETS_PATH, FACET_PARAMS, FACET_REPEATABLE);
  const asked = tokens(params, 'facet', Number.POSITIVE_INFINITY).map((token) => {
    if (!(FACET_FIELDS as readonly string[]).includes(token)) {
      throw badRequest(`facet does not accept '${shorten(token)}'; allowed: ${FACET_FIELDS.join(', ')}`);
    }
    return token as FacetField;
  });
  if (asked.length === 0) {
    throw badRequest(
      `facet is required on ${FACETS_PATH}; give one or more of ${FACET_FIELDS.join(', ')}, e.g. facet=genre`,
    );
  }
  const wanted = new Set(asked);
  return {
    filters: withSearch(readFilters(params), params),
    facets: FACET_FIELDS.filter((field) => wanted.has(field)),
    limit: readLimit(params, DEFAULT_FACET_LIMIT),
  };
}

/** The canonical text of a facet request, for its ETag: the list key of its filters, then the facets. */
export function facetsKey(query: FacetQuery): string {
  const filters = listKey(FACETS_PATH, {
    filters: query.filters,
    sort: [],
    page: 1,
    limit: query.limit,
    fields: null,
  });
  return JSON.stringify([filters, query.facets]);
}

/**
 * Full-text search (`q`) on Meilisearch, pure translation (no I/O): the `/search` requests of a
 * listing in relevance order, and the reading of their answers. The rules are in search.ts; the
 * stored fields in meilisearch/request.ts.
 *
 * Exactness, whatever the engine's tokenizer and ranking do:
 * - The set of matches is a filter ({@link wordsClause}): `q_words = w` for each word,
 *   `q_words STARTS WITH w` for the last, ANDed with the other filters. Anything with `q` but
 *   no ranking (a listing in an asked order, random quotes, facet counts) is the
 *   same read as without `q`, with that filter: no search. Totals of a search come from
 *   `page`/`hitsPerPage` (exact, up to `pagination.maxTotalHits`, set above any catalogue).
 * - The engine's query (`q`) only ranks. It holds the query's tokens with `matchingStrategy:
 *   last`, so a document needs only the first token to stay among the candidates, and the filter
 *   guarantees that token to every match (it is a whole word: only the last word may be a
 *   prefix). A one-word search sends no `q` (nothing to rank: a placeholder search).
 * - Relevance groups (search.ts) are two searches, filtered on `q_text_words` and on its negation.
 * - `searchCutoffMs` stops the ranking of a slow search and returns the rest unranked, with the
 *   same total: every hit then carries a `skipped` ranking detail. Searches ask for those details,
 *   and a page holding such a hit is refused (503), never served out of order.
 */

import type { ListQuery } from '../port.ts';
import { engineToken } from '../search.ts';
import {
  buildFilter,
  filterExpression,
  retrievedFields,
  SEARCH_ATTRIBUTES,
  SEARCH_LOCALE,
  wordsClause,
} from './request.ts';

/** The body of one search (`POST /indexes/{uid}/search`, or one query of `/multi-search`). */
export interface SearchRequest {
  q?: string;
  filter: string;
  page?: number;
  hitsPerPage?: number;
  offset?: number;
  limit?: number;
  attributesToRetrieve?: string[];
  attributesToSearchOn?: string[];
  matchingStrategy?: 'last';
  showRankingScoreDetails?: boolean;
  locales?: string[];
}

/** What a search answers (the parts read here). */
export interface SearchResponse {
  hits: Array<Record<string, unknown> & { _rankingScoreDetails?: Record<string, unknown> }>;
  /** With page/hitsPerPage: the exact number of matches. */
  totalHits?: number;
  /** With offset/limit: the number of matches (exact below maxTotalHits). */
  estimatedTotalHits?: number;
}

/** The filter of every match: the other filters and the words of `q` anywhere. */
export function matchFilter(query: Pick<ListQuery, 'filters'>): string {
  return filterExpression(buildFilter(query.filters)) as string;
}

/** Filters of the relevance groups: matches with every word in the text, and the others. */
export function groupFilters(query: Pick<ListQuery, 'filters'>): { text: string; rest: string } {
  const words = query.filters.q as readonly string[];
  const others = buildFilter({ ...query.filters, q: undefined });
  const inText = wordsClause('q_text_words', words);
  return {
    text: filterExpression([...others, inText]) as string,
    rest: filterExpression([...others, wordsClause('q_words', words), `NOT (${inText})`]) as string,
  };
}

/** The ranking part of a search: the tokens of `q` (none for one word; see the module comment). */
function ranking(words: readonly string[], attributes: readonly string[]): Partial<SearchRequest> {
  if (words.length < 2) return { showRankingScoreDetails: true };
  return {
    q: words.map(engineToken).join(' '),
    attributesToSearchOn: [...attributes],
    matchingStrategy: 'last',
    locales: [SEARCH_LOCALE],
    showRankingScoreDetails: true,
  };
}

/**
 * `list` in relevance order, first step: the page as the first two groups (text) see it; sent
 * with {@link searchCount}, all the matches, whose difference is the third group's size. When the
 * page reaches past the text matches, {@link restSearch} reads the rest of it.
 */
export function rankedSearches(query: ListQuery): { text: SearchRequest } {
  const words = query.filters.q as readonly string[];
  const filters = groupFilters(query);
  return {
    text: {
      filter: filters.text,
      ...ranking(words, ['q_text']),
      page: query.page,
      hitsPerPage: query.limit,
      attributesToRetrieve: retrievedFields(query.fields),
    },
  };
}

/** `list` in relevance order, second step: `limit` matches of the third group from `offset`. */
export function restSearch(query: ListQuery, offset: number, limit: number): SearchRequest {
  const words = query.filters.q as readonly string[];
  return {
    filter: groupFilters(query).rest,
    ...ranking(words, SEARCH_ATTRIBUTES),
    offset,
    limit,
    attributesToRetrieve: retrievedFields(query.fields),
  };
}

/** `list` in relevance order, beside the first step: the number of all the matches. */
export function searchCount(query: Pick<ListQuery, 'filters'>): SearchRequest {
  return { filter: matchFilter(query), page: 1, hitsPerPage: 0 };
}

/** True when the engine's time budget cut the ranking of a returned hit short. */
export function cutShort(response: SearchResponse): boolean {
  return response.hits.some((hit) => hit._rankingScoreDetails?.skipped !== undefined);
}

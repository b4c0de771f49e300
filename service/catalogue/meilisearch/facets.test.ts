import { describe, expect, it } from 'vitest';
import { fold } from '../port.ts';
import {
  decodeFacetKey,
  displayRequest,
  displayValue,
  facetKey,
  facetSearchRequest,
  MAX_KEY_BYTES,
} from './request.ts';

describe('facet requests to Meilisearch', () => {
  it('asks one search for the exact total and every key of each facet, with no hit', () => {
    expect(facetSearchRequest(undefined, ['author', 'genre'])).toEqual({
      facets: ['author_key', 'genre_keys'],
      page: 1,
      hitsPerPage: 0,
    });
    expect(facetSearchRequest('category_key = "poetry"', ['work', 'category'])).toEqual({
      filter: 'category_key = "poetry"',
      facets: ['work_key', 'category_key'],
      page: 1,
      hitsPerPage: 0,
    });
  });

  it('reads folded values back from their keys, except digests', () => {
    const texts = [
      "Flannery O'Connor",
      'say "no" \\ yes\\',
      'a_b~c',
      'J’accuse…!',
      'tab\there',
      '🌙 ﾌｧﾝﾀｼﾞｰ',
      '村上 春樹',
    ];
    for (const text of texts) expect(decodeFacetKey(facetKey(fold(text))), text).toBe(fold(text));
    const long = '長'.repeat(MAX_KEY_BYTES);
    expect(facetKey(long)).toMatch(/^~/);
    expect(decodeFacetKey(facetKey(long))).toBeUndefined();
  });

  it('finds a display value in the lowest-id quote holding the key; for genre, its first genre that folds to it', () => {
    const key = facetKey('gothic');
    expect(displayRequest('genre', key)).toEqual({
      filter: 'genre_keys = "gothic"',
      sort: ['id:asc'],
      offset: 0,
      limit: 1,
      fields: ['genre', 'catalogue_version'],
    });
    expect(displayValue('genre', key, { genre: ['Southern', ' GOTHIC', 'gothic'] })).toBe(' GOTHIC');
    expect(displayValue('genre', key, { genre: ['Southern'] })).toBeUndefined();
    expect(displayValue('author', facetKey('emile zola'), { author: 'Émile Zola' })).toBe('Émile Zola');
  });
});

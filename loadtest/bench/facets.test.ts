import { describe, expect, it } from 'vitest';
import { FACET_FIELDS, MAX_FACET_LIMIT } from '../../service/catalogue/port.ts';
import { FACET_REQUESTS, facetPaths } from './facets.ts';

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('facet paths of the benchmark', () => {
  it('are distinct, unfiltered, and enough for a full run', () => {
    const paths = facetPaths(seeded(1), FACET_REQUESTS);
    expect(paths).toHaveLength(FACET_REQUESTS);
    expect(new Set(paths).size).toBe(paths.length);
    for (const path of paths) expect(path).toMatch(/^\/quotes\/facets\?facet=[a-z,]+&limit=\d+$/);
  });

  it('ask every ordered choice of facets with every limit, each facet at most once', () => {
    const paths = facetPaths(seeded(2), Number.MAX_SAFE_INTEGER);
    // n + n(n-1) + … + n! orderings of n facets.
    let orderings = 0;
    for (let k = 1, product = 1; k <= FACET_FIELDS.length; k++) {
      product *= FACET_FIELDS.length - k + 1;
      orderings += product;
    }
    expect(paths).toHaveLength(orderings * MAX_FACET_LIMIT);
    const orders = new Set<string>();
    for (const path of paths) {
      const facets = (new URL(path, 'http://x').searchParams.get('facet') as string).split(',');
      expect(new Set(facets).size).toBe(facets.length);
      for (const facet of facets) expect(FACET_FIELDS).toContain(facet);
      orders.add(facets.join(','));
    }
    expect(orders.size).toBe(orderings);
    expect(orders).toContain('genre,author');
    expect(orders).toContain('author,genre');
  });

  it('come in an order set by the seed', () => {
    expect(facetPaths(seeded(3), 50)).toEqual(facetPaths(seeded(3), 50));
    expect(facetPaths(seeded(3), 50)).not.toEqual(facetPaths(seeded(4), 50));
  });
});

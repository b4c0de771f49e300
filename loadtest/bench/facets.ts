/**
 * Facet requests for the benchmark: unfiltered (the whole catalogue, the costliest aggregate),
 * each distinct, so that none is answered from the service's cache of answers: every non-empty
 * set of facets with every `limit`, in a seeded order.
 */
import { FACET_FIELDS, MAX_FACET_LIMIT } from '../../service/catalogue/port.ts';

/** Target of the feature: facet counts of an unfiltered catalogue within this p99. */
export const FACETS_P99_MS = 100;

/** Up to `count` distinct unfiltered facet paths (at most 15 × 100 exist), shuffled by `random`. */
export function facetPaths(random: () => number, count: number): string[] {
  const paths: string[] = [];
  for (let set = 1; set < 1 << FACET_FIELDS.length; set++) {
    const facets = FACET_FIELDS.filter((_, i) => (set & (1 << i)) !== 0).join(',');
    for (let limit = 1; limit <= MAX_FACET_LIMIT; limit++)
      paths.push(`/quotes/facets?facet=${facets}&limit=${limit}`);
  }
  for (let i = paths.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [paths[i], paths[j]] = [paths[j] as string, paths[i] as string];
  }
  return paths.slice(0, count);
}

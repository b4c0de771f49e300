/**
 * Facet requests for the benchmark: unfiltered (the whole catalogue, the costliest aggregate),
 * each distinct, so that none is answered from the service's cache of answers: every ordered
 * choice of facets (the answer lists them in the order asked) with every `limit`, in a seeded
 * order. Enough of them for a run of a few seconds at thousands of requests a second: a run
 * shorter than a second measures its first burst of connections, not the service.
 */
import { FACET_FIELDS, MAX_FACET_LIMIT } from '../../service/catalogue/port.ts';

/** Target of the feature: facet counts of an unfiltered catalogue within this p99. */
export const FACETS_P99_MS = 100;

/** Requests of a full facets run (325 orderings of five facets × 100 limits exist). */
export const FACET_REQUESTS = 6_000;

/** Up to `count` distinct unfiltered facet paths, shuffled by `random`. */
export function facetPaths(random: () => number, count: number): string[] {
  const paths: string[] = [];
  for (const facets of orderings(FACET_FIELDS)) {
    for (let limit = 1; limit <= MAX_FACET_LIMIT; limit++)
      paths.push(`/quotes/facets?facet=${facets.join(',')}&limit=${limit}`);
  }
  for (let i = paths.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [paths[i], paths[j]] = [paths[j] as string, paths[i] as string];
  }
  return paths.slice(0, count);
}

/** Every non-empty sequence of distinct values of `values`. */
function orderings<T>(values: readonly T[]): T[][] {
  const out: T[][] = [];
  const extend = (prefix: T[]) => {
    for (const value of values) {
      if (prefix.includes(value)) continue;
      const next = [...prefix, value];
      out.push(next);
      extend(next);
    }
  };
  extend([]);
  return out;
}

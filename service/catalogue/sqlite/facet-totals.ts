/**
 * Facet counts of the whole catalogue (`/quotes/facets` with no filter and no `q`): the same for
 * every request until the next reindex, which opens another file and so another counter. The
 * best {@link MAX_FACET_LIMIT} values of each field are counted once; a request for fewer takes
 * the first of them, since the port's ranking is a total order (count, then folded value).
 */
import { type FacetField, type FacetValue, MAX_FACET_LIMIT } from '../port.ts';
import type { Selection } from './query.ts';

export class WholeCatalogueFacets {
  readonly #best = new Map<FacetField, readonly FacetValue[]>();

  /** Whether `selection` and `matches` select every quote, so that the remembered counts apply. */
  static applies(selection: Selection, matches: Int32Array | undefined): boolean {
    return (
      matches === undefined &&
      selection.ords === undefined &&
      selection.lengths === undefined &&
      selection.profiles === null
    );
  }

  /** The first `limit` values of `field`, counted by `count` (for the best the port allows) once. */
  values(field: FacetField, limit: number, count: (limit: number) => FacetValue[]): FacetValue[] {
    let best = this.#best.get(field);
    if (best === undefined) {
      best = count(MAX_FACET_LIMIT);
      this.#best.set(field, best);
    }
    return best.slice(0, limit).map((value) => ({ ...value }));
  }
}

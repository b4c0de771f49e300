/**
 * Facet counts of the embedded catalogue (`/quotes/facets`): an aggregate over the profiles a
 * filter set selects (sqlite/schema.ts). Every facet field is a profile field, so a value's count
 * is the sum of the sizes of the matching profiles that have it: one pass over the matching
 * profiles per facet, whatever the number of quotes. Ranks are positions in the folded values'
 * code point order, so "then by folded value" is "then by rank".
 *
 * Display values follow the port's rule (the spelling of the lowest-id quote of the whole
 * catalogue whose value folds to it): ords are in id order and each profile's ords ascend, so
 * it is the quote at the lowest first ord among the profiles of the value's group. Computed once
 * per value and catalogue file, when first listed.
 */
import { type FacetField, type FacetValue, fold } from '../port.ts';
import { WholeCatalogueFacets } from './facet-totals.ts';
import type { CatalogueColumns, Groups, Selection } from './query.ts';

export class FacetCounter {
  readonly #columns: CatalogueColumns;
  readonly #display = new Map<FacetField, Map<number, string>>();
  readonly #whole = new WholeCatalogueFacets();

  constructor(columns: CatalogueColumns) {
    this.#columns = columns;
  }

  /**
   * The first `limit` values of `field` among the selected quotes (or, with `q`, among its
   * `matches`, ords of the selection), ranked as the port says.
   */
  values(selection: Selection, field: FacetField, limit: number, matches?: Int32Array): FacetValue[] {
    if (WholeCatalogueFacets.applies(selection, matches)) {
      return this.#whole.values(field, limit, (best) => this.#count(selection, field, best, matches));
    }
    return this.#count(selection, field, limit, matches);
  }

  #count(selection: Selection, field: FacetField, limit: number, matches?: Int32Array): FacetValue[] {
    const columns = this.#columns;
    const folded = columns.foldedValues(field);
    const counts = new Float64Array(folded.length);
    const sizes = columns.profileSizes;
    const add =
      field === 'genre'
        ? (() => {
            const { start, ranks } = columns.genreSets();
            return (profile: number, size: number) => {
              for (let i = start[profile] as number; i < (start[profile + 1] as number); i++) {
                const rank = ranks[i] as number;
                counts[rank] = (counts[rank] as number) + size;
              }
            };
          })()
        : (() => {
            const ranks = columns.ranks(field);
            return (profile: number, size: number) => {
              const rank = ranks[profile] as number;
              counts[rank] = (counts[rank] as number) + size;
            };
          })();
    // Matches are quotes, not profiles: they are counted one by one.
    const quotes = matches ?? selection.ords;
    if (quotes !== undefined) {
      for (const ord of quotes) add(columns.profileOf(ord), 1);
    } else if (selection.lengths !== undefined) {
      // A length range counts, per profile, its quotes within the range.
      const { counts } = selection.lengths;
      for (const [i, profile] of (selection.profiles as Int32Array).entries())
        add(profile, counts[i] as number);
    } else if (selection.profiles === null) {
      for (let profile = 0; profile < columns.profileCount; profile++) add(profile, sizes[profile] as number);
    } else {
      for (const profile of selection.profiles) add(profile, sizes[profile] as number);
    }
    // The best `limit` values, kept in order while the counts are read: a catalogue has tens of
    // thousands of works, of which a request lists at most a hundred. Ranks ascend in this loop
    // and order folded values by code point, so a later rank with an equal count ranks after.
    const kept: { rank: number; count: number }[] = [];
    // A quote whose record gave no language holds the empty code: no value to list.
    const first = field === 'language' && folded[0] === '' ? 1 : 0;
    for (let rank = first; rank < counts.length; rank++) {
      const count = counts[rank] as number;
      if (count === 0 || (kept.length === limit && count <= (kept[limit - 1] as { count: number }).count))
        continue;
      let at = kept.length;
      while (at > 0 && (kept[at - 1] as { count: number }).count < count) at--;
      kept.splice(at, 0, { rank, count });
      if (kept.length > limit) kept.pop();
    }
    return kept.map(({ rank, count }) => ({ value: this.#displayOf(field, rank), count }));
  }

  #displayOf(field: FacetField, rank: number): string {
    let known = this.#display.get(field);
    if (known === undefined) {
      known = new Map();
      this.#display.set(field, known);
    }
    let display = known.get(rank);
    if (display === undefined) {
      display = this.#lowestIdSpelling(field, rank);
      known.set(rank, display);
    }
    return display;
  }

  #lowestIdSpelling(field: FacetField, rank: number): string {
    const columns = this.#columns;
    const groups: Groups = field === 'genre' ? columns.genreGroups() : columns.groups(field);
    let first = Number.POSITIVE_INFINITY;
    for (let i = groups.start[rank] as number; i < (groups.start[rank + 1] as number); i++) {
      first = Math.min(first, columns.firstOrdOf(groups.profiles[i] as number));
    }
    if (field !== 'genre') return columns[field](first);
    const value = columns.foldedValues('genre')[rank];
    const genre = columns.genre(first).find((g) => fold(g) === value);
    if (genre === undefined) throw new Error(`genre rank ${rank} has no quote holding it`);
    return genre;
  }
}

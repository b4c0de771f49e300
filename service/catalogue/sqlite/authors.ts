/**
 * Authors and works (authors.ts) on the embedded catalogue, from the columns the indexer derives:
 * every profile knows its author_id, work_id, category, genres, language and number of quotes,
 * so a list is one pass over the matching profiles, adding their sizes per author (or work), and
 * a detail is a pass over the profiles of one author (or work). The names, titles and dates of
 * every author and work are gathered once per catalogue file, on first use.
 */
import type {
  AuthorDetail,
  AuthorEntry,
  DirectoryPage,
  DirectoryQuery,
  WorkDetail,
  WorkEntry,
} from '../authors.ts';
import { compareEntries, compareWorks, pageOf, spelledValues } from '../authors.ts';
import { type Filters, fold } from '../port.ts';
import type { CatalogueColumns, Selection } from './query.ts';

/** Sorted lists remembered per filter set and order: a list request then only slices. */
const SORTED_CACHE_SIZE = 64;

interface Entity {
  /** author_id or work_id. */
  id: number;
  /** Folded name or title: what `name` sorts by. */
  folded: string;
  /** Lowest ord of the entity's quotes: where its display values are read. */
  firstOrd: number;
  /** Its profiles, ascending. */
  profiles: number[];
}

/** The directory of one catalogue file. */
export class SqliteDirectory {
  readonly #columns: CatalogueColumns;
  /** By author_id rank, and by work_id rank. */
  readonly #authors: Entity[];
  readonly #works: Entity[];
  readonly #authorRank: Int32Array;
  readonly #workRank: Int32Array;
  readonly #sorted = new Map<string, { entity: number; count: number }[]>();

  constructor(columns: CatalogueColumns) {
    this.#columns = columns;
    this.#authorRank = columns.ranks('author_id');
    this.#workRank = columns.ranks('work_id');
    const folded = (key: 'author' | 'work') => {
      const values = columns.foldedValues(key);
      const ranks = columns.ranks(key);
      return (profile: number) => values[ranks[profile] as number] as string;
    };
    this.#authors = this.#entities(this.#authorRank, folded('author'), (ord) => columns.authorId(ord));
    this.#works = this.#entities(this.#workRank, folded('work'), (ord) => columns.workId(ord));
  }

  #entities(
    rankOf: Int32Array,
    folded: (profile: number) => string,
    idOf: (ord: number) => number,
  ): Entity[] {
    const columns = this.#columns;
    const out: Entity[] = [];
    for (let profile = 0; profile < columns.profileCount; profile++) {
      const rank = rankOf[profile] as number;
      const ord = columns.firstOrdOf(profile);
      const entity = out[rank];
      if (entity === undefined) {
        out[rank] = { id: idOf(ord), folded: folded(profile), firstOrd: ord, profiles: [profile] };
      } else {
        entity.profiles.push(profile);
        if (ord < entity.firstOrd) entity.firstOrd = ord;
      }
    }
    return out;
  }

  authors(selection: Selection, filters: Filters, query: DirectoryQuery): DirectoryPage<AuthorEntry> {
    const columns = this.#columns;
    return pageOf(this.#sortedRows('authors', selection, filters, query), query, ({ entity, count }) => {
      const author = this.#authors[entity] as Entity;
      return { id: author.id, name: columns.author(author.firstOrd), quote_count: count };
    });
  }

  works(selection: Selection, filters: Filters, query: DirectoryQuery): DirectoryPage<WorkEntry> {
    const rows = this.#sortedRows('works', selection, filters, query);
    return pageOf(rows, query, ({ entity, count }) => this.#workEntry(entity, count));
  }

  author(id: number): AuthorDetail | null {
    const rank = this.#rankOfId(this.#authors, id);
    if (rank < 0) return null;
    const columns = this.#columns;
    const author = this.#authors[rank] as Entity;
    const workCounts = new Map<number, number>();
    const categories: { first: number; value: string; count: number }[] = [];
    let total = 0;
    for (const profile of author.profiles) {
      const size = columns.profileSizes[profile] as number;
      total += size;
      const work = this.#workRank[profile] as number;
      workCounts.set(work, (workCounts.get(work) ?? 0) + size);
      categories.push({
        first: columns.firstOrdOf(profile),
        value: columns.category(columns.firstOrdOf(profile)),
        count: size,
      });
    }
    const works = [...workCounts]
      .map(([work, count]) => {
        const { id: workId, title, publish_date } = this.#workEntry(work, count);
        return { id: workId, title, publish_date, quote_count: count };
      })
      .sort(compareWorks);
    return {
      id: author.id,
      name: columns.author(author.firstOrd),
      quote_count: total,
      categories: spelledValues(categories),
      works,
    };
  }

  work(id: number): WorkDetail | null {
    const rank = this.#rankOfId(this.#works, id);
    if (rank < 0) return null;
    const columns = this.#columns;
    const work = this.#works[rank] as Entity;
    let total = 0;
    const genres: { first: number; value: string; count: number }[] = [];
    for (const profile of work.profiles) {
      const size = columns.profileSizes[profile] as number;
      total += size;
      const ord = columns.firstOrdOf(profile);
      const own = columns.genre(ord);
      for (const [i, genre] of own.entries()) {
        // A genre counts once per quote (its first spelling in the list), as facets count it.
        if (own.findIndex((g) => fold(g) === fold(genre)) === i)
          genres.push({ first: ord, value: genre, count: size });
      }
    }
    return { ...this.#workEntry(rank, total), genres: spelledValues(genres) };
  }

  #workEntry(rank: number, count: number): WorkEntry {
    const columns = this.#columns;
    const work = this.#works[rank] as Entity;
    const ord = work.firstOrd;
    return {
      id: work.id,
      title: columns.work(ord),
      author: columns.author(ord),
      author_id: columns.authorId(ord),
      publish_date: columns.publishDate(ord),
      quote_count: count,
    };
  }

  /** The rank of the entity with this id (ranks follow ids), or -1. */
  #rankOfId(entities: readonly Entity[], id: number): number {
    let lo = 0;
    let hi = entities.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((entities[mid] as Entity).id < id) lo = mid + 1;
      else hi = mid;
    }
    return lo < entities.length && (entities[lo] as Entity).id === id ? lo : -1;
  }

  /** The entities with matching quotes, sorted as `query` asks. */
  #sortedRows(
    kind: 'authors' | 'works',
    selection: Selection,
    filters: Filters,
    query: DirectoryQuery,
  ): { entity: number; count: number }[] {
    const key = JSON.stringify([kind, filters, query.sort, query.direction]);
    let sorted = this.#sorted.get(key);
    if (sorted === undefined) {
      sorted = this.#sortedCounts(kind, selection, query);
      if (this.#sorted.size >= SORTED_CACHE_SIZE)
        this.#sorted.delete(this.#sorted.keys().next().value as string);
      this.#sorted.set(key, sorted);
    }
    return sorted;
  }

  #sortedCounts(
    kind: 'authors' | 'works',
    selection: Selection,
    query: DirectoryQuery,
  ): { entity: number; count: number }[] {
    const columns = this.#columns;
    const entities = kind === 'authors' ? this.#authors : this.#works;
    const rankOf = kind === 'authors' ? this.#authorRank : this.#workRank;
    const counts = new Float64Array(entities.length);
    if (selection.ords !== undefined) {
      for (const ord of selection.ords) {
        const rank = rankOf[columns.profileOf(ord)] as number;
        counts[rank] = (counts[rank] as number) + 1;
      }
    } else if (selection.lengths !== undefined) {
      const lengthCounts = selection.lengths.counts;
      for (const [i, profile] of (selection.profiles as Int32Array).entries()) {
        const rank = rankOf[profile] as number;
        counts[rank] = (counts[rank] as number) + (lengthCounts[i] as number);
      }
    } else if (selection.profiles === null) {
      for (let profile = 0; profile < columns.profileCount; profile++) {
        const rank = rankOf[profile] as number;
        counts[rank] = (counts[rank] as number) + (columns.profileSizes[profile] as number);
      }
    } else {
      for (const profile of selection.profiles) {
        const rank = rankOf[profile] as number;
        counts[rank] = (counts[rank] as number) + (columns.profileSizes[profile] as number);
      }
    }
    const rows: { entity: number; count: number; id: number; quote_count: number }[] = [];
    for (let rank = 0; rank < entities.length; rank++) {
      const count = counts[rank] as number;
      if (count > 0)
        rows.push({ entity: rank, count, id: (entities[rank] as Entity).id, quote_count: count });
    }
    rows.sort(compareEntries(query.sort, query.direction, (row) => (entities[row.entity] as Entity).folded));
    return rows;
  }
}

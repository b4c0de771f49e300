/**
 * Authors and works as resources: the part of the catalogue port behind `/authors`, `/works` and
 * their ids. Every answer is a function of the catalogue's quotes, stated here once, as the
 * reference model ({@link modelDirectory}) that every backend is tested against:
 *
 * - An author is an author_id with its name; a work is a work_id with its title and author. The
 *   quotes of either are those carrying its id.
 * - Lists take quote filters (`category`, `genre`, `language`, and the word-prefix filters on
 *   the name or title): an entry is listed when some matching quote is its, and its
 *   `quote_count` counts only the matching quotes. `total` is the exact number of such entries.
 * - Orders: `name` (a work's title) by folded form in code point order, as the quote sorts
 *   compare text; `quote_count`; or `id`. Remaining ties: id ascending, so pages never overlap.
 * - A work's `publish_date` is the one of its lowest-id quote (a work's quotes normally share it).
 * - An author's `categories` and a work's `genres`: the distinct folded values among its quotes,
 *   each spelled as its lowest-id quote holding it spells it, the most frequent first, then by
 *   folded value. An author's `works`: all of them, by publish_date (as a string), then id.
 * - Details count every quote of the author or work, whatever a list was filtered by.
 */
import { compareCodePoints, type Filters, fold, matches, type Quote, rankFacetValues } from './port.ts';

/** The orders of a directory list; `name` is the title for works. */
export const DIRECTORY_SORTS = ['name', 'quote_count', 'id'] as const;
export type DirectorySort = (typeof DIRECTORY_SORTS)[number];

/** Fields of an `/authors` item, in response order. */
export const AUTHOR_FIELDS = ['id', 'name', 'quote_count'] as const;
export type AuthorField = (typeof AUTHOR_FIELDS)[number];
/** Fields of a `/works` item, in response order. */
export const WORK_FIELDS = ['id', 'title', 'author', 'author_id', 'publish_date', 'quote_count'] as const;
export type WorkField = (typeof WORK_FIELDS)[number];

/**
 * A list request of authors or works: entries with a quote among those matching `filters`
 * (already folded and validated; only category, genre, language, author_like, work_like and,
 * for works, author_id are given), ordered by `sort` then id, one page of them.
 */
export interface DirectoryQuery {
  filters: Filters;
  sort: DirectorySort;
  direction: 'asc' | 'desc';
  page: number;
  limit: number;
}

export interface AuthorEntry {
  id: number;
  name: string;
  quote_count: number;
}

export interface WorkEntry {
  id: number;
  title: string;
  author: string;
  author_id: number;
  publish_date: string;
  quote_count: number;
}

export interface AuthorDetail extends AuthorEntry {
  categories: string[];
  works: { id: number; title: string; publish_date: string; quote_count: number }[];
}

export interface WorkDetail extends WorkEntry {
  genres: string[];
}

/** A page of entries and the exact number of entries matching (0: none; `items` empty past the last page). */
export interface DirectoryPage<T> {
  items: T[];
  total: number;
}

/**
 * Authors and works of the catalogue a backend serves. Errors as {@link CatalogueIndex}: a
 * `CatalogueUnavailableError` when the engine cannot answer (503), `null` or `total === 0` for
 * nothing found. Every call answers from one catalogue version.
 */
export interface Directory {
  authors(query: DirectoryQuery): Promise<DirectoryPage<AuthorEntry>>;
  works(query: DirectoryQuery): Promise<DirectoryPage<WorkEntry>>;
  author(id: number): Promise<AuthorDetail | null>;
  work(id: number): Promise<WorkDetail | null>;
}

/** Orders entries as {@link DirectoryQuery} says: `folded` gives the folded name or title. */
export function compareEntries<T extends { id: number; quote_count: number }>(
  sort: DirectorySort,
  direction: 'asc' | 'desc',
  folded: (entry: T) => string,
): (a: T, b: T) => number {
  const sign = direction === 'asc' ? 1 : -1;
  return (a, b) => {
    let c = 0;
    if (sort === 'name') c = compareCodePoints(folded(a), folded(b));
    else if (sort === 'quote_count') c = a.quote_count - b.quote_count;
    else c = a.id - b.id;
    return c !== 0 ? sign * c : a.id - b.id;
  };
}

/**
 * Distinct folded values, the most frequent first (then by folded value), each spelled as its
 * first holder spells it: each of `values` says where it stands first (a quote id or ord, lowest
 * first) and the number of quotes it stands for.
 */
export function spelledValues(values: Iterable<{ value: string; count: number; first: number }>): string[] {
  const seen = new Map<string, { value: string; count: number; first: number }>();
  for (const { value, count, first } of values) {
    const key = fold(value);
    const entry = seen.get(key);
    if (entry === undefined) seen.set(key, { value, count, first });
    else {
      entry.count += count;
      if (first < entry.first) {
        entry.value = value;
        entry.first = first;
      }
    }
  }
  return rankFacetValues([...seen.values()], (v) => fold(v.value), seen.size).map((v) => v.value);
}

/** An author's works as its detail lists them: by publish_date (as a string), then id. */
export function compareWorks(
  a: { id: number; publish_date: string },
  b: { id: number; publish_date: string },
) {
  return compareCodePoints(a.publish_date, b.publish_date) || a.id - b.id;
}

/** The page `query` asks for of entries already in its order, each made an item by `item`. */
export function pageOf<R, T>(
  sorted: readonly R[],
  query: DirectoryQuery,
  item: (row: R) => T,
): DirectoryPage<T> {
  const start = (query.page - 1) * query.limit;
  return { items: sorted.slice(start, start + query.limit).map(item), total: sorted.length };
}

/**
 * The reference model: every answer of a {@link Directory} computed from the quotes themselves,
 * by the rules of this module's comment. Slow and simple on purpose; tests compare backends to it.
 */
export function modelDirectory(all: readonly Quote[]): Directory {
  const quotes = [...all].sort((a, b) => a.id - b.id);
  const firstOfWork = new Map<number, Quote>();
  for (const q of quotes) if (!firstOfWork.has(q.work_id)) firstOfWork.set(q.work_id, q);
  const workEntry = (id: number, count: number): WorkEntry => {
    const first = firstOfWork.get(id) as Quote;
    return {
      id,
      title: first.work,
      author: first.author,
      author_id: first.author_id,
      publish_date: first.publish_date,
      quote_count: count,
    };
  };
  const countBy = (matching: Quote[], key: (q: Quote) => number) => {
    const counts = new Map<number, number>();
    for (const q of matching) counts.set(key(q), (counts.get(key(q)) ?? 0) + 1);
    return counts;
  };
  return {
    async authors(query) {
      const matching = quotes.filter((q) => matches(q, query.filters));
      const names = new Map(matching.map((q) => [q.author_id, q.author]));
      const entries = [...countBy(matching, (q) => q.author_id)].map(([id, count]) => ({
        id,
        name: names.get(id) as string,
        quote_count: count,
      }));
      entries.sort(compareEntries(query.sort, query.direction, (e) => fold(e.name)));
      return pageOf(entries, query, (entry) => entry);
    },
    async works(query) {
      const matching = quotes.filter((q) => matches(q, query.filters));
      const entries = [...countBy(matching, (q) => q.work_id)].map(([id, count]) => workEntry(id, count));
      entries.sort(compareEntries(query.sort, query.direction, (e) => fold(e.title)));
      return pageOf(entries, query, (entry) => entry);
    },
    async author(id) {
      const own = quotes.filter((q) => q.author_id === id);
      const first = own[0];
      if (first === undefined) return null;
      const works = [...countBy(own, (q) => q.work_id)]
        .map(([workId, count]) => {
          const { title, publish_date } = workEntry(workId, count);
          return { id: workId, title, publish_date, quote_count: count };
        })
        .sort(compareWorks);
      return {
        id,
        name: first.author,
        quote_count: own.length,
        categories: spelledValues(own.map((q) => ({ value: q.category, count: 1, first: q.id }))),
        works,
      };
    },
    async work(id) {
      const own = quotes.filter((q) => q.work_id === id);
      if (own.length === 0) return null;
      // A genre counts once per quote, as facets count it; spelled as the lowest-id quote has it.
      const genres = own.flatMap((q) =>
        q.genre
          .filter((g, i) => q.genre.findIndex((h) => fold(h) === fold(g)) === i)
          .map((value) => ({ value, count: 1, first: q.id })),
      );
      return { ...workEntry(id, own.length), genres: spelledValues(genres) };
    },
  };
}

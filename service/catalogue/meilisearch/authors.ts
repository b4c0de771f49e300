/**
 * Authors and works (authors.ts) on Meilisearch. The indexer builds two indexes beside the quotes
 * index, `<live>_authors` and `<live>_works`, one document per author and per work with its
 * counts, categories or genres, and works; it swaps all three in with one `swapIndexes` call,
 * so a reader never sees an author whose quotes are not live yet (meilisearch/builder.ts).
 *
 * Reads:
 * - a detail is one document of its index;
 * - a list filtered only by words of the name or title (and, for works, by author_id) is one
 *   `documents/fetch` of its index, sorted and paged by the engine with an exact total;
 * - a list filtered by the quotes' category, genre or language counts the matching quotes per
 *   author_id (work_id) with one facet search of the quotes index, then names, sorts and pages
 *   them here, from the index's names and titles read once per catalogue version.
 */
import {
  type AuthorDetail,
  type AuthorEntry,
  compareEntries,
  compareWorks,
  type Directory,
  type DirectoryPage,
  type DirectoryQuery,
  pageOf,
  spelledValues,
  type WorkDetail,
  type WorkEntry,
} from '../authors.ts';
import { CatalogueUnavailableError, type Filters, fold, type Quote } from '../port.ts';
import {
  buildFilter,
  chunkAttributes,
  type FetchRequest,
  type FetchResponse,
  facetKey,
  filterExpression,
  isCount,
  isText,
  isTexts,
  MAX_SORT_CHUNKS,
  MAX_TOTAL_HITS,
  prefixKeys,
  quoteFilterValue,
  type SortChunks,
  sortAttributesOf,
  sortChunks,
} from './request.ts';

/** Uids of the directory indexes of a live quotes index. */
export function directoryUids(live: string): { authors: string; works: string } {
  return { authors: `${live}_authors`, works: `${live}_works` };
}

export interface MeiliAuthorDocument extends AuthorDetail {
  /** The folded name, in chunks when long (`name_sort_2`...; meilisearch/request.ts, sortChunks). */
  name_sort: string;
  [chunk: `name_sort_${number}`]: string;
  name_prefixes: string[];
  catalogue_version: string;
}

export interface MeiliWorkDocument extends WorkDetail {
  title_sort: string;
  [chunk: `title_sort_${number}`]: string;
  title_prefixes: string[];
  catalogue_version: string;
}

const DIRECTORY_BASE = {
  typoTolerance: { enabled: false },
  facetSearch: false,
  pagination: { maxTotalHits: MAX_TOTAL_HITS },
} as const;

/** Settings of `<live>_authors`, applied before its documents. */
export const AUTHORS_SETTINGS = {
  ...DIRECTORY_BASE,
  searchableAttributes: ['name'],
  filterableAttributes: ['id', 'name_prefixes'],
  sortableAttributes: ['id', ...chunkAttributes('name_sort', MAX_SORT_CHUNKS), 'quote_count'],
};

/** Settings of `<live>_works`, applied before its documents. */
export const WORKS_SETTINGS = {
  ...DIRECTORY_BASE,
  searchableAttributes: ['title'],
  filterableAttributes: ['id', 'title_prefixes', 'author_id'],
  sortableAttributes: ['id', ...chunkAttributes('title_sort', MAX_SORT_CHUNKS), 'quote_count'],
};

/** A folded value's count so far and its spelling by the lowest quote id holding it. */
interface Spelling {
  value: string;
  first: number;
  count: number;
}

interface AuthorTally {
  name: string;
  count: number;
  categories: Map<string, Spelling>;
  works: Map<number, number>;
}

interface WorkTally {
  title: string;
  author: string;
  authorId: number;
  /** publish_date of the lowest-id quote, and that id. */
  date: string;
  firstId: number;
  count: number;
  genres: Map<string, Spelling>;
}

/**
 * Gathers, while the quotes stream into a build, everything the directory documents hold: a few
 * values per author and per work, whatever the number of quotes.
 */
export class DirectoryCollector {
  readonly #authors = new Map<number, AuthorTally>();
  readonly #works = new Map<number, WorkTally>();

  add(quote: Quote): void {
    let author = this.#authors.get(quote.author_id);
    if (author === undefined) {
      author = { name: quote.author, count: 0, categories: new Map(), works: new Map() };
      this.#authors.set(quote.author_id, author);
    }
    author.count++;
    author.works.set(quote.work_id, (author.works.get(quote.work_id) ?? 0) + 1);
    spell(author.categories, quote.category, quote.id);
    let work = this.#works.get(quote.work_id);
    if (work === undefined) {
      work = {
        title: quote.work,
        author: quote.author,
        authorId: quote.author_id,
        date: quote.publish_date,
        firstId: quote.id,
        count: 0,
        genres: new Map(),
      };
      this.#works.set(quote.work_id, work);
    } else if (quote.id < work.firstId) {
      work.date = quote.publish_date;
      work.firstId = quote.id;
    }
    work.count++;
    const seen = new Set<string>();
    for (const genre of quote.genre) {
      const key = fold(genre);
      if (seen.has(key)) continue;
      seen.add(key);
      spell(work.genres, genre, quote.id);
    }
  }

  get authorCount(): number {
    return this.#authors.size;
  }

  get workCount(): number {
    return this.#works.size;
  }

  /**
   * The documents of each index, marked with the build's catalogue version, made one at a time:
   * at the end of a large build the heap holds the tallies and one document, not both indexes.
   */
  *workDocuments(version: string): Generator<MeiliWorkDocument> {
    for (const [id, w] of this.#works) {
      yield {
        id,
        title: w.title,
        author: w.author,
        author_id: w.authorId,
        publish_date: w.date,
        quote_count: w.count,
        genres: spelledValues(w.genres.values()),
        title_sort: '',
        ...sortAttributesOf('title_sort', sortChunks(fold(w.title))),
        title_prefixes: prefixKeys(w.title),
        catalogue_version: version,
      };
    }
  }

  *authorDocuments(version: string): Generator<MeiliAuthorDocument> {
    for (const [id, a] of this.#authors) {
      yield {
        id,
        name: a.name,
        quote_count: a.count,
        categories: spelledValues(a.categories.values()),
        works: [...a.works]
          .map(([workId, count]) => {
            const work = this.#works.get(workId) as WorkTally;
            return { id: workId, title: work.title, publish_date: work.date, quote_count: count };
          })
          .sort(compareWorks),
        name_sort: '',
        ...sortAttributesOf('name_sort', sortChunks(fold(a.name))),
        name_prefixes: prefixKeys(a.name),
        catalogue_version: version,
      };
    }
  }
}

function spell(spellings: Map<string, Spelling>, value: string, id: number): void {
  const key = fold(value);
  const known = spellings.get(key);
  if (known === undefined) spellings.set(key, { value, first: id, count: 1 });
  else {
    known.count++;
    if (id < known.first) {
      known.value = value;
      known.first = id;
    }
  }
}

// ---- Reads --------------------------------------------------------------------------------------

/** What the directory reader needs of the catalogue adapter: its engine calls, errors mapped. */
export interface DirectoryEngine {
  /** `POST indexes/{uid}/documents/fetch`. */
  fetch<T>(index: string, request: FetchRequest): Promise<FetchResponse<T>>;
  /**
   * The sort chunks of the catalogue served (meilisearch/request.ts, SortChunks). A name is the
   * author of a quote and a title its work, so neither takes more chunks than the quotes' own.
   */
  sortChunks(): Promise<SortChunks>;
  /** `POST indexes/{quotes}/search`. */
  search(request: object): Promise<{
    hits: { catalogue_version?: string }[];
    facetDistribution?: Record<string, Record<string, number>>;
  }>;
}

const AUTHOR_LIST_FIELDS = ['id', 'name', 'quote_count'];
const WORK_LIST_FIELDS = ['id', 'title', 'author', 'author_id', 'publish_date', 'quote_count'];
const AUTHOR_DETAIL_FIELDS = ['id', 'name', 'quote_count', 'categories', 'works'];
const WORK_DETAIL_FIELDS = [...WORK_LIST_FIELDS, 'genres'];
/** Documents per read when the names of a whole index are gathered. */
const NAMES_PAGE = 1_000;
/** Reads of a filtered list before giving up while the catalogue keeps changing. */
const ATTEMPTS = 3;

interface Names {
  version: string;
  /** id → the list entry without its count, and the folded name or title. */
  entries: Map<number, { entry: Record<string, unknown>; folded: string }>;
}

export class MeiliDirectory implements Directory {
  readonly #engine: DirectoryEngine;
  readonly #uids: { authors: string; works: string };
  readonly #names = new Map<'authors' | 'works', Promise<Names>>();

  constructor(engine: DirectoryEngine, live: string) {
    this.#engine = engine;
    this.#uids = directoryUids(live);
  }

  author(id: number): Promise<AuthorDetail | null> {
    return this.#detail('authors', id, AUTHOR_DETAIL_FIELDS);
  }

  work(id: number): Promise<WorkDetail | null> {
    return this.#detail('works', id, WORK_DETAIL_FIELDS);
  }

  /** The document of one author or work, or null when its index has none with this id. */
  async #detail<T>(kind: 'authors' | 'works', id: number, fields: string[]): Promise<T | null> {
    const response = await this.#engine.fetch<T>(this.#uids[kind], {
      filter: `id = ${id}`,
      offset: 0,
      limit: 1,
      fields,
    });
    const hit = response.results[0];
    return hit === undefined ? null : pick(hit as object, fields);
  }

  authors(query: DirectoryQuery): Promise<DirectoryPage<AuthorEntry>> {
    return this.#list('authors', query) as Promise<DirectoryPage<AuthorEntry>>;
  }

  works(query: DirectoryQuery): Promise<DirectoryPage<WorkEntry>> {
    return this.#list('works', query) as Promise<DirectoryPage<WorkEntry>>;
  }

  async #list(kind: 'authors' | 'works', query: DirectoryQuery): Promise<DirectoryPage<object>> {
    const { filters } = query;
    const quoteFilters = (['category', 'genre', 'language'] as const).some(
      (f) => (filters[f]?.length ?? 0) > 0,
    );
    if (!quoteFilters) return this.#direct(kind, query);
    return this.#counted(kind, query);
  }

  /** Entries of the directory index itself: words of the name, author_id; sorted and paged by the engine. */
  async #direct(kind: 'authors' | 'works', query: DirectoryQuery): Promise<DirectoryPage<object>> {
    const { filters } = query;
    const parts: string[] = [];
    const like = kind === 'authors' ? filters.author_like : filters.work_like;
    const prefixAttribute = kind === 'authors' ? 'name_prefixes' : 'title_prefixes';
    if (like !== undefined && like.length > 0) {
      parts.push(
        like
          .map((words) =>
            words.map((w) => `${prefixAttribute} = ${quoteFilterValue(facetKey(w))}`).join(' AND '),
          )
          .map((clause) => `(${clause})`)
          .join(' OR '),
      );
    }
    if (kind === 'works' && filters.author_id !== undefined && filters.author_id.length > 0) {
      parts.push(`author_id IN [${filters.author_id.join(', ')}]`);
    }
    const sortAttributes =
      query.sort === 'name'
        ? chunkAttributes(
            kind === 'authors' ? 'name_sort' : 'title_sort',
            (await this.#engine.sortChunks())[kind === 'authors' ? 'author' : 'work'] ?? 1,
          )
        : [query.sort];
    const sort = sortAttributes.map((attribute) => `${attribute}:${query.direction}`);
    if (query.sort !== 'id') sort.push('id:asc');
    const fields = kind === 'authors' ? AUTHOR_LIST_FIELDS : WORK_LIST_FIELDS;
    const request: FetchRequest = {
      sort,
      offset: (query.page - 1) * query.limit,
      limit: query.limit,
      fields,
    };
    const filter = filterExpression(parts);
    const response = await this.#engine.fetch<object>(
      this.#uids[kind],
      filter === undefined ? request : { filter, ...request },
    );
    return { items: response.results.map((hit) => pick(hit, fields)), total: response.total };
  }

  /**
   * Entries counted among the matching quotes: one facet search of the quotes index, whose one hit
   * says the catalogue version, then the names of that version.
   */
  async #counted(kind: 'authors' | 'works', query: DirectoryQuery): Promise<DirectoryPage<object>> {
    const attribute = kind === 'authors' ? 'author_id' : 'work_id';
    const filter = filterExpression(buildFilter(query.filters as Filters));
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const answer = await this.#engine.search({
        ...(filter === undefined ? {} : { filter }),
        facets: [attribute],
        page: 1,
        hitsPerPage: 1,
        attributesToRetrieve: ['catalogue_version'],
      });
      const version = answer.hits[0]?.catalogue_version;
      if (version === undefined) return { items: [], total: 0 };
      const names = await this.#namesOf(kind, version);
      if (names.version !== version) continue;
      const rows: { id: number; quote_count: number; folded: string; entry: Record<string, unknown> }[] = [];
      for (const [key, count] of Object.entries(answer.facetDistribution?.[attribute] ?? {})) {
        const known = names.entries.get(Number(key));
        if (known === undefined) {
          throw new CatalogueUnavailableError(`the ${kind} index lacks ${attribute} ${key}: run the indexer`);
        }
        rows.push({ id: Number(key), quote_count: count, folded: known.folded, entry: known.entry });
      }
      rows.sort(compareEntries(query.sort, query.direction, (row) => row.folded));
      return pageOf(rows, query, (row) => ({ ...row.entry, quote_count: row.quote_count }));
    }
    throw new CatalogueUnavailableError(`the catalogue kept changing while ${kind} were counted`);
  }

  /** The names (titles) of an index, read once per catalogue version. */
  async #namesOf(kind: 'authors' | 'works', version: string): Promise<Names> {
    const cached = this.#names.get(kind);
    if (cached !== undefined) {
      const names = await cached.catch(() => undefined);
      if (names?.version === version) return names;
    }
    const loading = this.#loadNames(kind);
    this.#names.set(kind, loading);
    loading.catch(() => this.#names.delete(kind));
    return loading;
  }

  async #loadNames(kind: 'authors' | 'works'): Promise<Names> {
    const listFields = kind === 'authors' ? AUTHOR_LIST_FIELDS : WORK_LIST_FIELDS;
    const nameField = kind === 'authors' ? 'name' : 'title';
    const fields = [...listFields.filter((f) => f !== 'quote_count'), 'catalogue_version'];
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const entries = new Map<number, { entry: Record<string, unknown>; folded: string }>();
      let version: string | undefined;
      let mixed = false;
      for (let offset = 0; ; offset += NAMES_PAGE) {
        const page = await this.#engine.fetch<Record<string, unknown>>(this.#uids[kind], {
          sort: ['id:asc'],
          offset,
          limit: NAMES_PAGE,
          fields,
        });
        for (const hit of page.results) {
          version ??= hit.catalogue_version as string;
          if (hit.catalogue_version !== version) mixed = true;
          const entry = pick<Record<string, unknown>>(
            hit,
            listFields.filter((f) => f !== 'quote_count'),
          );
          // Folded here: the index holds long names only in sort chunks.
          entries.set(hit.id as number, { entry, folded: fold(hit[nameField] as string) });
        }
        if (mixed || offset + NAMES_PAGE >= page.total) break;
      }
      // A swap between two pages mixes versions: read them all again.
      if (!mixed && version !== undefined) return { version, entries };
    }
    throw new CatalogueUnavailableError(`the catalogue kept changing while the ${kind} were read`);
  }
}

/** Exactly `fields` of a hit, in that order; a missing one means an index built by an earlier release. */
function pick<T>(hit: object, fields: readonly string[]): T {
  const source = hit as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const value = source[field];
    if (value === undefined || value === null) {
      throw new CatalogueUnavailableError(
        `a directory document has no '${field}': run the indexer to rebuild it`,
      );
    }
    // The response schema would coerce a name written as a number into an answer that looks
    // right: such a document is not one the indexer wrote.
    if (!(DIRECTORY_FIELD_TYPES[field]?.(value) ?? true)) {
      throw new CatalogueUnavailableError(
        `a directory document has a '${field}' of another type: run the indexer to rebuild it`,
      );
    }
    out[field] = value;
  }
  return out as T;
}

const isWorks = (value: unknown): boolean =>
  Array.isArray(value) &&
  value.every(
    (work: Record<string, unknown> | null) =>
      typeof work === 'object' &&
      work !== null &&
      isCount(work.id) &&
      isText(work.title) &&
      isText(work.publish_date) &&
      isCount(work.quote_count),
  );

/** What each field of a directory document the indexer wrote holds. */
const DIRECTORY_FIELD_TYPES: Record<string, (value: unknown) => boolean> = {
  id: isCount,
  name: isText,
  title: isText,
  author: isText,
  author_id: isCount,
  publish_date: isText,
  quote_count: isCount,
  categories: isTexts,
  genres: isTexts,
  works: isWorks,
};

/**
 * The query engine of the embedded catalogue: filters, exact totals, sorted pages and uniform
 * random picks, computed over the catalogue's columns held in memory (layout: sqlite/schema.ts).
 * SQLite itself serves only the texts of returned quotes (sqlite/catalogue.ts).
 *
 * Why in memory: node:sqlite is synchronous, so one slow query stalls every connection, and the
 * load-test mix (exact totals of any filter combination, multi-key sorts, correlated filters and
 * sort keys) has no SQL plan that is fast for every request at a million quotes. Here every
 * answer costs at most a pass over the quotes (about 1 ms per million), usually microseconds.
 *
 * Filters: every filter reads a profile field, so a filter set selects profiles. Each filter
 * value maps to a rank, each rank to its profiles (CSR lists derived at load), and the filter
 * with the fewest candidate profiles drives: its candidates are checked against the others. The
 * exact total is the sum of the matching profiles' sizes.
 *
 * Pages: the sort keys are taken in order, narrowing the matches to the groups the page falls in,
 * and never sorting a group that lies wholly before or after the page:
 * - a profile key (author, author_id, work, work_id, category, genre, publish_date) splits the
 *   matching profiles by rank with exact group sizes (precomputed prefix sums when unfiltered);
 * - `quote_length` takes runs of equal length: from the quotes ordered by (length, id) when
 *   unfiltered; when filtered, either by walking that order and keeping matches, or by collecting
 *   the matches, whichever visits fewer quotes;
 * - `id` ends every sort: the ords of the group in order, read by walking all quotes and keeping
 *   matches, by merging the profiles' ascending ord lists, or by collecting and sorting them.
 * Once a group is an explicit set of quotes, later keys split it by counting ranks (stable), so a
 * set already in id order stays so. The cheapest strategy is picked from exact counts; tests can
 * force each one ({@link Strategies}).
 */
import type { Filters, SortKey } from '../port.ts';
import { publishDay } from '../ranges.ts';
import { drawDistinct } from '../sample.ts';
import {
  allBelow,
  findFirst,
  findNumber,
  findText,
  intersectAscending,
  present,
  upperBound,
} from './arrays.ts';
import { PageReader } from './page.ts';
import {
  type Columns,
  DISPLAY_FIELDS,
  PREFIX_END,
  PROFILE_KEYS,
  type ProfileKey,
  rankColumn,
  type TextDictionary,
} from './schema.ts';
/** Fields whose values are held once per distinct value, and referred to by code. */
export type CodedField = 'author' | 'work' | 'category' | 'genre' | 'publish_date' | 'language';

/**
 * Quotes matching a filter set: their profiles (null: all of them) and exact number. A length
 * range selects quotes within profiles: such a selection lists its quotes instead, as `ords` in
 * id order (and `profiles` is then empty).
 */
export interface Selection {
  profiles: Int32Array | null;
  total: number;
  ords?: Int32Array;
  /** A length range: only the quotes of `profiles` (then never null) within it are selected. */
  lengths?: LengthRange;
}

/** The selection of an explicit set of quotes (the matches of a search), their ords ascending. */
export function selectionOf(ords: Int32Array): Selection {
  return { profiles: new Int32Array(0), total: ords.length, ords };
}

/**
 * Quotes whose length rank lies in [lo, hi), and per profile of the selection (in its order) how
 * many of its quotes do: a profile's are a run of its quotes ordered by length.
 */
export interface LengthRange {
  lo: number;
  hi: number;
  counts: Int32Array;
}

/** Forces a strategy (tests); by default each one is chosen by its estimated cost. */
export interface Strategies {
  /** Reading a filtered group in id order. */
  id?: 'walk' | 'merge' | 'collect';
  /** Reading a filtered group in quote_length order. */
  length?: 'walk' | 'collect';
}

/** One filter as ranks of one key; `genre_set` is the any-element genre filter. */
type ConstraintKey = ProfileKey | 'genre_set' | 'language';
/** Profile fields a filter reads by rank: the profile sort keys and `language`. */
type RankedKey = ProfileKey | 'language';

/** Words of author names or work titles in code point order, each with its entities' ranks (CSR). */
interface WordIndex {
  words: string[];
  start: Int32Array;
  ranks: Int32Array;
}

/** Rank → profiles (CSR), and prefix sums of the groups' quote counts. */
export interface Groups {
  start: Int32Array;
  profiles: Int32Array;
  cumulative: Float64Array;
}

/** The catalogue's columns with the lists derived from them at load, and the queries over them. */
export class CatalogueColumns {
  /** Number of quotes. */
  readonly count: number;
  readonly #c: Columns;
  readonly #profileCount: number;
  readonly #dictionaries: Record<TextDictionary, string[]>;
  readonly #groups: Record<RankedKey, Groups>;
  readonly #genreMembers: Groups;
  /** Prefix sums of quotes per length rank: the runs of `length_order`. */
  readonly #lengthCumulative: Float64Array;
  readonly #ranks: Record<RankedKey, Int32Array>;
  readonly #words: Record<'author' | 'work', WordIndex>;
  /** Display strings by code, genre arrays parsed once. */
  readonly #display: { author: string[]; work: string[]; category: string[]; genre: string[][] };
  /** Per word index: words of a `_like` value matched so far, per entity; entities already chosen. */
  readonly #wordHits: Record<'author' | 'work', { hits: Int32Array; chosen: Uint8Array }>;
  /** Membership of a profile set (value === epoch), for walks; and de-duplication in select(). */
  readonly #mark: Int32Array;
  readonly #seen: Int32Array;
  #epoch = 0;
  /** Per-key scratch, zero between uses: allowed ranks of a filter, group sizes of a split. */
  readonly #allowed = new Map<ConstraintKey, Uint8Array>();
  readonly #scratch = new Map<Exclude<SortKey['field'], 'id'>, { sizes: Float64Array; slots: Int32Array }>();
  /** Number of quotes of each profile. */
  readonly profileSizes: Int32Array;
  /** CSR over profile_start: each profile's ords in (quote_length, id) order. */
  readonly #byLengthOrds: Int32Array;
  /** Per profile, the length ranks of its shortest and longest quotes. */
  readonly #shortest: Int32Array;
  readonly #longest: Int32Array;

  /** Checks the columns fit together and derives the group lists. Throws on an inconsistent file. */
  constructor(columns: Columns, dictionaries: Record<TextDictionary, string[]>) {
    this.#c = columns;
    this.#dictionaries = dictionaries;
    const n = columns.ids.length;
    const p = columns.profile_start.length - 1;
    this.count = n;
    this.#profileCount = p;
    const expect = (ok: boolean, what: string) => {
      if (!ok) throw new Error(`inconsistent catalogue columns: ${what}`);
    };
    expect(p >= 0, 'profile_start is empty');
    for (const name of ['profile', 'length_rank', 'length_order', 'profile_ords'] as const) {
      expect(columns[name].length === n, `${name} holds ${columns[name].length} values for ${n} quotes`);
    }
    expect(columns.profile_start[p] === n, 'profile_start does not end at the quote count');
    // Every value used as an index is checked once here, so that no query can read out of bounds.
    expect(allBelow(columns.profile, p), 'profile is out of the profiles');
    expect(allBelow(columns.length_rank, columns.lengths.length), 'length_rank is out of its dictionary');
    expect(
      allBelow(columns.length_order, n) && allBelow(columns.profile_ords, n),
      'an ord list is out of range',
    );
    expect(
      allBelow(columns.genre_set_start, columns.genre_set.length + 1),
      'genre_set_start is out of range',
    );
    expect(columns.genre_set_start.length === p + 1, 'genre_set_start does not match the profiles');
    const sizes: Record<ProfileKey, number> = {
      author: dictionaries.author.length,
      author_id: columns.author_ids.length,
      work: dictionaries.work.length,
      work_id: columns.work_ids.length,
      category: dictionaries.category.length,
      genre: dictionaries.genre.length,
      publish_date: dictionaries.publish_date.length,
    };
    const ranks = {} as Record<RankedKey, Int32Array>;
    const groups = {} as Record<RankedKey, Groups>;
    for (const key of PROFILE_KEYS) {
      const rank = columns[rankColumn(key)];
      expect(rank.length === p, `${rankColumn(key)} does not match the profiles`);
      ranks[key] = rank;
      groups[key] = this.#groupProfiles(sizes[key], null, rank);
    }
    expect(columns.rank_language.length === p, 'rank_language does not match the profiles');
    expect(
      allBelow(columns.rank_language, dictionaries.language.length),
      'rank_language is out of its dictionary',
    );
    ranks.language = columns.rank_language;
    groups.language = this.#groupProfiles(dictionaries.language.length, null, columns.rank_language);
    this.#ranks = ranks;
    this.#groups = groups;
    this.#genreMembers = this.#groupProfiles(sizes.genre, columns.genre_set_start, columns.genre_set);
    const lengthCumulative = new Float64Array(columns.lengths.length + 1);
    for (const rank of columns.length_rank) {
      lengthCumulative[rank + 1] = (lengthCumulative[rank + 1] as number) + 1;
    }
    for (let r = 0; r < columns.lengths.length; r++) {
      lengthCumulative[r + 1] = (lengthCumulative[r + 1] as number) + (lengthCumulative[r] as number);
    }
    this.#lengthCumulative = lengthCumulative;
    this.#mark = new Int32Array(p);
    this.#seen = new Int32Array(p);
    this.profileSizes = new Int32Array(p);
    for (let profile = 0; profile < p; profile++) {
      const size =
        (columns.profile_start[profile + 1] as number) - (columns.profile_start[profile] as number);
      expect(size > 0, 'a profile has no quote');
      this.profileSizes[profile] = size;
    }
    expect(columns.profile_start[0] === 0, 'profile_start does not start at 0');
    // length_order is in (length, id) order: dealt to the profiles, each one's quotes stay so.
    this.#byLengthOrds = new Int32Array(n);
    const next = columns.profile_start.slice(0, p);
    for (const ord of columns.length_order) {
      const profile = columns.profile[ord] as number;
      this.#byLengthOrds[next[profile] as number] = ord;
      next[profile] = (next[profile] as number) + 1;
    }
    this.#shortest = new Int32Array(p);
    this.#longest = new Int32Array(p);
    for (let profile = 0; profile < p; profile++) {
      const from = columns.profile_start[profile] as number;
      const to = columns.profile_start[profile + 1] as number;
      this.#shortest[profile] = columns.length_rank[this.#byLengthOrds[from] as number] as number;
      this.#longest[profile] = columns.length_rank[this.#byLengthOrds[to - 1] as number] as number;
    }
    const wordIndex = (kind: 'author' | 'work', size: number): WordIndex => {
      const words = dictionaries[`${kind}_words`];
      const start = columns[`${kind}_word_start`];
      const entities = columns[`${kind}_word_ranks`];
      expect(start.length === words.length + 1, `${kind}_word_start does not match its words`);
      expect(start[words.length] === entities.length, `${kind}_word_start does not end at its ranks`);
      expect(allBelow(start, entities.length + 1), `${kind}_word_start is out of range`);
      expect(
        entities.every((r) => r >= 0 && r < size),
        `${kind}_word_ranks is out of its dictionary`,
      );
      return { words, start, ranks: entities };
    };
    this.#words = { author: wordIndex('author', sizes.author_id), work: wordIndex('work', sizes.work_id) };
    const genres = dictionaries.display_genre.map((json) => {
      const genre: unknown = JSON.parse(json);
      expect(
        Array.isArray(genre) && genre.every((g) => typeof g === 'string'),
        'display_genre holds a value that is not a list of strings',
      );
      return genre as string[];
    });
    this.#display = {
      author: dictionaries.display_author,
      work: dictionaries.display_work,
      category: dictionaries.display_category,
      genre: genres,
    };
    for (const field of DISPLAY_FIELDS) {
      const size = dictionaries[field].length;
      expect(columns[field].length === p, `${field} does not match the profiles`);
      expect(
        columns[field].every((code) => code >= 0 && code < size),
        `${field} is out of its dictionary`,
      );
    }
    this.#wordHits = {
      author: { hits: new Int32Array(sizes.author_id), chosen: new Uint8Array(sizes.author_id) },
      work: { hits: new Int32Array(sizes.work_id), chosen: new Uint8Array(sizes.work_id) },
    };
  }

  /** The quotes matching `filters`, with their exact number. */
  select(filters: Filters): Selection {
    const selection = this.#selectProfiles(filters);
    const min = filters.ranges?.min_length;
    const max = filters.ranges?.max_length;
    return min === undefined && max === undefined ? selection : this.#withinLengths(selection, min, max);
  }

  /**
   * The quotes of a profile selection whose length lies in [min, max]: the profiles holding
   * such quotes, with their numbers, counted by two binary searches per profile in its quotes
   * ordered by length. No quote is listed: a page, a draw or a count reads the quotes it needs
   * (see {@link LengthRange}).
   */
  #withinLengths(selection: Selection, min: number | undefined, max: number | undefined): Selection {
    const lengths = this.#c.lengths;
    const lo = min === undefined ? 0 : upperBound(lengths, min - 1);
    const hi = max === undefined ? lengths.length : upperBound(lengths, max);
    if (lo === 0 && hi === lengths.length) return selection;
    const empty = { profiles: new Int32Array(0), total: 0 };
    if (lo >= hi || selection.total === 0) return empty;
    const candidates = selection.profiles;
    const size = candidates === null ? this.#profileCount : candidates.length;
    const profiles = new Int32Array(size);
    const counts = new Int32Array(size);
    let kept = 0;
    let total = 0;
    const starts = this.#c.profile_start;
    for (let i = 0; i < size; i++) {
      const profile = candidates === null ? i : (candidates[i] as number);
      const from = starts[profile] as number;
      const to = starts[profile + 1] as number;
      // Most profiles lie wholly inside or outside a wide range: their ends tell, no search.
      const shortest = this.#shortest[profile] as number;
      const longest = this.#longest[profile] as number;
      let count: number;
      if (shortest >= lo && longest < hi) count = to - from;
      else if (longest < lo || shortest >= hi) count = 0;
      else count = this.#lengthBound(from, to, hi) - this.#lengthBound(from, to, lo);
      if (count === 0) continue;
      profiles[kept] = profile;
      counts[kept++] = count;
      total += count;
    }
    if (total === 0) return empty;
    return {
      profiles: profiles.subarray(0, kept),
      total,
      lengths: { lo, hi, counts: counts.subarray(0, kept) },
    };
  }

  /**
   * The quotes of `profile` whose length rank lies in [lo, hi): positions [a, b) of its run of
   * {@link byLength}.
   */
  lengthRun(profile: number, lo: number, hi: number): [number, number] {
    const starts = this.#c.profile_start;
    const from = starts[profile] as number;
    const to = starts[profile + 1] as number;
    return [this.#lengthBound(from, to, lo), this.#lengthBound(from, to, hi)];
  }

  /** First position in [from, to) of {@link byLength} whose quote's length rank is at least `rank`. */
  #lengthBound(from: number, to: number, rank: number): number {
    const ords = this.#byLengthOrds;
    const ranks = this.#c.length_rank;
    let lo = from;
    let hi = to;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((ranks[ords[mid] as number] as number) < rank) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** CSR over `profile_start`: each profile's ords in (quote_length, id) order. */
  get byLength(): Int32Array {
    return this.#byLengthOrds;
  }

  /** Calls `visit` with every quote of a length-range selection, profile by profile. */
  forEachInLengths(selection: Selection, visit: (ord: number) => void): void {
    const { lo, hi } = selection.lengths as LengthRange;
    const ords = this.#byLengthOrds;
    for (const profile of selection.profiles as Int32Array) {
      const [a, b] = this.lengthRun(profile, lo, hi);
      for (let i = a; i < b; i++) visit(ords[i] as number);
    }
  }

  /** The quotes of a length-range selection in id order (a walk over all quotes, or a sort of them). */
  #lengthOrds(selection: Selection): Int32Array {
    const { lo, hi } = selection.lengths as LengthRange;
    const out = new Int32Array(selection.total);
    let found = 0;
    if (selection.total * Math.log2(selection.total + 1) <= this.count) {
      this.forEachInLengths(selection, (ord) => {
        out[found++] = ord;
      });
      return out.sort();
    }
    const { epoch, first, last } = this.markProfiles(selection.profiles as Int32Array);
    const mark = this.#mark;
    const rank = this.#c.length_rank;
    const profileOf = this.#c.profile;
    for (let ord = first; ord <= last; ord++) {
      const r = rank[ord] as number;
      if (r >= lo && r < hi && mark[profileOf[ord] as number] === epoch) out[found++] = ord;
    }
    return out;
  }

  /**
   * Positions [offset, offset + count) of a length-range selection in `sort` order, read by
   * walking the quotes in id order or in (length, id) order as far as the page, when the sort
   * starts with `id` or `quote_length`; any other sort splits the quotes of the selection.
   */
  #lengthPage(
    selection: Selection,
    sort: readonly SortKey[],
    offset: number,
    count: number,
    reader: PageReader,
    out: number[],
  ): void {
    const key = sort[0] as SortKey;
    const want = offset + count;
    const walkCost = Math.min(this.count, (want * this.count) / selection.total);
    const gatherCost = selection.total * Math.log2(selection.total + 1);
    if ((key.field !== 'id' && key.field !== 'quote_length') || gatherCost < walkCost) {
      reader.ords(this.#lengthOrds(selection), true, sort, offset, count, out);
      return;
    }
    const { lo, hi } = selection.lengths as LengthRange;
    const { epoch, first, last } = this.markProfiles(selection.profiles as Int32Array);
    const mark = this.#mark;
    const profileOf = this.#c.profile;
    const desc = key.direction === 'desc';
    let seen = 0;
    if (key.field === 'id') {
      const rank = this.#c.length_rank;
      const step = desc ? -1 : 1;
      for (let ord = desc ? last : first; seen < want; ord += step) {
        const r = rank[ord] as number;
        if (r < lo || r >= hi || mark[profileOf[ord] as number] !== epoch) continue;
        if (seen >= offset) out.push(ord);
        seen++;
      }
      return;
    }
    reader.markedByLength(epoch, lo, hi, desc, sort.slice(1), offset, count, out);
  }

  /**
   * The quotes at positions of [0, total) of a selection: for profiles, profile by profile (and
   * by length within each, for a length range), in one pass over the profiles for all positions.
   */
  #ordsAt(selection: Selection, positions: number[]): number[] {
    if (selection.lengths !== undefined) {
      const { lo, hi, counts } = selection.lengths;
      const profiles = selection.profiles as Int32Array;
      return profileOrdsAt(
        positions,
        profiles.length,
        (i) => counts[i] as number,
        (i) => this.lengthRun(profiles[i] as number, lo, hi)[0],
        this.#byLengthOrds,
      );
    }
    if (selection.ords !== undefined) return positions.map((p) => selection.ords?.[p] as number);
    if (selection.profiles === null) return positions;
    const profiles = selection.profiles;
    const starts = this.#c.profile_start;
    const start = (i: number) => starts[profiles[i] as number] as number;
    return profileOrdsAt(
      positions,
      profiles.length,
      (i) => (starts[(profiles[i] as number) + 1] as number) - start(i),
      start,
      this.#c.profile_ords,
    );
  }

  /** Per publish_date rank, the day number of the date's first day; computed on first use. */
  #publishDays: Float64Array | undefined;

  /**
   * Ranks of the publish dates whose first day lies in [from, to] (day numbers). Dates sort as
   * strings, which orders their first days too (a partial date sorts before the full dates of its
   * period, and shares its first day with the earliest of them), so the ranks form one run.
   */
  #publishRanks(from: number | undefined, to: number | undefined): number[] {
    if (this.#publishDays === undefined) {
      this.#publishDays = Float64Array.from(this.#dictionaries.publish_date, (date) => {
        const day = publishDay(date);
        if (day === undefined) throw new Error(`inconsistent catalogue: '${date}' is not a publish date`);
        return day;
      });
    }
    const days = this.#publishDays;
    const lo = from === undefined ? 0 : upperBound(days, from - 1);
    const hi = to === undefined ? days.length : upperBound(days, to);
    const out: number[] = [];
    for (let rank = lo; rank < hi; rank++) out.push(rank);
    return out;
  }

  #selectProfiles(filters: Filters): Selection {
    const constraints = new Map<ConstraintKey, number[]>();
    const add = (key: ConstraintKey, ranks: Iterable<number>) => {
      const previous = constraints.get(key);
      // A run of ranks (a date range) is distinct already, and the only constraint on its key.
      if (previous === undefined && Array.isArray(ranks) && key === 'publish_date') {
        constraints.set(key, ranks);
        return;
      }
      const wanted = new Set(ranks);
      // Two filters on one key (author_id and author_like) must both hold: intersect.
      constraints.set(key, previous === undefined ? [...wanted] : previous.filter((r) => wanted.has(r)));
    };
    const texts = (key: TextDictionary, values: readonly string[]) =>
      values.map((v) => findText(this.#dictionaries[key], v)).filter((r) => r >= 0);
    const numbers = (dictionary: Float64Array, values: Iterable<number>) =>
      Array.from(values, (v) => findNumber(dictionary, v)).filter((r) => r >= 0);
    if (present(filters.author)) add('author', texts('author', filters.author));
    if (present(filters.work)) add('work', texts('work', filters.work));
    if (present(filters.category)) add('category', texts('category', filters.category));
    if (present(filters.genre)) add('genre_set', texts('genre', filters.genre));
    if (present(filters.language)) add('language', texts('language', filters.language));
    if (present(filters.author_id)) add('author_id', numbers(this.#c.author_ids, filters.author_id));
    if (present(filters.work_id)) add('work_id', numbers(this.#c.work_ids, filters.work_id));
    if (present(filters.author_like)) add('author_id', this.#likeRanks('author', filters.author_like));
    if (present(filters.work_like)) add('work_id', this.#likeRanks('work', filters.work_like));
    const { published_from: from, published_to: to } = filters.ranges ?? {};
    if (from !== undefined || to !== undefined) add('publish_date', this.#publishRanks(from, to));
    if (constraints.size === 0) return { profiles: null, total: this.count };
    // The driver: the constraint with the fewest candidate profiles.
    let driver: ConstraintKey | null = null;
    let fewest = Number.POSITIVE_INFINITY;
    for (const [key, ranks] of constraints) {
      const groups = this.#constraintGroups(key);
      let candidates = 0;
      for (const r of ranks) candidates += (groups.start[r + 1] as number) - (groups.start[r] as number);
      if (candidates < fewest) {
        fewest = candidates;
        driver = key;
      }
    }
    if (driver === null || fewest === 0) return { profiles: new Int32Array(0), total: 0 };
    const checks: [ConstraintKey, Uint8Array][] = [];
    for (const [key, ranks] of constraints) {
      if (key === driver) continue;
      const allowed = this.#allowedScratch(key);
      for (const r of ranks) allowed[r] = 1;
      checks.push([key, allowed]);
    }
    const out = new Int32Array(fewest);
    let found = 0;
    let total = 0;
    const epoch = this.#nextEpoch();
    const groups = this.#constraintGroups(driver);
    const starts = this.#c.profile_start;
    const dedupe = driver === 'genre_set' && (constraints.get(driver) as number[]).length > 1;
    try {
      for (const r of constraints.get(driver) as number[]) {
        for (let i = groups.start[r] as number; i < (groups.start[r + 1] as number); i++) {
          const profile = groups.profiles[i] as number;
          if (dedupe) {
            if (this.#seen[profile] === epoch) continue;
            this.#seen[profile] = epoch;
          }
          if (!checks.every(([key, allowed]) => this.#allows(key, allowed, profile))) continue;
          out[found++] = profile;
          total += (starts[profile + 1] as number) - (starts[profile] as number);
        }
      }
    } finally {
      for (const [key, allowed] of checks) {
        for (const r of constraints.get(key) as number[]) allowed[r] = 0;
      }
    }
    return { profiles: out.subarray(0, found), total };
  }

  /**
   * Ords of the quotes at positions [offset, offset + limit) of the selection in `sort` order
   * (normalised, ending with the id tie-breaker).
   */
  page(
    selection: Selection,
    sort: readonly SortKey[],
    offset: number,
    limit: number,
    strategies: Strategies = {},
  ): number[] {
    const out: number[] = [];
    const count = Math.min(limit, selection.total - offset);
    if (count <= 0) return out;
    const reader = new PageReader(this, this.#c, strategies);
    if (selection.lengths !== undefined) this.#lengthPage(selection, sort, offset, count, reader, out);
    else if (selection.ords !== undefined) reader.ords(selection.ords, true, sort, offset, count, out);
    else reader.profiles(selection, sort, offset, count, out);
    return out;
  }

  /** The ord of a quote drawn uniformly among the selection, or null when it is empty. */
  randomOrd(selection: Selection, random: (n: number) => number): number | null {
    if (selection.total === 0) return null;
    return this.#ordsAt(selection, [random(selection.total)])[0] as number;
  }

  /**
   * The ords of quotes given by id, ascending (ids ascending, each one a quote's): one merge
   * walk with the id column, since ords are the quotes' ranks by id.
   */
  ordsOfIds(ids: ArrayLike<number>): Int32Array {
    const all = this.#c.ids;
    const out = new Int32Array(ids.length);
    let ord = 0;
    let found = 0;
    // Few ids (a rare word): a binary search each, from the last one found, instead of a walk.
    const search = ids.length * Math.log2(all.length + 1) < all.length;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      if (search) {
        let hi = all.length;
        while (ord < hi) {
          const mid = (ord + hi) >>> 1;
          if ((all[mid] as number) < id) ord = mid + 1;
          else hi = mid;
        }
      } else {
        while (ord < all.length && (all[ord] as number) < id) ord++;
      }
      if (ord < all.length && all[ord] === id) out[found++] = ord;
    }
    return out.subarray(0, found);
  }

  /** The ords of `ords` (ascending) whose quote is in the selection, still ascending. */
  within(ords: Int32Array, selection: Selection): Int32Array {
    if (selection.ords !== undefined) return intersectAscending(ords, selection.ords);
    if (selection.profiles === null) return ords;
    const epoch = this.#nextEpoch();
    for (const profile of selection.profiles) this.#mark[profile] = epoch;
    const profileOf = this.#c.profile;
    const rank = this.#c.length_rank;
    const lo = selection.lengths?.lo ?? 0;
    const hi = selection.lengths?.hi ?? this.#c.lengths.length;
    const out = new Int32Array(Math.min(ords.length, selection.total));
    let found = 0;
    for (const ord of ords) {
      const r = rank[ord] as number;
      if (r >= lo && r < hi && this.#mark[profileOf[ord] as number] === epoch) out[found++] = ord;
    }
    return out.subarray(0, found);
  }

  /**
   * The ords of up to `count` quotes drawn uniformly without replacement among the selection, in
   * draw order. Positions are drawn in [0, total) and mapped to quotes as {@link randomOrd} maps
   * one: in a single pass over the selection's profiles.
   */
  sampleOrds(selection: Selection, count: number, random: (n: number) => number): number[] {
    return this.#ordsAt(selection, drawDistinct(selection.total, count, random));
  }

  /** The ord of the quote with this id, or -1. */
  ordOf(id: number): number {
    return findNumber(this.#c.ids, id);
  }

  id(ord: number): number {
    return this.#c.ids[ord] as number;
  }

  /** Number of profiles: the distinct combinations of the profile fields. */
  get profileCount(): number {
    return this.#profileCount;
  }

  /** A quote of `profile` (its lowest ord): what the profile's fields can be read from. */
  firstOrdOf(profile: number): number {
    return this.#c.profile_ords[this.#c.profile_start[profile] as number] as number;
  }

  /** The profile of a quote: what its author, work, category, genre and date come from. */
  profileOf(ord: number): number {
    return this.#c.profile[ord] as number;
  }

  /** The ids of all quotes, by ord (ascending). */
  get ids(): Float64Array {
    return this.#c.ids;
  }

  authorId(ord: number): number {
    return this.#c.author_ids[this.#ranks.author_id[this.#c.profile[ord] as number] as number] as number;
  }

  workId(ord: number): number {
    return this.#c.work_ids[this.#ranks.work_id[this.#c.profile[ord] as number] as number] as number;
  }

  publishDate(ord: number): string {
    return this.#dictionaries.publish_date[this.code(ord, 'publish_date')] as string;
  }

  quoteLength(ord: number): number {
    return this.#c.lengths[this.#c.length_rank[ord] as number] as number;
  }

  author(ord: number): string {
    return this.#display.author[this.code(ord, 'author')] as string;
  }

  work(ord: number): string {
    return this.#display.work[this.code(ord, 'work')] as string;
  }

  category(ord: number): string {
    return this.#display.category[this.code(ord, 'category')] as string;
  }

  /** The ISO 639-1 code of the quote's language. */
  language(ord: number): string {
    return this.#dictionaries.language[this.code(ord, 'language')] as string;
  }

  /** The genre list as written; a fresh array the caller may keep. */
  genre(ord: number): string[] {
    return (this.#display.genre[this.code(ord, 'genre')] as string[]).slice();
  }

  /**
   * The display values of the dictionary-coded fields, each value with the code that
   * {@link code} returns for a quote: what the JSON writer pre-escapes once per file.
   */
  displayValues(field: CodedField): readonly (string | readonly string[])[] {
    if (field === 'language') return this.#dictionaries.language;
    return field === 'publish_date' ? this.#dictionaries.publish_date : this.#display[field];
  }

  /** The code of a quote's value of a dictionary-coded field (an index of {@link displayValues}). */
  code(ord: number, field: CodedField): number {
    const profile = this.#c.profile[ord] as number;
    switch (field) {
      case 'author':
        return this.#c.display_author[profile] as number;
      case 'work':
        return this.#c.display_work[profile] as number;
      case 'category':
        return this.#c.display_category[profile] as number;
      case 'genre':
        return this.#c.display_genre[profile] as number;
      case 'publish_date':
        return this.#ranks.publish_date[profile] as number;
      case 'language':
        return this.#ranks.language[profile] as number;
    }
  }

  // What full-text search reads (sqlite/search.ts).

  /**
   * The author (work) words equal to `word`, or with `prefix` beginning with it: positions
   * [from, to) of that kind's words in code point order, for {@link forEachProfileOfWord}.
   */
  profileWordRange(kind: 'author' | 'work', word: string, prefix: boolean): [number, number] {
    const { words } = this.#words[kind];
    const from = findFirst(words, word);
    if (prefix) return [from, findFirst(words, word + PREFIX_END)];
    return [from, words[from] === word ? from + 1 : from];
  }

  /** Number of author (work) words: the end of their positions. */
  profileWordCount(kind: 'author' | 'work'): number {
    return this.#words[kind].words.length;
  }

  /** Calls `visit` with each profile whose author name (work title) has the word at position `at`. */
  forEachProfileOfWord(kind: 'author' | 'work', at: number, visit: (profile: number) => void): void {
    const { start, ranks } = this.#words[kind];
    const groups = this.#groups[kind === 'author' ? 'author_id' : 'work_id'];
    for (let j = start[at] as number; j < (start[at + 1] as number); j++) {
      const r = ranks[j] as number;
      for (let i = groups.start[r] as number; i < (groups.start[r + 1] as number); i++) {
        visit(groups.profiles[i] as number);
      }
    }
  }

  /** Number of quotes whose author name (work title) has the word at position `at`. */
  quotesOfProfileWord(kind: 'author' | 'work', at: number): number {
    const { start, ranks } = this.#words[kind];
    const { cumulative } = this.#groups[kind === 'author' ? 'author_id' : 'work_id'];
    let quotes = 0;
    for (let j = start[at] as number; j < (start[at + 1] as number); j++) {
      const r = ranks[j] as number;
      quotes += (cumulative[r + 1] as number) - (cumulative[r] as number);
    }
    return quotes;
  }

  /** CSR: the ords of profile p are `ords[start[p] .. start[p + 1])`, ascending. */
  profileRuns(): { start: Int32Array; ords: Int32Array } {
    return { start: this.#c.profile_start, ords: this.#c.profile_ords };
  }

  // What facet counts read (sqlite/facets.ts).

  /** The folded values of a text key in rank order (code point order): rank → value. */
  foldedValues(key: 'author' | 'work' | 'category' | 'genre' | 'language'): readonly string[] {
    return this.#dictionaries[key];
  }

  /** CSR: the distinct genre ranks of each profile (every genre of it, not only the first). */
  genreSets(): { start: Int32Array; ranks: Int32Array } {
    return { start: this.#c.genre_set_start, ranks: this.#c.genre_set };
  }

  /** Genre rank → the profiles having that genre among theirs. */
  genreGroups(): Groups {
    return this.#genreMembers;
  }

  // Internals shared with PageReader.

  /** Rank → profiles of a profile key, with exact group sizes. */
  groups(key: RankedKey): Groups {
    return this.#groups[key];
  }

  ranks(key: RankedKey): Int32Array {
    return this.#ranks[key];
  }

  lengthCumulative(): Float64Array {
    return this.#lengthCumulative;
  }

  /** Marks the profiles of a set with a fresh epoch; returns it and the first and last ord of the set. */
  markProfiles(profiles: Int32Array): { epoch: number; first: number; last: number } {
    const epoch = this.#nextEpoch();
    const starts = this.#c.profile_start;
    const ords = this.#c.profile_ords;
    let first = this.count;
    let last = -1;
    for (const profile of profiles) {
      this.#mark[profile] = epoch;
      const a = starts[profile] as number;
      const b = starts[profile + 1] as number;
      if (a < b) {
        first = Math.min(first, ords[a] as number);
        last = Math.max(last, ords[b - 1] as number);
      }
    }
    return { epoch, first, last };
  }

  get mark(): Int32Array {
    return this.#mark;
  }

  /**
   * Zeroed per-rank scratch arrays of a sort key, for splitting a set by it: group sizes, and
   * slots (share index + 1) of the groups kept. Callers zero what they set. A key occurs once in
   * a sort, so one split per key is in progress at a time.
   */
  scratch(field: Exclude<SortKey['field'], 'id'>): { sizes: Float64Array; slots: Int32Array } {
    let scratch = this.#scratch.get(field);
    if (scratch === undefined) {
      const size = field === 'quote_length' ? this.#c.lengths.length : this.#groups[field].start.length - 1;
      scratch = { sizes: new Float64Array(size), slots: new Int32Array(size) };
      this.#scratch.set(field, scratch);
    }
    return scratch;
  }

  /**
   * Ranks of the authors (works) whose name matches any alternative: for each of its words, the
   * range of indexed words it begins, and the entities having a word in every range.
   */
  #likeRanks(kind: 'author' | 'work', alternatives: readonly string[][]): number[] {
    const { words, start, ranks } = this.#words[kind];
    const { hits, chosen } = this.#wordHits[kind];
    const out: number[] = [];
    for (const prefixes of alternatives) {
      // The narrowest range first: only its entities can match, so only they are touched.
      const ranges = prefixes
        .map((prefix) => {
          const from = start[findFirst(words, prefix)] as number;
          return [from, start[findFirst(words, prefix + PREFIX_END)] as number] as const;
        })
        .sort((a, b) => a[1] - a[0] - (b[1] - b[0]));
      const touched: number[] = [];
      for (const [i, [from, to]] of ranges.entries()) {
        for (let j = from; j < to; j++) {
          const entity = ranks[j] as number;
          // Counts each entity once per word, and only if it matched every word before.
          if (hits[entity] !== i) continue;
          hits[entity] = i + 1;
          if (i === 0) touched.push(entity);
        }
      }
      for (const entity of touched) {
        if (hits[entity] === ranges.length && chosen[entity] === 0) {
          chosen[entity] = 1;
          out.push(entity);
        }
        hits[entity] = 0;
      }
    }
    for (const entity of out) chosen[entity] = 0;
    return out;
  }

  #nextEpoch(): number {
    if (this.#epoch === 0x7fffffff) {
      this.#epoch = 0;
      this.#mark.fill(0);
      this.#seen.fill(0);
    }
    return ++this.#epoch;
  }

  #constraintGroups(key: ConstraintKey): Groups {
    return key === 'genre_set' ? this.#genreMembers : this.#groups[key];
  }

  #allowedScratch(key: ConstraintKey): Uint8Array {
    let allowed = this.#allowed.get(key);
    if (allowed === undefined) {
      allowed = new Uint8Array(this.#constraintGroups(key).start.length - 1);
      this.#allowed.set(key, allowed);
    }
    return allowed;
  }

  #allows(key: ConstraintKey, allowed: Uint8Array, profile: number): boolean {
    if (key !== 'genre_set') return allowed[this.#ranks[key][profile] as number] === 1;
    const { genre_set: set, genre_set_start: start } = this.#c;
    for (let i = start[profile] as number; i < (start[profile + 1] as number); i++) {
      if (allowed[set[i] as number] === 1) return true;
    }
    return false;
  }

  /**
   * Rank → profiles lists (CSR), with prefix sums of quote counts. A profile's ranks are
   * `ranks[profile]`, or with `rankStart` the CSR run `ranks[rankStart[profile] .. rankStart[profile + 1])`.
   */
  #groupProfiles(size: number, rankStart: Int32Array | null, ranks: Int32Array): Groups {
    const starts = this.#c.profile_start;
    const p = this.#profileCount;
    const first = (profile: number) => (rankStart === null ? profile : (rankStart[profile] as number));
    const after = (profile: number) =>
      rankStart === null ? profile + 1 : (rankStart[profile + 1] as number);
    const start = new Int32Array(size + 1);
    const cumulative = new Float64Array(size + 1);
    for (let profile = 0; profile < p; profile++) {
      const quotes = (starts[profile + 1] as number) - (starts[profile] as number);
      for (let i = first(profile); i < after(profile); i++) {
        const r = ranks[i] as number;
        if (!(r >= 0 && r < size))
          throw new Error('inconsistent catalogue columns: a rank is out of its dictionary');
        start[r + 1] = (start[r + 1] as number) + 1;
        cumulative[r + 1] = (cumulative[r + 1] as number) + quotes;
      }
    }
    for (let r = 0; r < size; r++) {
      start[r + 1] = (start[r + 1] as number) + (start[r] as number);
      cumulative[r + 1] = (cumulative[r + 1] as number) + (cumulative[r] as number);
    }
    const next = start.slice(0, size);
    const profiles = new Int32Array(start[size] as number);
    for (let profile = 0; profile < p; profile++) {
      for (let i = first(profile); i < after(profile); i++) {
        const r = ranks[i] as number;
        profiles[next[r] as number] = profile;
        next[r] = (next[r] as number) + 1;
      }
    }
    return { start, profiles, cumulative };
  }
}

/**
 * The ords at positions of [0, total) of a set laid out in `groups` runs of `ords`, run i being
 * `size(i)` ords from `start(i)`: the positions are sorted once and the runs walked once.
 */
function profileOrdsAt(
  positions: readonly number[],
  groups: number,
  size: (i: number) => number,
  start: (i: number) => number,
  ords: Int32Array,
): number[] {
  const order = positions.map((p, i) => [p, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(positions.length);
  let before = 0;
  let next = 0;
  for (let i = 0; i < groups && next < order.length; i++) {
    const n = size(i);
    if ((order[next] as readonly [number, number])[0] < before + n) {
      const a = start(i);
      while (next < order.length && (order[next] as readonly [number, number])[0] < before + n) {
        const [position, slot] = order[next] as readonly [number, number];
        out[slot] = ords[a + position - before] as number;
        next++;
      }
    }
    before += n;
  }
  if (next < order.length) throw new Error('a selection total disagrees with its profiles');
  return out;
}

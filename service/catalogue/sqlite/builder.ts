/**
 * The embedded catalogue's write side: builds a complete catalogue file beside the live one and
 * renames it over the live path in one atomic step, so readers see the old file or the new one.
 */
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { endianness } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  type CatalogueBuilder,
  type CatalogueInfo,
  type CatalogueLogger,
  compareCodePoints,
  fold,
  type Quote,
  wordSet,
  words,
} from '../port.ts';
import { searchToken } from '../search.ts';
import {
  type ColumnName,
  type Columns,
  CREATE_TABLES,
  DISPLAY_FIELDS,
  dictionaryColumn,
  META_COUNT,
  META_ENDIANNESS,
  META_FORMAT,
  META_VERSION,
  pairsText,
  SCHEMA_FORMAT,
  SEARCH_TABLE,
  type TextDictionary,
} from './schema.ts';
import {
  BITMAP_SHARE,
  bitmapWords,
  ordsOf,
  TEXT_WORD_BITMAP,
  TEXT_WORD_ORDS,
  TEXT_WORD_START,
  TEXT_WORDS_COLUMN,
  type TextIndexColumns,
  textBitmapColumn,
} from './text-index.ts';

/** Quotes per write transaction: commits are rare however small the batches given to add(). */
const ROWS_PER_TRANSACTION = 50_000;
/**
 * Page cache of the build connection, in KiB (negative cache_size). Texts are appended in id
 * order and the columns are written once: no index is sorted in the file, so a small cache does.
 */
const BUILD_CACHE_KIB = 8 * 1024;
/** Folded forms remembered: names, titles, categories and genres repeat across many quotes. */
const FOLD_CACHE_SIZE = 50_000;

export interface SqliteBuilderOptions {
  /** The live catalogue file; the build is written beside it and renamed over it on commit. */
  path: string;
  logger?: CatalogueLogger;
}

/**
 * Starts a build of a new catalogue file, in a temp file beside `path` (its directory is created
 * if missing). Texts go straight to the file (journal off, synchronous off, big transactions).
 * In memory the build keeps 16 bytes per quote (id, length, profile) plus its profiles and their
 * dictionaries, from which commit() computes the reader's columns (sqlite/schema.ts).
 */
export async function createSqliteBuilder(options: SqliteBuilderOptions): Promise<CatalogueBuilder> {
  const dir = dirname(options.path);
  // Checked now rather than at the rename: a build of a million quotes must not end in EISDIR.
  if (statSync(options.path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new Error(`the catalogue path '${options.path}' is a directory`);
  }
  makeDirectory(dir);
  const prefix = `.${basename(options.path)}.`;
  removeStaleBuilds(dir, prefix, options.logger);
  const tempPath = join(dir, `${prefix}${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(tempPath);
  } catch (error) {
    // SQLite says only "unable to open database file"; the directory is what the user can fix.
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot create a file in '${dir}' (${accessProblem(dir) ?? reason})`, { cause: error });
  }
  building.add(tempPath);
  try {
    // The temp file is private until the rename: durability during the load buys nothing, and a
    // crash leaves only a temp file, which the next build removes. node:sqlite opens connections
    // in defensive mode, which silently refuses journal_mode = OFF: lift it on this private one.
    db.enableDefensive(false);
    const journal = db.prepare('PRAGMA journal_mode = OFF').get() as { journal_mode?: unknown } | undefined;
    if (journal?.journal_mode !== 'off')
      throw new Error(`cannot turn the build journal off (${journal?.journal_mode})`);
    db.exec(`
      PRAGMA synchronous = OFF;
      PRAGMA locking_mode = EXCLUSIVE;
      PRAGMA temp_store = FILE;
      PRAGMA cache_size = -${BUILD_CACHE_KIB};
    `);
    db.exec(CREATE_TABLES);
  } catch (error) {
    db.close();
    rmSync(tempPath, { force: true });
    building.delete(tempPath);
    throw error;
  }
  return new SqliteBuilder(db, tempPath, options.path, options.logger);
}

/**
 * `mkdir -p`, one level at a time. Node's recursive mkdir never returns where the kernel answers
 * ENOENT for a directory it will not create (under /proc, say): it retries forever, so a wrong
 * SQLITE_PATH would hang the first start instead of failing it.
 */
export function makeDirectory(dir: string): void {
  const missing: string[] = [];
  for (let current = resolve(dir); ; current = dirname(current)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(current).isDirectory();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(current) === current) throw error;
      missing.push(current);
      continue;
    }
    if (!isDirectory)
      throw new Error(`cannot create the directory '${dir}': '${current}' is not a directory`);
    break;
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (error) {
      // Another process may have made it meanwhile.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(level).isDirectory()) throw error;
    }
  }
}

type State = 'open' | 'committed' | 'aborted';

class SqliteBuilder implements CatalogueBuilder {
  readonly #db: DatabaseSync;
  readonly #tempPath: string;
  readonly #path: string;
  readonly #logger: CatalogueLogger | undefined;
  readonly #insertText: StatementSync;
  readonly #insertSearch: StatementSync;
  /** The quotes holding each word of the texts, for the word index of `q` (sqlite/text-index.ts). */
  readonly #textWords = new TextPostings();
  readonly #folded = new Map<string, string>();
  readonly #quotes = new QuoteColumns();
  readonly #profiles = new ProfileTable();
  #state: State = 'open';
  #inTransaction = 0;

  constructor(db: DatabaseSync, tempPath: string, path: string, logger: CatalogueLogger | undefined) {
    this.#db = db;
    this.#tempPath = tempPath;
    this.#path = path;
    this.#logger = logger;
    this.#insertText = db.prepare('INSERT INTO texts (id, source, quote) VALUES (?, ?, ?)');
    this.#insertSearch = db.prepare(`INSERT INTO ${SEARCH_TABLE} (rowid, pairs) VALUES (?, ?)`);
  }

  async add(quotes: readonly Quote[]): Promise<void> {
    this.#assertOpen('add');
    for (const quote of quotes) {
      if (this.#inTransaction === 0) this.#db.exec('BEGIN');
      this.#insert(quote);
      if (++this.#inTransaction >= ROWS_PER_TRANSACTION) this.#flush();
    }
  }

  async commit(): Promise<CatalogueInfo> {
    this.#assertOpen('commit');
    const started = performance.now();
    const version = newVersion();
    const count = this.#quotes.count;
    try {
      this.#flush();
      // FTS5 leaves the pairs' lists in a dozen segments at a million quotes, which a phrase of
      // the search merges entry by entry: one segment per pair spares that merge.
      this.#db.exec(`INSERT INTO ${SEARCH_TABLE} (${SEARCH_TABLE}) VALUES ('optimize')`);
      // The texts are written: the page cache has nothing left to offer the columns' computation.
      this.#db.exec('PRAGMA shrink_memory');
      this.#db.exec('BEGIN');
      const insert = this.#db.prepare('INSERT INTO columns (name, data) VALUES (?, ?)');
      const blob = (array: Int32Array | Float64Array) =>
        new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      writeColumns(this.#quotes, this.#profiles, {
        column: (name, array) => insert.run(name, blob(array)),
        dictionary: (name, values) => insert.run(dictionaryColumn(name), JSON.stringify(values)),
      });
      const text = this.#textWords.columns(count, arrivalOrds(this.#quotes));
      insert.run(TEXT_WORDS_COLUMN, JSON.stringify(text.words));
      insert.run(TEXT_WORD_START, blob(text.start));
      insert.run(TEXT_WORD_ORDS, blob(text.ords));
      insert.run(TEXT_WORD_BITMAP, blob(text.bitmapOf));
      for (const [k, bitmap] of text.bitmaps.entries()) insert.run(textBitmapColumn(k), blob(bitmap));
      const meta = this.#db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      meta.run(META_FORMAT, SCHEMA_FORMAT);
      meta.run(META_VERSION, version);
      meta.run(META_COUNT, String(count));
      meta.run(META_ENDIANNESS, endianness());
      this.#db.exec('COMMIT');
      // Readers open the file read-only: it must need no journal recovery and create no -wal/-shm
      // files beside the live path, so it leaves the build in the plain rollback-journal mode.
      this.#db.exec('PRAGMA journal_mode = DELETE;');
      this.#db.close();
      // synchronous=OFF wrote without flushing: flush once, before the rename makes it live.
      syncFile(this.#tempPath);
      renameSync(this.#tempPath, this.#path);
      building.delete(this.#tempPath);
      syncDirectory(dirname(this.#path));
    } catch (error) {
      await this.abort();
      throw error;
    }
    this.#state = 'committed';
    const info = { version, count };
    this.#logger?.info(
      {
        path: this.#path,
        ...info,
        profiles: this.#profiles.count,
        finishMs: Math.round(performance.now() - started),
      },
      'sqlite catalogue committed',
    );
    return info;
  }

  async abort(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'aborted';
    if (this.#db.isOpen) this.#db.close();
    rmSync(this.#tempPath, { force: true });
    building.delete(this.#tempPath);
  }

  #insert(quote: Quote): void {
    // First, so that a duplicate id fails before anything else records the quote.
    this.#insertText.run(quote.id, quote.source, quote.quote);
    const textWords = words(quote.quote);
    if (textWords.length > 1) this.#insertSearch.run(quote.id, pairsText(textWords.map(searchToken)));
    this.#textWords.add(this.#quotes.count, textWords);
    const profiles = this.#profiles;
    const { profile, authorIsNew, workIsNew } = profiles.intern(quote, (text) => this.#fold(text));
    this.#quotes.push(quote.id, quote.quote_length, profile);
    // author_id names one author and work_id one (work, author) (docs/api.md#the-quote, checked by
    // the indexer), so each id's words are recorded once.
    if (authorIsNew) profiles.authorWords.add(wordSet(quote.author), quote.author_id);
    if (workIsNew) profiles.workWords.add(wordSet(quote.work), quote.work_id);
  }

  #fold(text: string): string {
    let folded = this.#folded.get(text);
    if (folded === undefined) {
      // A full cache is simply dropped: bounded memory matters more than the occasional refold.
      if (this.#folded.size >= FOLD_CACHE_SIZE) this.#folded.clear();
      folded = fold(text);
      this.#folded.set(text, folded);
    }
    return folded;
  }

  #flush(): void {
    if (this.#inTransaction === 0) return;
    this.#db.exec('COMMIT');
    this.#inTransaction = 0;
  }

  #assertOpen(operation: string): void {
    if (this.#state !== 'open') throw new Error(`cannot ${operation}: the build is already ${this.#state}`);
  }
}

/**
 * Per arrival (the order add() received the quotes in), the quote's ord: null when they arrived
 * in id order, which is the ord order.
 */
function arrivalOrds(quotes: QuoteColumns): Int32Array | null {
  if (quotes.idOrdered) return null;
  const ids = quotes.ids.values();
  const ordOf = new Int32Array(quotes.count);
  const arrival = new Int32Array(quotes.count);
  for (let i = 0; i < arrival.length; i++) arrival[i] = i;
  arrival.sort((a, b) => (ids[a] as number) - (ids[b] as number));
  for (let ord = 0; ord < arrival.length; ord++) ordOf[arrival[ord] as number] = ord;
  return ordOf;
}

/** A word's quotes are listed until they are this many and one in {@link BITMAP_SHARE} so far. */
const LIST_BEFORE_BITMAP = 1024;

/**
 * The quotes holding each word of the texts, by arrival, as lists while a word is rare and as
 * bit sets once it is common (so that the build holds about what the reader will, not 4 bytes
 * per word of every quote).
 */
class TextPostings {
  readonly #words = new Dictionary();
  readonly #lists: (Growable<Int32Array> | null)[] = [];
  readonly #bitmaps: (Int32Array | null)[] = [];
  readonly #counts: number[] = [];
  /** Bits of every bit set (a multiple of 32), doubled as quotes arrive. */
  #capacity = 1024;

  /** Records the distinct words of the quote that arrived `arrival`-th (from 0, in order). */
  add(arrival: number, textWords: readonly string[]): void {
    if (arrival >= this.#capacity) this.#grow(arrival + 1);
    for (const word of new Set(textWords)) {
      const code = this.#words.code(word);
      if (code === this.#counts.length) {
        this.#counts.push(0);
        this.#lists.push(new Growable((n) => new Int32Array(n)));
        this.#bitmaps.push(null);
      }
      this.#counts[code] = (this.#counts[code] as number) + 1;
      const bitmap = this.#bitmaps[code];
      if (bitmap !== null && bitmap !== undefined) {
        bitmap[arrival >>> 5] = (bitmap[arrival >>> 5] as number) | (1 << (arrival & 31));
        continue;
      }
      const list = this.#lists[code] as Growable<Int32Array>;
      list.push(arrival);
      if (list.length >= LIST_BEFORE_BITMAP && list.length * BITMAP_SHARE >= arrival + 1) {
        const bits = new Int32Array(this.#capacity >>> 5);
        for (const a of list.values()) bits[a >>> 5] = (bits[a >>> 5] as number) | (1 << (a & 31));
        this.#bitmaps[code] = bits;
        this.#lists[code] = null;
      }
    }
  }

  /**
   * The reader's columns for `n` quotes (sqlite/text-index.ts): each word as a list or a bit set,
   * whichever is smaller, over ords. `ordOf` maps arrivals to ords (null: the same).
   */
  columns(n: number, ordOf: Int32Array | null): TextIndexColumns {
    const { rankOf, sorted } = this.#words.ranks();
    const byRank = new Int32Array(sorted.length);
    for (let code = 0; code < rankOf.length; code++) byRank[rankOf[code] as number] = code;
    const start = new Int32Array(sorted.length + 1);
    const bitmapOf = new Int32Array(sorted.length).fill(-1);
    const bitmaps: Int32Array[] = [];
    const lists: Int32Array[] = [];
    let total = 0;
    for (let rank = 0; rank < sorted.length; rank++) {
      const code = byRank[rank] as number;
      const arrivals = this.#arrivals(code);
      if ((this.#counts[code] as number) * BITMAP_SHARE >= n) {
        const bits = new Int32Array(bitmapWords(n));
        for (const a of arrivals) {
          const ord = ordOf === null ? a : (ordOf[a] as number);
          bits[ord >>> 5] = (bits[ord >>> 5] as number) | (1 << (ord & 31));
        }
        bitmapOf[rank] = bitmaps.length;
        bitmaps.push(bits);
      } else {
        const ords = ordOf === null ? arrivals : arrivals.map((a) => ordOf[a] as number).sort();
        lists.push(ords);
        total += ords.length;
      }
      start[rank + 1] = total;
      // What is written is dropped from the build as it goes.
      this.#bitmaps[code] = null;
      this.#lists[code] = null;
    }
    const ords = new Int32Array(total);
    let at = 0;
    for (const list of lists) {
      ords.set(list, at);
      at += list.length;
    }
    return { words: sorted, start, ords, bitmapOf, bitmaps };
  }

  /** The arrivals of the quotes holding a word, ascending. */
  #arrivals(code: number): Int32Array {
    const list = this.#lists[code];
    if (list !== null && list !== undefined) return list.values();
    return ordsOf(this.#bitmaps[code] as Int32Array, this.#counts[code] as number);
  }

  #grow(needed: number): void {
    let capacity = this.#capacity;
    while (capacity < needed) capacity *= 2;
    for (const [code, bits] of this.#bitmaps.entries()) {
      if (bits === null) continue;
      const bigger = new Int32Array(capacity >>> 5);
      bigger.set(bits);
      this.#bitmaps[code] = bigger;
    }
    this.#capacity = capacity;
  }
}

/** A typed array that doubles when full. */
class Growable<T extends Float64Array | Int32Array> {
  #array: T;
  length = 0;
  readonly #make: (size: number) => T;

  constructor(make: (size: number) => T) {
    this.#make = make;
    this.#array = make(1024);
  }

  push(value: number): void {
    if (this.length === this.#array.length) {
      const bigger = this.#make(this.#array.length * 2);
      bigger.set(this.#array);
      this.#array = bigger;
    }
    this.#array[this.length++] = value;
  }

  get(i: number): number {
    return this.#array[i] as number;
  }

  /** The pushed values, in a view (no copy). */
  values(): T {
    return this.#array.subarray(0, this.length) as T;
  }
}

/** Per quote, in arrival order: id, quote_length and profile. */
class QuoteColumns {
  readonly ids = new Growable((n) => new Float64Array(n));
  readonly lengths = new Growable((n) => new Int32Array(n));
  readonly profiles = new Growable((n) => new Int32Array(n));
  /** False once a quote arrives with a smaller id than the one before it. */
  idOrdered = true;

  get count(): number {
    return this.ids.length;
  }

  push(id: number, length: number, profile: number): void {
    if (this.ids.length > 0 && id < this.ids.get(this.ids.length - 1)) this.idOrdered = false;
    this.ids.push(id);
    this.lengths.push(length);
    this.profiles.push(profile);
  }
}

/** Distinct strings numbered in order of first appearance. */
class Dictionary {
  readonly values: string[] = [];
  readonly #codes = new Map<string, number>();

  code(value: string): number {
    let code = this.#codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.#codes.set(value, code);
    }
    return code;
  }

  /** Rank of each code when the values are ordered by code point, and the values in that order. */
  ranks(): { rankOf: Int32Array; sorted: string[] } {
    const order = this.values.map((_, code) => code);
    order.sort((a, b) => compareCodePoints(this.values[a] as string, this.values[b] as string));
    const rankOf = new Int32Array(order.length);
    for (const [rank, code] of order.entries()) rankOf[code] = rank;
    return { rankOf, sorted: order.map((code) => this.values[code] as string) };
  }
}

/** (word, id) pairs of author names or work titles, for the word indexes of `_like`. */
class WordPairs {
  readonly words = new Dictionary();
  readonly codes = new Growable((n) => new Int32Array(n));
  readonly ids = new Growable((n) => new Float64Array(n));

  add(words: readonly string[], id: number): void {
    for (const word of words) {
      this.codes.push(this.words.code(word));
      this.ids.push(id);
    }
  }
}

/** The distinct profiles met so far, with codes of their values (see sqlite/schema.ts). */
class ProfileTable {
  readonly authorWords = new WordPairs();
  readonly workWords = new WordPairs();
  readonly authorKeys = new Dictionary();
  readonly workKeys = new Dictionary();
  readonly categories = new Dictionary();
  readonly genres = new Dictionary();
  readonly dates = new Dictionary();
  readonly displayAuthors = new Dictionary();
  readonly displayWorks = new Dictionary();
  readonly displayCategories = new Dictionary();
  readonly displayGenres = new Dictionary();
  readonly languages = new Dictionary();
  readonly language = new Growable((n) => new Int32Array(n));
  /** Distinct genre sets, as sorted genre codes; a profile refers to one by code. */
  readonly genreSets: number[][] = [];
  readonly authorId = new Growable((n) => new Float64Array(n));
  readonly workId = new Growable((n) => new Float64Array(n));
  readonly authorKey = new Growable((n) => new Int32Array(n));
  readonly workKey = new Growable((n) => new Int32Array(n));
  readonly category = new Growable((n) => new Int32Array(n));
  readonly firstGenre = new Growable((n) => new Int32Array(n));
  readonly genreSet = new Growable((n) => new Int32Array(n));
  readonly date = new Growable((n) => new Int32Array(n));
  /** Per profile: codes of its display strings, in the order of {@link DISPLAY_FIELDS}. */
  readonly display = DISPLAY_FIELDS.map(() => new Growable((n) => new Int32Array(n)));
  readonly #genreSetCodes = new Map<string, number>();
  readonly #profiles = new Map<string, number>();
  readonly #authors = new Set<number>();
  readonly #works = new Set<number>();

  get count(): number {
    return this.#profiles.size;
  }

  /** The profile of a quote (a new one when unseen), and whether its author and work ids are new. */
  intern(
    quote: Quote,
    fold: (text: string) => string,
  ): { profile: number; authorIsNew: boolean; workIsNew: boolean } {
    const { author_id: authorId, work_id: workId } = quote;
    const genreCodes = quote.genre.map((g) => this.genres.code(fold(g)));
    const first = genreCodes[0] ?? this.genres.code('');
    const set = [...new Set(genreCodes)].sort((a, b) => a - b);
    const setKey = set.join(',');
    let setCode = this.#genreSetCodes.get(setKey);
    if (setCode === undefined) {
      setCode = this.genreSets.length;
      this.genreSets.push(set);
      this.#genreSetCodes.set(setKey, setCode);
    }
    const codes = [
      this.authorKeys.code(fold(quote.author)),
      this.workKeys.code(fold(quote.work)),
      this.categories.code(fold(quote.category)),
      first,
      setCode,
      this.dates.code(quote.publish_date),
    ] as const;
    const display = [
      this.displayAuthors.code(quote.author),
      this.displayWorks.code(quote.work),
      this.displayCategories.code(quote.category),
      this.displayGenres.code(JSON.stringify(quote.genre)),
    ];
    // The empty code for a quote without a language: it sorts first, and nothing filters on it.
    const languageCode = this.languages.code(quote.language ?? '');
    const signature = `${authorId} ${workId} ${codes.join(' ')} ${display.join(' ')} ${languageCode}`;
    let profile = this.#profiles.get(signature);
    if (profile === undefined) {
      profile = this.#profiles.size;
      this.#profiles.set(signature, profile);
      this.authorId.push(authorId);
      this.workId.push(workId);
      this.authorKey.push(codes[0]);
      this.workKey.push(codes[1]);
      this.category.push(codes[2]);
      this.firstGenre.push(codes[3]);
      this.genreSet.push(codes[4]);
      this.date.push(codes[5]);
      for (const [i, code] of display.entries()) this.display[i]?.push(code);
      this.language.push(languageCode);
    }
    const authorIsNew = !this.#authors.has(authorId);
    if (authorIsNew) this.#authors.add(authorId);
    const workIsNew = !this.#works.has(workId);
    if (workIsNew) this.#works.add(workId);
    return { profile, authorIsNew, workIsNew };
  }
}

/** Distinct numbers ascending, and the rank of each. */
function numberRanks(values: Float64Array | Int32Array): {
  sorted: Float64Array;
  rankOf: Map<number, number>;
} {
  const sorted = Float64Array.from(new Set(values)).sort();
  return { sorted, rankOf: new Map(Array.from(sorted, (value, rank) => [value, rank])) };
}

/** Counting sort: items 0..n-1 grouped by `key(i)` in 0..buckets-1, stable. Returns CSR arrays. */
function groupBy(
  n: number,
  buckets: number,
  key: (i: number) => number,
): { start: Int32Array; items: Int32Array } {
  const start = new Int32Array(buckets + 1);
  for (let i = 0; i < n; i++) {
    const b = key(i) + 1;
    start[b] = (start[b] as number) + 1;
  }
  for (let b = 0; b < buckets; b++) start[b + 1] = (start[b + 1] as number) + (start[b] as number);
  const next = start.slice(0, buckets);
  const items = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const b = key(i);
    items[next[b] as number] = i;
    next[b] = (next[b] as number) + 1;
  }
  return { start, items };
}

/** Where the computed columns go, one at a time (so that each can be dropped once written). */
interface ColumnSink {
  column<K extends ColumnName>(name: K, array: Columns[K]): void;
  dictionary(name: TextDictionary, values: string[]): void;
}

/**
 * Computes the reader's columns and dictionaries (sqlite/schema.ts) from what the build collected
 * and hands each to `sink` as soon as it is complete, keeping few quote-sized arrays alive at once.
 */
function writeColumns(quotes: QuoteColumns, profiles: ProfileTable, sink: ColumnSink): void {
  const n = quotes.count;
  const p = profiles.count;
  const arrivalIds = quotes.ids.values();
  const arrivalLengths = quotes.lengths.values();
  const arrivalProfiles = quotes.profiles.values();
  // Ords follow ids. Input in id order, the usual case, is already in ord order.
  let byOrd = <T extends Float64Array | Int32Array>(values: T): T => values;
  if (!quotes.idOrdered) {
    const arrival = new Int32Array(n);
    for (let i = 0; i < n; i++) arrival[i] = i;
    arrival.sort((a, b) => (arrivalIds[a] as number) - (arrivalIds[b] as number));
    byOrd = <T extends Float64Array | Int32Array>(values: T): T => {
      const out = new (values.constructor as new (size: number) => T)(n);
      for (let ord = 0; ord < n; ord++) out[ord] = values[arrival[ord] as number] as number;
      return out;
    };
  }
  sink.column('ids', byOrd(arrivalIds));
  const profile = byOrd(arrivalProfiles);
  sink.column('profile', profile);
  const byProfile = groupBy(n, p, (ord) => profile[ord] as number);
  sink.column('profile_start', byProfile.start);
  sink.column('profile_ords', byProfile.items);

  const lengths = numberRanks(arrivalLengths);
  sink.column('lengths', lengths.sorted);
  const lengthRank = byOrd(arrivalLengths).map((length) => lengths.rankOf.get(length) as number);
  sink.column('length_rank', lengthRank);
  sink.column('length_order', groupBy(n, lengths.sorted.length, (ord) => lengthRank[ord] as number).items);

  const author = profiles.authorKeys.ranks();
  const work = profiles.workKeys.ranks();
  const category = profiles.categories.ranks();
  const genre = profiles.genres.ranks();
  const date = profiles.dates.ranks();
  const authorIds = numberRanks(profiles.authorId.values());
  const workIds = numberRanks(profiles.workId.values());
  // Each profile's rank for each sort key, as the reader's `rank_<key>` columns.
  const ranks: [ColumnName, (i: number) => number][] = [
    ['rank_author', (i) => author.rankOf[profiles.authorKey.get(i)] as number],
    ['rank_author_id', (i) => authorIds.rankOf.get(profiles.authorId.get(i)) as number],
    ['rank_work', (i) => work.rankOf[profiles.workKey.get(i)] as number],
    ['rank_work_id', (i) => workIds.rankOf.get(profiles.workId.get(i)) as number],
    ['rank_category', (i) => category.rankOf[profiles.category.get(i)] as number],
    ['rank_genre', (i) => genre.rankOf[profiles.firstGenre.get(i)] as number],
    ['rank_publish_date', (i) => date.rankOf[profiles.date.get(i)] as number],
  ];
  for (const [name, rank] of ranks)
    sink.column(
      name,
      Int32Array.from({ length: p }, (_, i) => rank(i)),
    );
  const genreSetStart = new Int32Array(p + 1);
  const genreSet: number[] = [];
  for (let i = 0; i < p; i++) {
    const set = profiles.genreSets[profiles.genreSet.get(i)] as number[];
    for (const code of set) genreSet.push(genre.rankOf[code] as number);
    genreSetStart[i + 1] = genreSet.length;
  }
  for (const [i, field] of DISPLAY_FIELDS.entries())
    sink.column(field, (profiles.display[i] as Growable<Int32Array>).values());
  sink.dictionary('display_author', profiles.displayAuthors.values);
  sink.dictionary('display_work', profiles.displayWorks.values);
  sink.dictionary('display_category', profiles.displayCategories.values);
  sink.dictionary('display_genre', profiles.displayGenres.values);
  sink.column('genre_set_start', genreSetStart);
  sink.column('genre_set', Int32Array.from(genreSet));
  sink.column('author_ids', authorIds.sorted);
  sink.column('work_ids', workIds.sorted);
  for (const [pairs, ids, prefix] of [
    [profiles.authorWords, authorIds, 'author'],
    [profiles.workWords, workIds, 'work'],
  ] as const) {
    const words = pairs.words.ranks();
    const codes = pairs.codes.values();
    const entities = pairs.ids.values();
    const byWord = groupBy(
      codes.length,
      words.sorted.length,
      (i) => words.rankOf[codes[i] as number] as number,
    );
    sink.column(`${prefix}_word_start`, byWord.start);
    sink.column(
      `${prefix}_word_ranks`,
      byWord.items.map((i) => ids.rankOf.get(entities[i] as number) as number),
    );
    sink.dictionary(`${prefix}_words`, words.sorted);
  }
  sink.dictionary('author', author.sorted);
  sink.dictionary('work', work.sorted);
  sink.dictionary('category', category.sorted);
  sink.dictionary('genre', genre.sorted);
  sink.dictionary('publish_date', date.sorted);
  const language = profiles.languages.ranks();
  sink.column(
    'rank_language',
    Int32Array.from(
      { length: profiles.count },
      (_, i) => language.rankOf[profiles.language.get(i)] as number,
    ),
  );
  sink.dictionary('language', language.sorted);
}

/** Removes temp files of builds whose process is gone (a crash or a kill mid-build). */
/** Temp files of the builds this process has open. */
const building = new Set<string>();

/**
 * Removes the temp files of builds whose process is gone. A temp file named with this process's
 * own id is stale too unless this process is writing it: in a container the indexer is always
 * process 1, so the file a killed run left carries the id of the next run.
 */
function removeStaleBuilds(dir: string, prefix: string, logger: CatalogueLogger | undefined): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    if (pid === process.pid ? building.has(join(dir, name)) : processAlive(pid)) continue;
    rmSync(join(dir, name), { force: true });
    logger?.warn({ file: join(dir, name) }, 'removed the temp file of an interrupted sqlite build');
  }
}

/** Why `dir` takes no new file, when a permission check can tell. */
function accessProblem(dir: string): string | undefined {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A fresh, unique, ETag-safe version: build time (sortable) plus randomness (unique). */
function newVersion(): string {
  const stamp = new Date().toISOString().replace(/[-:.]/g, '');
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Makes the rename itself durable; some platforms cannot fsync a directory, which is harmless. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not supported here (e.g. Windows): the rename is still atomic, only not yet durable.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

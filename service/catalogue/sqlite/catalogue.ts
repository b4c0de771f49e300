/**
 * The embedded catalogue's read side, on `node:sqlite` (file format: sqlite/schema.ts; queries:
 * sqlite/query.ts).
 *
 * Live reload: the builder replaces the file by rename, so a replacement shows as a new inode at
 * the path. At most once per `reloadCheckMs`, lazily on a call (no timer to leak), the reader
 * stat()s the path; on a change it opens the new file, checks it, loads its columns and prepares
 * its statements, and only then switches to it and closes the old one. `node:sqlite` is
 * synchronous and every method takes the current file once at its start, so a call never sees
 * two files.
 *
 * Queries: filters, totals, orders and random picks are computed on the columns held in memory
 * (sqlite/query.ts), so no request ever waits for a count or a sort in SQLite. SQLite serves only
 * the `source` and `quote` of the returned quotes (`texts`), one statement per page. Memory is
 * bounded per file: the columns (about 30 bytes per quote plus the profiles, dictionaries and word
 * indexes: 40 MB for the generated million), a small page cache, a bounded cache of selections,
 * and no memory map, since mapped pages of the file would count in the resident memory. Opening a
 * file reads its columns once (about 0.1 s per million quotes, once per replacement).
 */
import { statSync } from 'node:fs';
import { endianness } from 'node:os';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { AuthorEntry, Directory, DirectoryPage, DirectoryQuery, WorkEntry } from '../authors.ts';
import {
  type CatalogueIndex,
  type CatalogueInfo,
  type CatalogueLogger,
  CatalogueUnavailableError,
  type FacetQuery,
  type FacetResult,
  FILTER_NAMES,
  type Filters,
  type JsonEnvelope,
  type ListQuery,
  type ListResult,
  normaliseFields,
  normaliseSort,
  QUOTE_FIELDS,
  type QuoteField,
  type QuoteProjection,
} from '../port.ts';
import { hasRanges, rangesKey } from '../ranges.ts';
import { SqliteDirectory } from './authors.ts';
import { FacetCounter } from './facets.ts';
import { type JsonTexts, JsonWriter, QUOTE_KEY, QuoteJson } from './json.ts';
import { CatalogueColumns, type Selection, type Strategies, selectionOf } from './query.ts';
import {
  COLUMN_TYPES,
  type ColumnName,
  type Columns,
  dictionaryColumn,
  FORMATS_WITHOUT_LANGUAGE,
  FORMATS_WITHOUT_SEARCH,
  META_COUNT,
  META_ENDIANNESS,
  META_FORMAT,
  META_VERSION,
  SCHEMA_FORMAT,
  TEXT_DICTIONARIES,
  type TextDictionary,
} from './schema.ts';
import { SqliteSearch } from './search.ts';
import { loadTextIndex } from './text-index.ts';
import { TextMemory, type TextMemoryState } from './texts.ts';

export interface SqliteCatalogueOptions {
  /** The catalogue file the builder writes (SQLITE_PATH). It may not exist yet. */
  path: string;
  logger?: CatalogueLogger;
  /** Longest time between checks of the path for a replaced file, in ms (default 1000). */
  reloadCheckMs?: number;
  /** Forces page-reading strategies instead of choosing by cost (tests). */
  strategies?: Strategies;
  /**
   * Largest size of the texts (`source`, `quote`) to hold in memory, in bytes (default
   * {@link DEFAULT_TEXT_MEMORY_BYTES}); larger catalogues read them from the file. 0: always the file.
   */
  textMemoryBytes?: number;
}

/** Texts of catalogues up to about 300k quotes of ordinary length are held in memory. */
export const DEFAULT_TEXT_MEMORY_BYTES = 64 * 1024 * 1024;

/**
 * Reader page cache, in KiB. Pages are read for the rows of returned quotes, scattered over the
 * file: a big cache would mostly hold text nobody asks for again, and the OS caches the file anyway.
 */
const READ_CACHE_KIB = 8 * 1024;
/** Prepared statements kept per file: one per set of text fields (63 at most). */
const STATEMENT_CACHE_SIZE = 64;
/**
 * Filter sets whose selection (matching profiles and total) is remembered per file, and the
 * profiles they may hold in all (4 bytes each). A selection costs at most a pass over the
 * candidate profiles, so the cache only spares repeated filter sets that pass.
 */
const SELECTION_CACHE_SIZE = 512;
const SELECTION_CACHE_PROFILES = 2_000_000;
/** Every page is written here, then copied out: calls are synchronous, so one buffer serves all. */
const SHARED_WRITER = new JsonWriter();
/** Fields read from `texts`; the others come from the columns. */
const TEXT_FIELDS: ReadonlySet<QuoteField> = new Set(['source', 'quote']);

/**
 * Opens the catalogue file for reading. Never throws: while the file is missing or unreadable,
 * every method throws {@link CatalogueUnavailableError}, and the file is picked up once it appears.
 */
export function openSqliteCatalogue(options: SqliteCatalogueOptions): SqliteCatalogue {
  return new SqliteCatalogue(options);
}

export class SqliteCatalogue implements CatalogueIndex {
  readonly kind = 'sqlite';
  readonly #path: string;
  readonly #logger: CatalogueLogger | undefined;
  readonly #checkMs: number;
  readonly #strategies: Strategies;
  readonly #textMemoryBytes: number;
  #current: Snapshot | null = null;
  #nextCheck = 0;
  /** Signature of a file that failed to open: not retried until the path changes again. */
  #failedSignature: string | null = null;
  #unavailable = 'the catalogue has not been built yet';
  #closed = false;

  constructor(options: SqliteCatalogueOptions) {
    this.#path = options.path;
    this.#logger = options.logger;
    this.#checkMs = Math.max(0, options.reloadCheckMs ?? 1000);
    this.#strategies = options.strategies ?? {};
    this.#textMemoryBytes = Math.max(0, options.textMemoryBytes ?? DEFAULT_TEXT_MEMORY_BYTES);
    this.#refresh();
    this.#nextCheck = Date.now() + this.#checkMs;
  }

  async info(): Promise<CatalogueInfo> {
    const snapshot = this.#snapshot();
    return { version: snapshot.version, count: snapshot.count };
  }

  async list(query: ListQuery): Promise<ListResult> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.list(query));
  }

  async listJson(query: ListQuery, envelope: JsonEnvelope): Promise<Buffer> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.listJson(query, envelope));
  }

  async get(id: number, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.get(id, normaliseFields(fields)));
  }

  async random(filters: Filters, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.random(filters, normaliseFields(fields)));
  }
  async firstMatch(
    filters: Filters,
    ids: readonly number[],
    fields: readonly QuoteField[] | null,
  ): Promise<QuoteProjection | null> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.firstMatch(filters, ids, normaliseFields(fields)));
  }

  async randomSample(
    filters: Filters,
    fields: readonly QuoteField[] | null,
    count: number,
  ): Promise<QuoteProjection[]> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.randomSample(filters, normaliseFields(fields), count));
  }

  async facets(query: FacetQuery): Promise<FacetResult> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.facets(query));
  }

  directory(): Directory {
    const on = <T>(read: (snapshot: Snapshot) => T): Promise<T> => {
      try {
        const snapshot = this.#snapshot();
        return Promise.resolve(guard(() => read(snapshot)));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    return {
      authors: (query) => on((s) => s.authors(query)),
      works: (query) => on((s) => s.works(query)),
      author: (id) => on((s) => s.directory.author(id)),
      work: (id) => on((s) => s.directory.work(id)),
    };
  }

  /**
   * Where the texts of the file being served are read from, once that is settled (null: no file
   * is open). For tests and operators; answers are the same either way.
   */
  async texts(): Promise<TextMemoryState | null> {
    return (await this.#current?.texts.settled()) ?? null;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#current?.close();
    this.#current = null;
  }

  #snapshot(): Snapshot {
    if (this.#closed) throw new CatalogueUnavailableError('the catalogue is closed');
    const now = Date.now();
    if (now >= this.#nextCheck) {
      this.#nextCheck = now + this.#checkMs;
      this.#refresh();
    }
    if (this.#current === null) throw new CatalogueUnavailableError(this.#unavailable);
    return this.#current;
  }

  /** Opens the file at the path when it differs from the one being served. */
  #refresh(): void {
    let signature: string;
    let size: number;
    try {
      const stat = statSync(this.#path);
      size = stat.size;
      signature = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    } catch (error) {
      // Keep serving an open file even if the path vanished: its inode stays readable.
      if (this.#current === null) {
        this.#unavailable = `no catalogue file at ${this.#path} (${errorCode(error)})`;
      }
      return;
    }
    if (signature === this.#current?.signature || signature === this.#failedSignature) return;
    let next: Snapshot;
    try {
      next = Snapshot.open(this.#path, signature, this.#strategies, {
        fileBytes: size,
        budgetBytes: this.#textMemoryBytes,
        onSettled: (state) => this.#textsSettled(state),
      });
    } catch (error) {
      this.#failedSignature = signature;
      const reason = error instanceof Error ? error.message : String(error);
      if (this.#current === null) this.#unavailable = `the catalogue file is not usable: ${reason}`;
      this.#logger?.error(
        { path: this.#path, err: reason, serving: this.#current?.version ?? null },
        'sqlite catalogue file could not be opened',
      );
      return;
    }
    const previous = this.#current;
    this.#current = next;
    this.#failedSignature = null;
    previous?.close();
    if (previous === null) {
      this.#logger?.info(
        { path: this.#path, version: next.version, count: next.count },
        'sqlite catalogue opened',
      );
    } else if (previous.version !== next.version) {
      this.#logger?.info(
        { path: this.#path, oldVersion: previous.version, newVersion: next.version, count: next.count },
        'sqlite catalogue reloaded',
      );
    }
  }

  #textsSettled(state: TextMemoryState): void {
    if (state.state === 'memory') {
      this.#logger?.info({ path: this.#path, bytes: state.bytes }, 'sqlite catalogue texts held in memory');
    } else if (state.state === 'disk' && !this.#closed) {
      this.#logger?.info(
        { path: this.#path, reason: state.reason },
        'sqlite catalogue texts read from the file',
      );
    }
  }
}

/** What a snapshot needs to decide whether its texts go to memory. */
interface TextMemoryPlan {
  /** Size of the file, of which the texts are a part. */
  fileBytes: number;
  budgetBytes: number;
  onSettled: (state: TextMemoryState) => void;
}

/** One opened catalogue file with its columns and prepared statements. */
class Snapshot {
  readonly signature: string;
  readonly version: string;
  readonly count: number;
  readonly #db: DatabaseSync;
  readonly #columns: CatalogueColumns;
  readonly #strategies: Strategies;
  readonly #statements = new BoundedMap<string, StatementSync>(STATEMENT_CACHE_SIZE);
  readonly #selections = new SelectionCache(SELECTION_CACHE_SIZE, SELECTION_CACHE_PROFILES);
  readonly texts: TextMemory;
  readonly #json: QuoteJson;
  /** Made on the first facet request: display values are remembered per catalogue file. */
  #facets: FacetCounter | undefined;
  /** Null for a file of {@link FORMATS_WITHOUT_SEARCH}: `q` answers 503 until it is rebuilt. */
  readonly #searchIndex: SqliteSearch | null;

  static open(path: string, signature: string, strategies: Strategies, plan: TextMemoryPlan): Snapshot {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return new Snapshot(db, signature, strategies, plan);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(db: DatabaseSync, signature: string, strategies: Strategies, plan: TextMemoryPlan) {
    this.#db = db;
    this.signature = signature;
    this.#strategies = strategies;
    db.exec(`PRAGMA cache_size = -${READ_CACHE_KIB}; PRAGMA mmap_size = 0;`);
    const meta = new Map<string, string>();
    for (const row of db.prepare('SELECT key, value FROM meta').all()) {
      meta.set(String(row.key), String(row.value));
    }
    const format = meta.get(META_FORMAT);
    if (format !== undefined && FORMATS_WITHOUT_LANGUAGE.has(format)) {
      throw new Error(
        `the file (format ${format}) was built before quotes had a language: run the indexer to rebuild it`,
      );
    }
    if (format !== SCHEMA_FORMAT && !FORMATS_WITHOUT_SEARCH.has(format ?? '')) {
      throw new Error(`file format ${format ?? 'unknown'} is not the supported format ${SCHEMA_FORMAT}`);
    }
    if (meta.get(META_ENDIANNESS) !== endianness()) {
      throw new Error(
        `the file was built on a ${meta.get(META_ENDIANNESS)} machine, this one is ${endianness()}`,
      );
    }
    const version = meta.get(META_VERSION);
    const count = Number(meta.get(META_COUNT));
    if (version === undefined || !Number.isSafeInteger(count) || count < 0) {
      throw new Error('the meta table lacks a version or a count');
    }
    this.version = version;
    const loaded = loadColumns(db);
    this.#columns = loaded.columns;
    if (this.#columns.count !== count) {
      throw new Error(`the columns hold ${this.#columns.count} quotes, the meta table says ${count}`);
    }
    this.count = count;
    // Prepare a statement now: a file that cannot serve it is refused before the switch.
    this.#texts(QUOTE_FIELDS.filter((f) => TEXT_FIELDS.has(f)));
    this.#json = new QuoteJson(this.#columns);
    this.#searchIndex =
      format === SCHEMA_FORMAT
        ? new SqliteSearch(db, this.#columns, loadTextIndex(loaded.arrays, count))
        : null;
    this.texts = new TextMemory({
      db,
      ids: this.#columns.ids,
      estimatedBytes: plan.fileBytes - loaded.bytes,
      budgetBytes: plan.budgetBytes,
      onSettled: plan.onSettled,
    });
  }

  close(): void {
    this.texts.stop();
    if (this.#db.isOpen) this.#db.close();
  }

  list(query: ListQuery): ListResult {
    const { ords, total } = this.#page(query);
    return { items: this.#project(ords, normaliseFields(query.fields) ?? QUOTE_FIELDS), total };
  }

  listJson(query: ListQuery, envelope: JsonEnvelope): Buffer {
    const { ords, total } = this.#page(query);
    // First, as it may throw: nothing is written for an answer that will not be sent.
    const tail = envelope.tail(total, ords.length);
    const fields = normaliseFields(query.fields) ?? QUOTE_FIELDS;
    const writer = SHARED_WRITER.reset();
    writer.utf8(envelope.head);
    this.#json.array(writer, ords, fields, this.#jsonTexts(ords, fields));
    writer.utf8(tail);
    return writer.take();
  }

  #page(query: ListQuery): { ords: number[]; total: number } {
    const selection = this.#select(query.filters);
    const sort = normaliseSort(query.sort);
    if (sort.at(-1)?.field !== 'id') sort.push({ field: 'id', direction: 'asc' });
    const offset = (query.page - 1) * query.limit;
    const q = query.filters.q;
    if (q !== undefined) {
      return query.ranked === true
        ? this.#search.rankedPage(q, selection, offset, query.limit)
        : this.#search.page(q, selection, sort, offset, query.limit, this.#strategies);
    }
    return {
      ords: this.#columns.page(selection, sort, offset, query.limit, this.#strategies),
      total: selection.total,
    };
  }

  /** The JSON of the texts of a page: copied from memory, or read from `texts` and escaped. */
  #jsonTexts(ords: readonly number[], fields: readonly QuoteField[]): JsonTexts {
    if (this.texts.ready) return this.texts;
    const read = this.#readTexts(ords, fields);
    const write = (writer: JsonWriter, ord: number, field: 'source' | 'quote') =>
      writer.utf8(JSON.stringify(read(ord, field)));
    return {
      write,
      writeSourceAndQuote: (writer, ord) => {
        write(writer, ord, 'source');
        writer.utf8(QUOTE_KEY);
        write(writer, ord, 'quote');
      },
    };
  }

  get(id: number, fields: readonly QuoteField[] | null): QuoteProjection | null {
    const ord = this.#columns.ordOf(id);
    return ord < 0 ? null : (this.#project([ord], fields ?? QUOTE_FIELDS)[0] as QuoteProjection);
  }

  random(filters: Filters, fields: readonly QuoteField[] | null): QuoteProjection | null {
    const ord = this.#randomOrd(filters);
    return ord === null ? null : (this.#project([ord], fields ?? QUOTE_FIELDS)[0] as QuoteProjection);
  }

  facets(query: FacetQuery): FacetResult {
    const selection = this.#select(query.filters);
    const matches =
      query.filters.q === undefined ? undefined : this.#search.matches(query.filters.q, selection);
    this.#facets ??= new FacetCounter(this.#columns);
    const facets: FacetResult['facets'] = {};
    for (const field of query.facets) {
      facets[field] = this.#facets.values(selection, field, query.limit, matches);
    }
    return { total: matches?.length ?? selection.total, facets };
  }

  get #search(): SqliteSearch {
    if (this.#searchIndex === null) {
      throw new CatalogueUnavailableError(
        "the catalogue file was built before this release's search index: run the indexer to search it",
      );
    }
    return this.#searchIndex;
  }

  /** The quotes the filters select, narrowed to the matches of `q` when there is one. */
  #selectMatching(filters: Filters): Selection {
    const selection = this.#select(filters);
    return filters.q === undefined ? selection : selectionOf(this.#search.matches(filters.q, selection));
  }

  #randomOrd(filters: Filters): number | null {
    const selection = this.#selectMatching(filters);
    const excluded = this.#excludedMatches(filters.exclude, selection);
    if (excluded.size >= selection.total) return null;
    // Draws until one is not excluded: uniform among the rest, and at most 100 ids are excluded,
    // so the expected number of draws stays small (total / (total - excluded)).
    for (;;) {
      const ord = this.#columns.randomOrd(selection, randomInt);
      if (ord === null) return null;
      if (!excluded.has(ord)) return ord;
    }
  }

  firstMatch(
    filters: Filters,
    ids: readonly number[],
    fields: readonly QuoteField[] | null,
  ): QuoteProjection | null {
    const selection = this.#selectMatching(filters);
    const ords = Int32Array.from(new Set(ids.map((id) => this.#columns.ordOf(id)).filter((ord) => ord >= 0)));
    const inside = new Set(this.#columns.within(ords.sort(), selection));
    for (const id of ids) {
      const ord = this.#columns.ordOf(id);
      if (ord >= 0 && inside.has(ord))
        return this.#project([ord], fields ?? QUOTE_FIELDS)[0] as QuoteProjection;
    }
    return null;
  }

  randomSample(filters: Filters, fields: readonly QuoteField[] | null, count: number): QuoteProjection[] {
    const selection = this.#selectMatching(filters);
    const excluded = this.#excludedMatches(filters.exclude, selection);
    // A uniform ordered draw among all matches, with the excluded ones dropped, is a uniform ordered
    // draw among the rest: drawing `excluded.size` more keeps `count` of them whenever enough remain.
    const drawn = this.#columns.sampleOrds(selection, count + excluded.size, randomInt);
    const ords = drawn.filter((ord) => !excluded.has(ord)).slice(0, count);
    return ords.length === 0 ? [] : this.#project(ords, fields ?? QUOTE_FIELDS);
  }

  /** The ords of the excluded ids that are among the selection's quotes. */
  #excludedMatches(exclude: readonly number[] | undefined, selection: Selection): Set<number> {
    if (exclude === undefined || exclude.length === 0) return new Set();
    const ids = [...new Set(exclude)].sort((a, b) => a - b);
    return new Set(this.#columns.within(this.#columns.ordsOfIds(ids), selection));
  }

  #directory: SqliteDirectory | undefined;

  /** Authors and works of this file, gathered on first use. */
  get directory(): SqliteDirectory {
    this.#directory ??= new SqliteDirectory(this.#columns);
    return this.#directory;
  }

  authors(query: DirectoryQuery): DirectoryPage<AuthorEntry> {
    return this.directory.authors(this.#select(query.filters), query.filters, query);
  }

  works(query: DirectoryQuery): DirectoryPage<WorkEntry> {
    return this.directory.works(this.#select(query.filters), query.filters, query);
  }

  /** The quotes matching a filter set (all but `q`), remembered per canonical filter set. */
  #select(filters: Filters): Selection {
    if (!FILTER_NAMES.some((name) => (filters[name]?.length ?? 0) > 0) && !hasRanges(filters.ranges)) {
      return { profiles: null, total: this.count };
    }
    const key = canonicalFilters(filters);
    let selection = this.#selections.get(key);
    if (selection === undefined) {
      selection = this.#columns.select(filters);
      this.#selections.set(key, selection);
    }
    return selection;
  }

  /** Contract projections of quotes: values from the columns, display text from memory or `texts`. */
  #project(ords: readonly number[], fields: readonly QuoteField[]): QuoteProjection[] {
    const wanted = normaliseFields(fields) ?? QUOTE_FIELDS;
    const cold = wanted.filter((f) => TEXT_FIELDS.has(f));
    const columns = this.#columns;
    const memory = this.texts;
    const text =
      cold.length === 0 || memory.ready
        ? (ord: number, field: 'source' | 'quote') => memory.text(ord, field)
        : this.#readTexts(ords, cold);
    return ords.map((ord) => {
      const out: Record<string, unknown> = {};
      for (const field of wanted) {
        switch (field) {
          case 'id':
            out.id = columns.id(ord);
            break;
          case 'author_id':
            out.author_id = columns.authorId(ord);
            break;
          case 'work_id':
            out.work_id = columns.workId(ord);
            break;
          case 'publish_date':
            out.publish_date = columns.publishDate(ord);
            break;
          case 'quote_length':
            out.quote_length = columns.quoteLength(ord);
            break;
          case 'author':
            out.author = columns.author(ord);
            break;
          case 'work':
            out.work = columns.work(ord);
            break;
          case 'category':
            out.category = columns.category(ord);
            break;
          case 'genre':
            out.genre = columns.genre(ord);
            break;
          case 'language': {
            // The empty code: the record gave no language, and the quote has none.
            const language = columns.language(ord);
            if (language !== '') out.language = language;
            break;
          }
          default:
            out[field] = text(ord, field);
        }
      }
      return out as QuoteProjection;
    });
  }

  /**
   * Reads the texts among `fields` of the quotes at `ords` from the file, with one statement
   * for the page (a lookup per row would pay the statement's overhead per row).
   */
  #readTexts(
    ords: readonly number[],
    fields: readonly QuoteField[],
  ): (ord: number, field: 'source' | 'quote') => string {
    const cold = fields.filter((f) => TEXT_FIELDS.has(f));
    const columns = this.#columns;
    const rows = new Map<number, unknown[]>();
    if (cold.length > 0 && ords.length > 0) {
      const ids = JSON.stringify(ords.map((ord) => columns.id(ord)));
      for (const row of this.#texts(cold).all(ids) as unknown as unknown[][]) rows.set(row[0] as number, row);
    }
    return (ord, field) => {
      const row = rows.get(columns.id(ord));
      if (row === undefined) throw new Error(`quote ${columns.id(ord)} has no text row`);
      return row[cold.indexOf(field) + 1] as string;
    };
  }

  /** Texts of the quotes whose ids a JSON array lists: the id, then `fields`. */
  #texts(fields: readonly QuoteField[]): StatementSync {
    return this.#prepare(
      `SELECT id, ${fields.join(', ')} FROM texts WHERE id IN (SELECT value FROM json_each(?))`,
    );
  }

  /** Prepared once per SQL text; the text is a function of the query's shape, not its values. */
  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      statement.setReturnArrays(true);
      statement.setReadBigInts(false);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

/** Reads the columns and dictionaries of a file into memory (copies only misaligned BLOBs). */
function loadColumns(db: DatabaseSync): {
  columns: CatalogueColumns;
  bytes: number;
  arrays: Map<string, Uint8Array | string>;
} {
  const arrays = new Map<string, Uint8Array | string>();
  let bytes = 0;
  for (const row of db.prepare('SELECT name, data FROM columns').all()) {
    const data = row.data as Uint8Array | string;
    arrays.set(String(row.name), data);
    bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  }
  const columns = {} as Record<ColumnName, unknown>;
  for (const [name, type] of Object.entries(COLUMN_TYPES) as [
    ColumnName,
    (typeof COLUMN_TYPES)[ColumnName],
  ][]) {
    const bytes = arrays.get(name);
    if (!(bytes instanceof Uint8Array) || bytes.byteLength % type.BYTES_PER_ELEMENT !== 0) {
      throw new Error(`the column ${name} is missing or malformed`);
    }
    // node:sqlite hands each BLOB over in a buffer of its own; copy only if it is shared or misaligned.
    const own =
      bytes.buffer instanceof ArrayBuffer && bytes.byteOffset % type.BYTES_PER_ELEMENT === 0
        ? bytes
        : bytes.slice();
    columns[name] = new type(
      own.buffer as ArrayBuffer,
      own.byteOffset,
      own.byteLength / type.BYTES_PER_ELEMENT,
    );
  }
  const dictionaries = {} as Record<TextDictionary, string[]>;
  for (const name of TEXT_DICTIONARIES) {
    const json = arrays.get(dictionaryColumn(name));
    const values: unknown = typeof json === 'string' ? JSON.parse(json) : undefined;
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) {
      throw new Error(`the dictionary ${name} is missing or malformed`);
    }
    dictionaries[name] = values;
  }
  return { columns: new CatalogueColumns(columns as Columns, dictionaries), bytes, arrays };
}

/** Order-independent key of a filter set: OR within a filter and AND across filters commute. */
function canonicalFilters(filters: Filters): string {
  const parts: unknown[] = [];
  for (const name of FILTER_NAMES) {
    const values = filters[name];
    if (values === undefined || values.length === 0) {
      parts.push(null);
    } else if (name === 'author_like' || name === 'work_like') {
      parts.push((values as string[][]).map((alt) => JSON.stringify([...alt].sort())).sort());
    } else {
      parts.push([...new Set(values as (string | number)[])].sort());
    }
  }
  parts.push(rangesKey(filters.ranges));
  return JSON.stringify(parts);
}

/** Remembers selections, least recently used out first, within a count and a profile budget. */
class SelectionCache {
  readonly #map = new Map<string, Selection>();
  readonly #maxEntries: number;
  readonly #maxProfiles: number;
  #profiles = 0;

  constructor(maxEntries: number, maxProfiles: number) {
    this.#maxEntries = maxEntries;
    this.#maxProfiles = maxProfiles;
  }

  get(key: string): Selection | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: string, value: Selection): void {
    const size = selectionSize(value);
    if (size > this.#maxProfiles) return;
    const previous = this.#map.get(key);
    if (previous !== undefined) {
      this.#map.delete(key);
      this.#profiles -= selectionSize(previous);
    }
    this.#map.set(key, value);
    this.#profiles += size;
    for (const [oldest, selection] of this.#map) {
      if (this.#map.size <= this.#maxEntries && this.#profiles <= this.#maxProfiles) break;
      this.#map.delete(oldest);
      this.#profiles -= selectionSize(selection);
    }
  }
}

/** What a selection holds in memory, in list entries: its profiles, or its quotes when listed. */
function selectionSize(selection: Selection): number {
  return selection.ords?.length ?? selection.profiles?.length ?? 0;
}

function randomInt(n: number): number {
  return Math.floor(Math.random() * n);
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'unreadable';
}

/** SQLite primary result codes meaning the file, not the query, is at fault. */
const UNAVAILABLE_CODES = new Set([5, 6, 10, 11, 14, 26]); // BUSY, LOCKED, IOERR, CORRUPT, CANTOPEN, NOTADB

/** Turns errors of the file itself into {@link CatalogueUnavailableError}; others are bugs. */
function guard<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    const code = (error as { errcode?: unknown }).errcode;
    if (typeof code === 'number' && UNAVAILABLE_CODES.has(code & 0xff)) {
      throw new CatalogueUnavailableError(`the catalogue file cannot be read: ${(error as Error).message}`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** A Map that forgets its least recently used entry beyond `max` entries. */
class BoundedMap<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();

  constructor(max: number) {
    this.#max = max;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }
}

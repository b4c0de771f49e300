/**
 * The embedded catalogue's read side, on `node:sqlite` (file format: sqlite-schema.ts).
 *
 * Live reload: the builder replaces the file by rename, so a replacement shows as a new inode at
 * the path. At most once per `reloadCheckMs`, lazily on a call (no timer to leak), the reader
 * stat()s the path; on a change it opens the new file, checks it, prepares its statements and
 * only then switches to it and closes the old one. `node:sqlite` is synchronous and every method
 * takes the current file once at its start, so a call never sees two files.
 *
 * Queries: totals are exact `count(*)` results, cached per file and canonical filter set. A page
 * is read by one of four plans ({@link choosePlan}): `ordinal` (unfiltered, by id: a range of the
 * `ord` index, however deep the page), `walk` (follow the primary sort key's index and check the
 * filters row by row: about (offset + limit) × count / total rows when matches are spread evenly)
 * `entity` (an author or work sort under filters on that same author or work: walk the matching
 * names in order and read each one's quotes) or `collect` (let the index of the most selective
 * constraint gather every match, check the others row by row, then sort: about `total` rows).
 * Filters and sort keys can be correlated (genre and date belong to works), so a filtered walk
 * runs under a budget of `total` visited rows; past it, the page is collected instead, which
 * bounds the cost at about twice the better plan, and that filter set and sort key are not
 * walked again. A sort led by category or first genre, whose tie groups are huge, is read group
 * by group from exact group counts when another key follows it or a filter constrains the same
 * dimension ({@link isGrouped}): each group's share of the page is a query of its own, restricted
 * to the group and sorted by the remaining keys, so no group is ever sorted or skipped whole.
 * Page rows are found in the narrow `quotes` table, then their display text is read from `texts`.
 * Random picks are uniform: one `ord` lookup without filters, rejection sampling of random `ord`s
 * when matches are dense, else a random offset into the matches.
 */
import { statSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  type CatalogueIndex,
  type CatalogueInfo,
  type CatalogueLogger,
  CatalogueUnavailableError,
  FILTER_NAMES,
  type FilterName,
  type Filters,
  type ListQuery,
  type ListResult,
  normaliseFields,
  normaliseSort,
  QUOTE_FIELDS,
  type QuoteField,
  type QuoteProjection,
  type SortKey,
} from './port.ts';
import {
  genreToken,
  HOT_FIELDS,
  META_COUNT,
  META_FORMAT,
  META_VERSION,
  PREFIX_END,
  SCHEMA_FORMAT,
  SORT_COLUMN,
  sortIndexName,
} from './sqlite-schema.ts';

export interface SqliteCatalogueOptions {
  /** The catalogue file the builder writes (SQLITE_PATH). It may not exist yet. */
  path: string;
  logger?: CatalogueLogger;
  /** Longest time between checks of the path for a replaced file, in ms (default 1000). */
  reloadCheckMs?: number;
}

/** Distinct SQL shapes kept prepared per file; shapes depend on counts of values, not values. */
const STATEMENT_CACHE_SIZE = 256;
/** Filter sets whose exact total (or group counts, or failed walk) is remembered per file. */
const COUNT_CACHE_SIZE = 4096;
/** Random ords tried per rejection-sampling round, and rounds before falling back to an offset. */
const RANDOM_BATCH = 32;
const RANDOM_ROUNDS = 8;
/** A filtered walk may visit `total` rows, and at least this many, before the page is collected. */
const MIN_WALK_BUDGET = 2000;
/** Sort keys whose tie groups are huge: see {@link isGrouped}. */
const GROUPED_SORT: ReadonlySet<SortKey['field']> = new Set(['category', 'genre']);
/** Reader page cache (KiB) and memory map: the catalogue is read-only, so mapping it is safe. */
const READ_CACHE_KIB = 32 * 1024;
const MMAP_BYTES = 512 * 1024 * 1024;

/**
 * SQL function placed first in a filtered walk's WHERE clause: it runs once per visited index
 * entry and stops the statement when the budget is spent. Exported for the query-plan tests.
 */
export const WALK_BUDGET_FUNCTION = 'walk_budget';
/** Thrown through SQLite by the budget function; identity, not a message, recognises it. */
const WALK_EXCEEDED = new Error('walk budget exceeded');

/**
 * Opens the catalogue file for reading. Never throws: while the file is missing or unreadable,
 * every method throws {@link CatalogueUnavailableError}, and the file is picked up once it appears.
 */
export function openSqliteCatalogue(options: SqliteCatalogueOptions): CatalogueIndex {
  return new SqliteCatalogue(options);
}

class SqliteCatalogue implements CatalogueIndex {
  readonly kind = 'sqlite';
  readonly #path: string;
  readonly #logger: CatalogueLogger | undefined;
  readonly #checkMs: number;
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

  async get(id: number, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.get(id, normaliseFields(fields)));
  }

  async random(filters: Filters, fields: readonly QuoteField[] | null): Promise<QuoteProjection | null> {
    const snapshot = this.#snapshot();
    return guard(() => snapshot.random(filters, normaliseFields(fields)));
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
    try {
      const stat = statSync(this.#path);
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
      next = Snapshot.open(this.#path, signature);
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
}

/** A value bound to a statement parameter. */
export type Param = string | number;

/** Rows of `quotes`: the id first, then the requested fields stored there. */
type HotRow = unknown[];

/** One opened catalogue file with its prepared statements and cached totals. */
class Snapshot {
  readonly signature: string;
  readonly version: string;
  readonly count: number;
  readonly #db: DatabaseSync;
  readonly #statements = new BoundedMap<string, StatementSync>(STATEMENT_CACHE_SIZE);
  readonly #counts = new BoundedMap<string, number>(COUNT_CACHE_SIZE);
  readonly #groups = new BoundedMap<string, [string, number][]>(COUNT_CACHE_SIZE);
  /** Filter set and primary sort key pairs whose walk ran out of budget. */
  readonly #walkFailed = new BoundedMap<string, true>(COUNT_CACHE_SIZE);
  #walkBudget = 0;

  static open(path: string, signature: string): Snapshot {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return new Snapshot(db, signature);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private constructor(db: DatabaseSync, signature: string) {
    this.#db = db;
    this.signature = signature;
    db.exec(`PRAGMA cache_size = -${READ_CACHE_KIB}; PRAGMA mmap_size = ${MMAP_BYTES};`);
    // Given the row id, SQLite must run it per visited row of `quotes` (inner loop of a join).
    db.function(WALK_BUDGET_FUNCTION, { varargs: true }, () => {
      if (--this.#walkBudget < 0) throw WALK_EXCEEDED;
      return 1;
    });
    const meta = new Map<string, string>();
    for (const row of db.prepare('SELECT key, value FROM meta').all()) {
      meta.set(String(row.key), String(row.value));
    }
    const format = meta.get(META_FORMAT);
    if (format !== SCHEMA_FORMAT) {
      throw new Error(`file format ${format ?? 'unknown'} is not the supported format ${SCHEMA_FORMAT}`);
    }
    const version = meta.get(META_VERSION);
    const count = Number(meta.get(META_COUNT));
    if (version === undefined || !Number.isSafeInteger(count) || count < 0) {
      throw new Error('the meta table lacks a version or a count');
    }
    this.version = version;
    this.count = count;
    // Prepare the fixed statements now: a file that cannot serve them is refused before the switch.
    this.#hotBy('id', QUOTE_FIELDS);
    this.#hotBy('ord', QUOTE_FIELDS);
    this.#texts(QUOTE_FIELDS);
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  list(query: ListQuery): ListResult {
    const fields = normaliseFields(query.fields) ?? QUOTE_FIELDS;
    const total = this.#total(query.filters);
    const spec = pageSpec(query);
    if (spec.offset >= total) return { items: [], total };
    const rows = this.#read(spec, total, hotColumns(fields));
    return { items: this.#project(rows, fields), total };
  }

  get(id: number, fields: readonly QuoteField[] | null): QuoteProjection | null {
    const wanted = fields ?? QUOTE_FIELDS;
    const row = this.#hotBy('id', wanted).get(id) as unknown as HotRow | undefined;
    return row === undefined ? null : (this.#project([row], wanted)[0] as QuoteProjection);
  }

  random(filters: Filters, fields: readonly QuoteField[] | null): QuoteProjection | null {
    const wanted = fields ?? QUOTE_FIELDS;
    const ord = this.#randomOrd(filters);
    if (ord === null) return null;
    const row = this.#hotBy('ord', wanted).get(ord) as unknown as HotRow | undefined;
    return row === undefined ? null : (this.#project([row], wanted)[0] as QuoteProjection);
  }

  /** Rows of one page (or of one group's share of it) whose matches number `total`. */
  #read(spec: PageSpec, total: number, columns: readonly string[]): HotRow[] {
    if (isGrouped(spec)) return this.#readByGroup(spec, columns);
    const entity = entityFilters(spec);
    let plan = choosePlan(spec, total, this.count, entity === null ? null : this.#total(entity));
    if ((plan === 'walk' || plan === 'entity') && constrained(spec)) {
      const primary = spec.sort[0] as SortKey;
      const key = `${plan} ${primary.field} ${primary.direction} ${canonicalFilters(spec.filters)} ${JSON.stringify(spec.groups)}`;
      if (this.#walkFailed.get(key) === undefined) {
        this.#walkBudget = Math.max(MIN_WALK_BUDGET, total);
        try {
          return this.#run(spec, plan, columns);
        } catch (error) {
          if (error !== WALK_EXCEEDED) throw error;
          this.#walkFailed.set(key, true);
        }
      }
      plan = 'collect';
    }
    return this.#run(spec, plan, columns);
  }

  /** Splits the page over the primary key's groups, in order, and reads each share apart. */
  #readByGroup(spec: PageSpec, columns: readonly string[]): HotRow[] {
    const primary = spec.sort[0] as SortKey;
    const column = SORT_COLUMN[primary.field];
    const groups = this.#groupCounts(spec, column);
    const ordered = primary.direction === 'asc' ? groups : [...groups].reverse();
    const end = spec.offset + spec.limit;
    const rows: HotRow[] = [];
    let start = 0;
    for (const [value, size] of ordered) {
      const from = Math.max(start, spec.offset);
      const to = Math.min(start + size, end);
      if (from < to) {
        const share: PageSpec = {
          filters: spec.filters,
          groups: [...spec.groups, { column, value }],
          sort: spec.sort.slice(1),
          offset: from - start,
          limit: to - from,
        };
        rows.push(...this.#read(share, size, columns));
      }
      start += size;
      if (start >= end) break;
    }
    return rows;
  }

  #run(spec: PageSpec, plan: ListPlan, columns: readonly string[]): HotRow[] {
    const driver = plan === 'collect' ? this.#driver(spec.filters, spec.groups) : null;
    const { sql, params } = pageStatement(spec, plan, columns, this.count, driver);
    return this.#prepare(sql).all(...params) as unknown as HotRow[];
  }

  /** Group values of `column` among the matches, ascending, with their exact sizes. */
  #groupCounts(spec: PageSpec, column: string): [string, number][] {
    const key = `${column} ${canonicalFilters(spec.filters)} ${JSON.stringify(spec.groups)}`;
    let groups = this.#groups.get(key);
    if (groups === undefined) {
      const where = whereClause(spec.filters, spec.groups, this.#driver(spec.filters, spec.groups));
      const sql = `SELECT ${column}, count(*) FROM quotes${where.sql} GROUP BY ${column} ORDER BY ${column}`;
      groups = this.#prepare(sql).all(...where.params) as unknown as [string, number][];
      this.#groups.set(key, groups);
    }
    return groups;
  }

  /** Completes rows of `quotes` with the display text of `texts`, as contract projections. */
  #project(rows: HotRow[], fields: readonly QuoteField[]): QuoteProjection[] {
    const hot = hotColumns(fields);
    const cold = fields.filter((f) => !HOT_FIELDS.has(f));
    const texts = cold.length === 0 ? null : this.#texts(cold);
    return rows.map((row) => {
      const text = texts?.get(row[0] as number) as unknown as unknown[] | undefined;
      if (texts !== null && text === undefined) throw new Error(`quote ${row[0]} has no text row`);
      const out: Record<string, unknown> = {};
      for (const field of fields) {
        if (HOT_FIELDS.has(field)) {
          out[field] = row[hot.indexOf(field)];
        } else {
          const value = (text as unknown[])[cold.indexOf(field)];
          out[field] = field === 'genre' ? JSON.parse(value as string) : value;
        }
      }
      return out as QuoteProjection;
    });
  }

  /** The `ord` of a quote drawn uniformly among those matching, or null when none does. */
  #randomOrd(filters: Filters): number | null {
    if (!hasFilters(filters)) return this.count === 0 ? null : randomInt(this.count);
    const total = this.#total(filters);
    if (total === 0) return null;
    if (total * RANDOM_BATCH >= this.count) {
      // Rejection sampling: candidates are independent uniform ords, so the first candidate (in
      // draw order) that matches is uniform among the matches. A batch costs one statement.
      const where = whereClause(filters, [], null);
      const probe = this.#prepare(
        `SELECT ord FROM quotes WHERE ord IN (${marks(RANDOM_BATCH)}) AND ${where.conditions}`,
      );
      for (let round = 0; round < RANDOM_ROUNDS; round++) {
        const candidates = Array.from({ length: RANDOM_BATCH }, () => randomInt(this.count));
        const hits = new Set(
          (probe.all(...candidates, ...where.params) as unknown as [number][]).map((row) => row[0]),
        );
        const chosen = candidates.find((ord) => hits.has(ord));
        if (chosen !== undefined) return chosen;
      }
      // Unlucky rounds fall through to an independent uniform draw: the mix stays uniform.
    }
    // Any fixed enumeration of the matches works: a uniform offset into it is a uniform match.
    const where = whereClause(filters, [], this.#driver(filters, []));
    const pick = this.#prepare(`SELECT ord FROM quotes${where.sql} LIMIT 1 OFFSET ?`);
    const row = pick.get(...where.params, randomInt(total)) as unknown as [number] | undefined;
    return row === undefined ? null : row[0];
  }

  /** Exact number of quotes matching, counted once per file and canonical filter set. */
  #total(filters: Filters): number {
    if (!hasFilters(filters)) return this.count;
    const key = canonicalFilters(filters);
    const cached = this.#counts.get(key);
    if (cached !== undefined) return cached;
    let sql: string;
    let params: Param[];
    const genres = filters.genre ?? [];
    if (genres.length > 0 && onlyFilter(filters, 'genre')) {
      // quote_genres holds each (genre, quote) once, so its index alone gives the count.
      sql =
        genres.length === 1
          ? 'SELECT count(*) FROM quote_genres WHERE genre_key = ?'
          : `SELECT count(DISTINCT quote_id) FROM quote_genres WHERE genre_key IN (${marks(genres.length)})`;
      params = genres;
    } else {
      const where = whereClause(filters, [], this.#driver(filters, []));
      sql = `SELECT count(*) FROM quotes${where.sql}`;
      params = where.params;
    }
    const row = this.#prepare(sql).get(...params) as unknown as [number];
    const total = row[0];
    this.#counts.set(key, total);
    return total;
  }

  /** The constraint with the fewest matches on its own (exact, cached counts), or null if none. */
  #driver(filters: Filters, groups: readonly GroupCondition[]): Driver | null {
    const given = FILTER_NAMES.filter((name) => present(filters[name]));
    if (groups.length === 0 && given.length <= 1) return given[0] ?? null;
    let best: Driver | null = null;
    let fewest = Number.POSITIVE_INFINITY;
    const consider = (driver: Driver, matches: number) => {
      if (matches < fewest) {
        best = driver;
        fewest = matches;
      }
    };
    for (const name of given) consider(name, this.#total({ [name]: filters[name] } as Filters));
    for (const [i, group] of groups.entries()) consider(i, this.#groupSize(group));
    return best;
  }

  #groupSize(group: GroupCondition): number {
    const key = `group ${group.column} ${group.value}`;
    let size = this.#counts.get(key);
    if (size === undefined) {
      const row = this.#prepare(`SELECT count(*) FROM quotes WHERE ${group.column} = ?`).get(group.value);
      size = (row as unknown as [number])[0];
      this.#counts.set(key, size);
    }
    return size;
  }

  #hotBy(column: 'id' | 'ord', fields: readonly QuoteField[]): StatementSync {
    return this.#prepare(`SELECT ${hotColumns(fields).join(', ')} FROM quotes WHERE ${column} = ?`);
  }

  #texts(fields: readonly QuoteField[]): StatementSync {
    return this.#prepare(
      `SELECT ${fields.filter((f) => !HOT_FIELDS.has(f)).join(', ')} FROM texts WHERE id = ?`,
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

/** Equality on a stored key column: the quotes of one tie group of a sort key. */
export interface GroupCondition {
  column: string;
  value: string;
}

/** One page to read: matches of `filters` (within `groups`), in `sort` order. */
export interface PageSpec {
  filters: Filters;
  groups: GroupCondition[];
  /** Normalised, ending with the id tie-breaker. */
  sort: SortKey[];
  offset: number;
  limit: number;
}

/** How a page is read (see the module comment). */
export type ListPlan = 'ordinal' | 'walk' | 'entity' | 'collect';

/** The page a list query asks for. Exported for the query-plan tests. */
export function pageSpec(query: ListQuery): PageSpec {
  const sort = normaliseSort(query.sort);
  if (sort.at(-1)?.field !== 'id') sort.push({ field: 'id', direction: 'asc' });
  return {
    filters: query.filters,
    groups: [],
    sort,
    offset: (query.page - 1) * query.limit,
    limit: query.limit,
  };
}

/**
 * True when a page is read group by group: its sort starts with a key of huge tie groups
 * (category, first genre), and either another key follows (no index holds that order) or a filter
 * constrains the same dimension, which makes a walk of that key's index skip whole groups of
 * non-matches (a quote's genres, first genre included, come from the same work).
 */
export function isGrouped(spec: Pick<PageSpec, 'sort' | 'filters'>): boolean {
  const [primary, next] = spec.sort;
  if (primary === undefined || !GROUPED_SORT.has(primary.field)) return false;
  return (
    (next !== undefined && next.field !== 'id') ||
    present(spec.filters[primary.field as 'category' | 'genre'])
  );
}

/** Authors and works, as sort keys that the `entity` plan walks through their own tables. */
const ENTITIES = {
  author: {
    table: 'authors',
    index: 'authors_key',
    key: 'author_key',
    id: 'author_id',
    filters: ['author', 'author_id', 'author_like'],
  },
  work: {
    table: 'works',
    index: 'works_key',
    key: 'work_key',
    id: 'work_id',
    filters: ['work', 'work_id', 'work_like'],
  },
} as const satisfies Record<string, { filters: readonly FilterName[] } & Record<string, unknown>>;
type Entity = keyof typeof ENTITIES;

function entityOf(spec: PageSpec): Entity | null {
  const field = spec.sort[0]?.field;
  if (field !== 'author' && field !== 'work') return null;
  return ENTITIES[field].filters.some((name) => present(spec.filters[name])) ? field : null;
}

/**
 * The filters on the primary sort key's own entity (an author sort under author filters, a work
 * sort under work filters), or null when the `entity` plan does not apply. Exported for tests.
 */
export function entityFilters(spec: PageSpec): Filters | null {
  const entity = entityOf(spec);
  if (entity === null) return null;
  const out: Record<string, unknown> = {};
  for (const name of ENTITIES[entity].filters) {
    if (present(spec.filters[name])) out[name] = spec.filters[name];
  }
  return out as Filters;
}

/**
 * The cheaper plan for a page, given its exact number of matches, the catalogue size and, when
 * the `entity` plan applies, the number of quotes its entity filters alone select.
 */
export function choosePlan(
  spec: PageSpec,
  total: number,
  count: number,
  entityMatches: number | null,
): ListPlan {
  if (!constrained(spec)) return spec.sort[0]?.field === 'id' ? 'ordinal' : 'walk';
  // Rows visited, with matches spread evenly: a walk of the sort index, or of the entity's
  // matching quotes in order; collecting reads `total` rows and sorts them.
  const reach = (spec.offset + spec.limit) / Math.max(total, 1);
  if (entityMatches !== null) return reach * entityMatches <= total ? 'entity' : 'collect';
  return reach * count <= total ? 'walk' : 'collect';
}

/** The SQL of one page under a plan, selecting `columns` of `quotes`. Exported for tests. */
export function pageStatement(
  spec: PageSpec,
  plan: ListPlan,
  columns: readonly string[],
  count: number,
  driver: Driver | null = null,
): { sql: string; params: Param[] } {
  const { sort, offset, limit } = spec;
  const primary = sort[0] as SortKey;
  const select = `SELECT ${columns.map((c) => `quotes.${c}`).join(', ')} FROM`;
  const order = (keys: readonly SortKey[], prefix = '') =>
    keys.map(
      (k) => `${k.field === 'id' ? '' : prefix}quotes.${SORT_COLUMN[k.field]} ${k.direction.toUpperCase()}`,
    );
  if (plan === 'ordinal') {
    // `ord` is the rank of the id: the page is a range of it, found in the index.
    return primary.direction === 'asc'
      ? { sql: `${select} quotes WHERE ord >= ? ORDER BY ord LIMIT ?`, params: [offset, limit] }
      : {
          sql: `${select} quotes WHERE ord <= ? ORDER BY ord DESC LIMIT ?`,
          params: [count - 1 - offset, limit],
        };
  }
  const budgeted = (where: Where) =>
    where.sql === '' ? '' : ` WHERE ${WALK_BUDGET_FUNCTION}(quotes.id) AND ${where.conditions}`;
  if (plan === 'walk') {
    let from = 'quotes NOT INDEXED';
    if (primary.field !== 'id') {
      const tie = sort[1];
      const idDirection = tie?.field === 'id' ? tie.direction : primary.direction;
      from = `quotes INDEXED BY ${sortIndexName(primary.field, primary.direction, idDirection)}`;
    }
    const where = whereClause(spec.filters, spec.groups, null);
    return {
      sql: `${select} ${from}${budgeted(where)} ORDER BY ${order(sort).join(', ')} LIMIT ? OFFSET ?`,
      params: [...where.params, limit, offset],
    };
  }
  if (plan === 'entity') {
    // The entity's key index in order, filtered on the entity, then each one's quotes by id.
    const entity = entityOf(spec);
    if (entity === null)
      throw new Error('the entity plan needs an author or work sort under its own filters');
    const e = ENTITIES[entity];
    const from = `${e.table} AS e INDEXED BY ${e.index} CROSS JOIN quotes INDEXED BY quotes_${e.id} ON quotes.${e.id} = e.${e.id}`;
    const where = whereClause(spec.filters, spec.groups, null, entity);
    const orderBy = [`e.${e.key} ${primary.direction.toUpperCase()}`, ...order(sort.slice(1))].join(', ');
    return {
      sql: `${select} ${from}${budgeted(where)} ORDER BY ${orderBy} LIMIT ? OFFSET ?`,
      params: [...where.params, limit, offset],
    };
  }
  const where = whereClause(spec.filters, spec.groups, driver ?? firstConstraint(spec));
  // Unary + keeps the planner from walking a sort index instead of the driving filter's index.
  // The id stays bare: the driver's `(key, id)` index then yields id order for a single value.
  return {
    sql: `${select} quotes${where.sql} ORDER BY ${order(sort, '+').join(', ')} LIMIT ? OFFSET ?`,
    params: [...where.params, limit, offset],
  };
}

interface Where {
  /** `''` or ` WHERE …`. */
  sql: string;
  /** The conditions joined by AND, or `1` when there are none. */
  conditions: string;
  params: Param[];
}

/** The constraint whose index drives a statement: a filter, or the position of a group condition. */
export type Driver = FilterName | number;

/**
 * SQL conditions for the filters and group conditions. The `driver` is written so that its index
 * can find the matches (genre through `quote_genres`, `_like` through the word tables and the id
 * indexes); every other constraint is a check of a row already at hand, its column behind a
 * unary `+` so that SQLite cannot prefer its index (genre as a token of `genre_keys`, where a
 * driving `IN (SELECT …)` would first list every quote of the genre). With no driver, every
 * constraint is a row check (index walks).
 */
function whereClause(
  filters: Filters,
  groups: readonly GroupCondition[],
  driver: Driver | null,
  entity: Entity | null = null,
): Where {
  const conditions: string[] = [];
  const params: Param[] = [];
  const onEntity = (name: FilterName) =>
    entity !== null && (ENTITIES[entity].filters as readonly string[]).includes(name);
  // The entity plan checks the entity's filters on its own table (alias e).
  const ref = (driving: boolean, column: string, name?: FilterName) =>
    name !== undefined && onEntity(name) ? `e.${column}` : `${driving ? '' : '+'}quotes.${column}`;
  const inList = (left: string, values: readonly Param[]) => {
    conditions.push(values.length === 1 ? `${left} = ?` : `${left} IN (${marks(values.length)})`);
    params.push(...values);
  };
  for (const [i, group] of groups.entries()) inList(ref(driver === i, group.column), [group.value]);
  for (const [name, column] of EQUALITY_FILTERS) {
    const values = filters[name];
    if (values !== undefined && values.length > 0) inList(ref(driver === name, column, name), values);
  }
  if (nonEmpty(filters.genre)) {
    if (driver === 'genre') {
      const n = filters.genre.length;
      conditions.push(
        `quotes.id IN (SELECT quote_id FROM quote_genres WHERE genre_key ${n === 1 ? '= ?' : `IN (${marks(n)})`})`,
      );
      params.push(...filters.genre);
    } else {
      conditions.push(`(${filters.genre.map(() => 'instr(quotes.genre_keys, ?) > 0').join(' OR ')})`);
      params.push(...filters.genre.map(genreToken));
    }
  }
  for (const [name, table, column] of LIKE_FILTERS) {
    const alternatives = filters[name];
    if (alternatives === undefined || alternatives.length === 0) continue;
    conditions.push(
      `${ref(driver === name, column, name)} IN (${wordPrefixQuery(table, column, alternatives, params)})`,
    );
  }
  const joined = conditions.join(' AND ');
  return { sql: conditions.length === 0 ? '' : ` WHERE ${joined}`, conditions: joined || '1', params };
}

const EQUALITY_FILTERS: readonly [Exclude<FilterName, 'genre' | 'author_like' | 'work_like'>, string][] = [
  ['author', 'author_key'],
  ['work', 'work_key'],
  ['category', 'category_key'],
  ['author_id', 'author_id'],
  ['work_id', 'work_id'],
];
const LIKE_FILTERS: readonly ['author_like' | 'work_like', string, string][] = [
  ['author_like', 'author_words', 'author_id'],
  ['work_like', 'work_words', 'work_id'],
];

/**
 * Ids whose name has, for every word of one alternative, a word beginning with it: one index
 * range per word, INTERSECT within an alternative, UNION across alternatives. Compound operators
 * associate left to right, so each multi-word alternative is its own subquery.
 */
function wordPrefixQuery(table: string, idColumn: string, alternatives: string[][], params: Param[]): string {
  return alternatives
    .map((prefixes) => {
      const ranges = prefixes.map((prefix) => {
        params.push(prefix, prefix + PREFIX_END);
        return `SELECT ${idColumn} FROM ${table} WHERE word >= ? AND word < ?`;
      });
      return ranges.length === 1 ? ranges[0] : `SELECT ${idColumn} FROM (${ranges.join(' INTERSECT ')})`;
    })
    .join(' UNION ');
}

/** Columns of `quotes` read for a projection: the id (to find the text row), then hot fields. */
function hotColumns(fields: readonly QuoteField[]): string[] {
  return ['id', ...fields.filter((f) => f !== 'id' && HOT_FIELDS.has(f))];
}

function firstConstraint(spec: PageSpec): Driver | null {
  return spec.groups.length > 0 ? 0 : (FILTER_NAMES.find((name) => present(spec.filters[name])) ?? null);
}

function constrained(spec: PageSpec): boolean {
  return spec.groups.length > 0 || hasFilters(spec.filters);
}

function hasFilters(filters: Filters): boolean {
  return FILTER_NAMES.some((name) => present(filters[name]));
}

function onlyFilter(filters: Filters, only: keyof Filters): boolean {
  return FILTER_NAMES.every((name) => name === only || !present(filters[name]));
}

function present(values: readonly unknown[] | undefined): boolean {
  return values !== undefined && values.length > 0;
}

function nonEmpty<T>(values: T[] | undefined): values is T[] {
  return values !== undefined && values.length > 0;
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
      parts.push([...new Set(values as Param[])].sort());
    }
  }
  return JSON.stringify(parts);
}

function marks(n: number): string {
  return Array(n).fill('?').join(', ');
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

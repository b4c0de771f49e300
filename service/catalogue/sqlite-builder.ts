/**
 * The embedded catalogue's write side: builds a complete index file beside the live one and
 * renames it over the live path in one atomic step, so readers see the old file or the new one.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  type CatalogueBuilder,
  type CatalogueInfo,
  type CatalogueLogger,
  fold,
  type Quote,
  wordSet,
} from './port.ts';
import {
  CREATE_TABLES,
  createIndexStatements,
  genreTokens,
  META_COUNT,
  META_FORMAT,
  META_VERSION,
  SCHEMA_FORMAT,
} from './sqlite-schema.ts';

/** Quotes per write transaction: commits are rare however small the batches given to add(). */
const ROWS_PER_TRANSACTION = 50_000;
/** Page cache of the build connection, in KiB (negative cache_size). Also bounds the index sorter. */
const BUILD_CACHE_KIB = 32 * 1024;
/** Folded forms remembered: names, titles, categories and genres repeat across many quotes. */
const FOLD_CACHE_SIZE = 50_000;

export interface SqliteBuilderOptions {
  /** The live catalogue file; the build is written beside it and renamed over it on commit. */
  path: string;
  logger?: CatalogueLogger;
}

/**
 * Starts a build of a new catalogue file, in a temp file beside `path` (its directory is created
 * if missing). Memory stays flat however many quotes are added: rows go straight to the file
 * (journal off, synchronous off, big transactions, indexes built once at the end), and only the
 * ids of authors and works already seen (to write each one's name and words once) and a bounded
 * cache of folded strings are kept.
 */
export async function createSqliteBuilder(options: SqliteBuilderOptions): Promise<CatalogueBuilder> {
  const dir = dirname(options.path);
  mkdirSync(dir, { recursive: true });
  const prefix = `.${basename(options.path)}.`;
  removeStaleBuilds(dir, prefix, options.logger);
  const tempPath = join(dir, `${prefix}${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const db = new DatabaseSync(tempPath);
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
    throw error;
  }
  return new SqliteBuilder(db, tempPath, options.path, options.logger);
}

type State = 'open' | 'committed' | 'aborted';

class SqliteBuilder implements CatalogueBuilder {
  readonly #db: DatabaseSync;
  readonly #tempPath: string;
  readonly #path: string;
  readonly #logger: CatalogueLogger | undefined;
  readonly #insertQuote: StatementSync;
  readonly #insertText: StatementSync;
  readonly #insertGenre: StatementSync;
  readonly #insertAuthor: StatementSync;
  readonly #insertWork: StatementSync;
  readonly #insertAuthorWord: StatementSync;
  readonly #insertWorkWord: StatementSync;
  readonly #authors = new Set<number>();
  readonly #works = new Set<number>();
  readonly #folded = new Map<string, string>();
  #state: State = 'open';
  #count = 0;
  #inTransaction = 0;
  #lastId = Number.NEGATIVE_INFINITY;
  /** False once a quote arrives with a smaller id than the one before it. */
  #idOrdered = true;

  constructor(db: DatabaseSync, tempPath: string, path: string, logger: CatalogueLogger | undefined) {
    this.#db = db;
    this.#tempPath = tempPath;
    this.#path = path;
    this.#logger = logger;
    this.#insertQuote = db.prepare(`
      INSERT INTO quotes (id, ord, author_id, work_id, quote_length, category_key, genre_key, genre_keys,
        author_key, work_key, publish_date)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.#insertText = db.prepare(
      'INSERT INTO texts (id, author, work, category, genre, source, quote) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.#insertGenre = db.prepare('INSERT INTO quote_genres (genre_key, quote_id) VALUES (?, ?)');
    this.#insertAuthor = db.prepare('INSERT INTO authors (author_id, author_key) VALUES (?, ?)');
    this.#insertWork = db.prepare('INSERT INTO works (work_id, work_key) VALUES (?, ?)');
    this.#insertAuthorWord = db.prepare('INSERT OR IGNORE INTO author_words (word, author_id) VALUES (?, ?)');
    this.#insertWorkWord = db.prepare('INSERT OR IGNORE INTO work_words (word, work_id) VALUES (?, ?)');
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
    try {
      this.#flush();
      // Readers rely on `ord` following id order (id-sorted pages are `ord` ranges). Input in id
      // order, the usual case, already numbers them so; otherwise renumber once here.
      if (!this.#idOrdered) {
        this.#db.exec(`UPDATE quotes SET ord = ranked.n
          FROM (SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM quotes) AS ranked
          WHERE quotes.id = ranked.id`);
      }
      for (const sql of createIndexStatements()) this.#db.exec(sql);
      // Sampled statistics (analysis_limit) are enough for the planner and keep ANALYZE fast.
      this.#db.exec('PRAGMA analysis_limit = 2000; ANALYZE;');
      const meta = this.#db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      meta.run(META_FORMAT, SCHEMA_FORMAT);
      meta.run(META_VERSION, version);
      meta.run(META_COUNT, String(this.#count));
      // Readers open the file read-only: it must need no journal recovery and create no -wal/-shm
      // files beside the live path, so it leaves the build in the plain rollback-journal mode.
      this.#db.exec('PRAGMA journal_mode = DELETE;');
      this.#db.close();
      // synchronous=OFF wrote without flushing: flush once, before the rename makes it live.
      syncFile(this.#tempPath);
      renameSync(this.#tempPath, this.#path);
      syncDirectory(dirname(this.#path));
    } catch (error) {
      await this.abort();
      throw error;
    }
    this.#state = 'committed';
    const info = { version, count: this.#count };
    this.#logger?.info(
      { path: this.#path, ...info, finishMs: Math.round(performance.now() - started) },
      'sqlite catalogue committed',
    );
    return info;
  }

  async abort(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'aborted';
    if (this.#db.isOpen) this.#db.close();
    rmSync(this.#tempPath, { force: true });
  }

  #insert(quote: Quote): void {
    const genreKeys = [...new Set(quote.genre.map((g) => this.#fold(g)))];
    const authorKey = this.#fold(quote.author);
    const workKey = this.#fold(quote.work);
    this.#insertQuote.run(
      quote.id,
      this.#count,
      quote.author_id,
      quote.work_id,
      quote.quote_length,
      this.#fold(quote.category),
      this.#fold(quote.genre[0] ?? ''),
      genreTokens(genreKeys),
      authorKey,
      workKey,
      quote.publish_date,
    );
    this.#insertText.run(
      quote.id,
      quote.author,
      quote.work,
      quote.category,
      JSON.stringify(quote.genre),
      quote.source,
      quote.quote,
    );
    this.#count++;
    if (quote.id < this.#lastId) this.#idOrdered = false;
    this.#lastId = quote.id;
    for (const key of genreKeys) this.#insertGenre.run(key, quote.id);
    // author_id names one author and work_id one (work, author) (contract section 3, checked by
    // the indexer), so each id's words are written once.
    if (!this.#authors.has(quote.author_id)) {
      this.#authors.add(quote.author_id);
      this.#insertAuthor.run(quote.author_id, authorKey);
      for (const word of wordSet(quote.author)) this.#insertAuthorWord.run(word, quote.author_id);
    }
    if (!this.#works.has(quote.work_id)) {
      this.#works.add(quote.work_id);
      this.#insertWork.run(quote.work_id, workKey);
      for (const word of wordSet(quote.work)) this.#insertWorkWord.run(word, quote.work_id);
    }
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

/** Removes temp files of builds whose process is gone (a crash or a kill mid-build). */
function removeStaleBuilds(dir: string, prefix: string, logger: CatalogueLogger | undefined): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    rmSync(join(dir, name), { force: true });
    logger?.warn({ file: join(dir, name) }, 'removed the temp file of an interrupted sqlite build');
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

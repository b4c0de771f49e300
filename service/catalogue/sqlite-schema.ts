/**
 * The embedded catalogue's file format, shared by the builder (writer) and the reader.
 *
 * Design, and why:
 *
 * - `quotes` is narrow: ids, numbers and the keys computed at index time with port.ts `fold()`
 *   (`author_key`, `work_key`, `category_key`, `genre_key` = the folded FIRST genre, the sort key
 *   of `genre`, and `genre_keys` = every folded genre as a token string, for a per-row membership
 *   check). Everything a filter or a sort reads is here, so index walks and index builds touch
 *   about 80 bytes per quote. The display text (names as written, genre array as JSON, source,
 *   quote) lives in `texts`, read only for the rows of the page being returned.
 * - Stored folded keys compared with the default BINARY collation compare by Unicode code point,
 *   exactly as the contract asks, and SQLite never folds anything at query time.
 * - Every sort key has an index `(key, id)`: walking it yields the contract order with the id
 *   tie-breaker for free. Category and first genre, whose tie groups are huge, also have
 *   `(key, id DESC)`, whose backward walk is `key DESC, id ASC`; without it a descending sort
 *   would sort a whole group before returning its first row. (Other keys' groups are small.)
 * - `genre` filters match ANY element: `quote_genres (genre_key, quote_id)` lists them, a
 *   WITHOUT ROWID table, so it is its own index.
 * - `_like` uses word tables, `author_words (word, author_id)` and `work_words (word, work_id)`,
 *   filled with port.ts `words()`. "Every word of the value begins some word of the name" is, per
 *   value word, an index range `word >= p AND word < p || U+10FFFF` (every word starting with p
 *   sorts in that range; U+10FFFF is a noncharacter, never part of a word), INTERSECTed across
 *   the value's words and UNIONed across values, giving author or work ids. The tables are small:
 *   one row per distinct word of each author and work, not per quote. FTS5 was not chosen: its
 *   tokenizers define words and diacritic folding their own way (`ø`, NFKD compatibility forms,
 *   marks), so it could disagree with the contract and with the Meilisearch backend, whereas
 *   these tables are filled by the very functions the contract is written in.
 * - `authors (author_id, author_key)` and `works (work_id, work_key)`, indexed by key, let a
 *   sort by author (or work) under a filter on that same author (or work) walk the matching names
 *   in order and read each one's quotes, instead of walking every quote: such a filter selects
 *   whole runs of the sort order, which an evenly-spread estimate gets badly wrong.
 * - `ord` is the rank of the id (0..n-1) with a unique index: an unfiltered random pick is one
 *   index lookup, and an unfiltered page by id, however deep, is an index range, not an OFFSET
 *   skipping rows.
 * - `meta` holds the format, the catalogue version (a fresh unique string per build, which
 *   readers report and the HTTP layer mixes into ETags) and the count.
 */
import type { QuoteField, SortField } from './port.ts';

/** Bumped when the file layout changes; readers refuse other formats. */
export const SCHEMA_FORMAT = '2';

export const CREATE_TABLES = `
CREATE TABLE quotes (
  id INTEGER PRIMARY KEY,
  ord INTEGER NOT NULL,
  author_id INTEGER NOT NULL,
  work_id INTEGER NOT NULL,
  quote_length INTEGER NOT NULL,
  category_key TEXT NOT NULL,
  genre_key TEXT NOT NULL,
  genre_keys TEXT NOT NULL,
  author_key TEXT NOT NULL,
  work_key TEXT NOT NULL,
  publish_date TEXT NOT NULL
);
CREATE TABLE texts (
  id INTEGER PRIMARY KEY,
  author TEXT NOT NULL,
  work TEXT NOT NULL,
  category TEXT NOT NULL,
  genre TEXT NOT NULL,
  source TEXT NOT NULL,
  quote TEXT NOT NULL
);
CREATE TABLE authors (author_id INTEGER PRIMARY KEY, author_key TEXT NOT NULL);
CREATE TABLE works (work_id INTEGER PRIMARY KEY, work_key TEXT NOT NULL);
CREATE TABLE quote_genres (genre_key TEXT NOT NULL, quote_id INTEGER NOT NULL, PRIMARY KEY (genre_key, quote_id)) WITHOUT ROWID;
CREATE TABLE author_words (word TEXT NOT NULL, author_id INTEGER NOT NULL, PRIMARY KEY (word, author_id)) WITHOUT ROWID;
CREATE TABLE work_words (word TEXT NOT NULL, work_id INTEGER NOT NULL, PRIMARY KEY (word, work_id)) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`;

/** Quote fields stored in `quotes` (the rest are in `texts`). */
export const HOT_FIELDS: ReadonlySet<QuoteField> = new Set([
  'id',
  'author_id',
  'work_id',
  'publish_date',
  'quote_length',
]);

/** Stored column of each sort key. */
export const SORT_COLUMN: Record<SortField, string> = {
  id: 'id',
  author: 'author_key',
  author_id: 'author_id',
  work: 'work_key',
  work_id: 'work_id',
  category: 'category_key',
  genre: 'genre_key',
  publish_date: 'publish_date',
  quote_length: 'quote_length',
};

/** Sort keys with huge tie groups: they also get a `(key, id DESC)` index. */
export const DESC_INDEXED: ReadonlySet<SortField> = new Set(['category', 'genre']);

/**
 * Name of the index whose walk gives `field` in `direction` with ids in `idDirection` within
 * ties (backward walks included); the plain index when no such variant exists.
 */
export function sortIndexName(
  field: Exclude<SortField, 'id'>,
  direction: 'asc' | 'desc',
  idDirection: 'asc' | 'desc' = 'asc',
): string {
  return direction !== idDirection && DESC_INDEXED.has(field) ? `quotes_${field}_desc` : `quotes_${field}`;
}

/** Indexes, created after the bulk load (building them from sorted runs is much faster). */
export function createIndexStatements(): string[] {
  const statements = ['CREATE UNIQUE INDEX quotes_ord ON quotes (ord)'];
  for (const [field, column] of Object.entries(SORT_COLUMN) as [SortField, string][]) {
    if (field === 'id') continue;
    statements.push(`CREATE INDEX quotes_${field} ON quotes (${column}, id)`);
    if (DESC_INDEXED.has(field))
      statements.push(`CREATE INDEX quotes_${field}_desc ON quotes (${column}, id DESC)`);
  }
  statements.push('CREATE INDEX authors_key ON authors (author_key, author_id)');
  statements.push('CREATE INDEX works_key ON works (work_key, work_id)');
  return statements;
}

const TOKEN_SEPARATOR = '\u001f';
const TOKEN_ESCAPE = '\u001e';

/**
 * `genre_keys` of a quote: its folded genres as tokens between separators, so that membership
 * is one `instr(genre_keys, genreToken(g)) > 0`. Escaping keeps the separator out of every token
 * (and is injective), so a match can only be a whole token, whatever characters genres hold.
 */
export function genreTokens(foldedGenres: readonly string[]): string {
  return `${TOKEN_SEPARATOR}${foldedGenres.map(escapeToken).join(TOKEN_SEPARATOR)}${TOKEN_SEPARATOR}`;
}

/** The substring of `genre_keys` present exactly when the quote has the folded genre. */
export function genreToken(foldedGenre: string): string {
  return `${TOKEN_SEPARATOR}${escapeToken(foldedGenre)}${TOKEN_SEPARATOR}`;
}

function escapeToken(text: string): string {
  return text
    .replaceAll(TOKEN_ESCAPE, `${TOKEN_ESCAPE}${TOKEN_ESCAPE}`)
    .replaceAll(TOKEN_SEPARATOR, `${TOKEN_ESCAPE}\u001d`);
}

/** Exclusive upper bound suffix of a word-prefix range (see the module comment). */
export const PREFIX_END = '\u{10FFFF}';

export const META_VERSION = 'version';
export const META_COUNT = 'count';
export const META_FORMAT = 'format';

/**
 * The embedded catalogue's file format, shared by the builder (writer) and the reader.
 *
 * Design, and why:
 *
 * - Every filter (author, author_id, work, work_id, category, genre and the `_like` forms) and
 *   every sort key but `quote_length` and `id` reads a field that describes the work a quote comes
 *   from. A **profile** is one distinct combination of those fields: (author_id, folded author,
 *   work_id, folded work, folded category, folded genres, publish_date). A real catalogue has
 *   about one profile per work (40,000 for the generated million quotes), so anything a filter or
 *   a profile sort key needs is a question about a few thousand profiles, each of which knows its
 *   exact number of quotes. Nothing relies on that regularity for correctness: a catalogue where
 *   every quote has its own profile is served exactly, only with more memory.
 * - The reader holds the hot data in memory, as typed arrays loaded from the `columns` table
 *   (BLOBs of native little-endian arrays, built once by the indexer, so opening a file is a
 *   read of a few MB per 100,000 quotes, not a scan). Quotes are numbered by `ord`, their rank by
 *   id (0..n-1): per ord, its id, its profile and the rank of its length; per profile, the ords of
 *   its quotes (ascending), the rank of each sort key's value and its genre set. A rank is the
 *   position of a value among the distinct values of its key, ordered as the contract sorts them
 *   (folded text by Unicode code point, dates as strings, ids and lengths as numbers), so equal
 *   ranks are equal values and comparing ranks compares values. Dictionaries (JSON arrays and
 *   sorted id arrays) map ranks back to values and filter values to ranks.
 * - The display strings of author, work, category and genre (as written, the genre array as JSON)
 *   are part of the profile too: so a quote of a real catalogue carries only its own `source` and
 *   `quote` in `texts`, read by id for the quotes of a returned page.
 * - `_like` uses word indexes, one for authors and one for works, filled with port.ts `words()`:
 *   the distinct words of every name, sorted by code point (a JSON dictionary), each with the
 *   ranks of the authors (works) having it (CSR columns). "Every word of the value begins some
 *   word of the name" is, per value word p, the range of words from p up to p‖U+10FFFF (every
 *   word starting with p sorts there by code point; U+10FFFF is a noncharacter, never part of a
 *   word), intersected across the value's words and united across values. The indexes hold one
 *   entry per distinct word of each author and work, not per quote. SQLite's FTS5 was not chosen:
 *   its tokenizers define words and diacritic folding their own way (`ø`, NFKD compatibility
 *   forms, marks), so it could disagree with the contract and with the Meilisearch backend,
 *   whereas these indexes are filled by the very functions the contract is written in.
 * - `meta` holds the format, the catalogue version (a fresh unique string per build, which
 *   readers report and the HTTP layer mixes into ETags), the count and the byte order of the
 *   columns.
 */
import { SORT_FIELDS, type SortField } from '../port.ts';

/**
 * Full-text search (`q`, search.ts): the pairs of consecutive words of each quote's text in an
 * FTS5 table whose rowid is the quote's id, each pair one token ({@link pairToken}, ASCII letters,
 * which the `ascii` tokenizer keeps whole). It serves only the phrase group of relevance, which
 * needs the words' positions: k words side by side and in order are their k - 1 pairs side by side
 * and in order, and the list of a pair is far shorter than those of its words (a common word is
 * in most quotes, a pair of them in few), so a phrase reads little even where it is rare.
 * Matches, totals and the other groups come from the word index in memory (sqlite/text-index.ts),
 * and author and work words from the profiles. Contentless, without document sizes (nothing
 * ranks by BM25) and without prefix indexes (a phrase's last word is expanded into the words of
 * the index that begin with it).
 */
export const SEARCH_TABLE = 'search_pairs';
const CREATE_SEARCH_TABLE = `CREATE VIRTUAL TABLE ${SEARCH_TABLE} USING fts5(pairs, content='', columnsize=0, tokenize='ascii');`;

/**
 * The token of two consecutive words, from their {@link searchToken}s: joined by `q`, never one of
 * their letters, so the pairs whose first word is `a` and whose second begins with `b` are exactly
 * the tokens that begin with `pairToken(a, b)`.
 */
export const pairToken = (first: string, second: string): string => `${first}q${second}`;

/** The text of a quote's row of the search table: its pairs in order (none for one word). */
export function pairsText(tokens: readonly string[]): string {
  const pairs: string[] = [];
  for (let i = 0; i + 1 < tokens.length; i++)
    pairs.push(pairToken(tokens[i] as string, tokens[i + 1] as string));
  return pairs.join(' ');
}

/** Bumped when the file layout changes; readers refuse other formats. */
export const SCHEMA_FORMAT = '7';
/**
 * The format before `language` (4), and the one before the search table (3): refused, since no
 * quote of them could be answered whole; the message says to run the indexer.
 */
export const FORMATS_WITHOUT_LANGUAGE: ReadonlySet<string> = new Set(['3', '4']);
/**
 * The formats before the word index of the texts (5) and before the search table of word pairs
 * (6, whose search table held the words, which a rare phrase of common words read whole): read as
 * well, so that a service upgraded before its file is rebuilt keeps serving everything but `q`
 * (which answers 503 until the indexer runs).
 */
export const FORMATS_WITHOUT_SEARCH: ReadonlySet<string> = new Set(['5', '6']);

export const CREATE_TABLES = `
CREATE TABLE texts (id INTEGER PRIMARY KEY, source TEXT NOT NULL, quote TEXT NOT NULL);
CREATE TABLE columns (name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
${CREATE_SEARCH_TABLE}
`;

/** Sort keys whose value is a field of the profile (every key but `id` and `quote_length`). */
export type ProfileKey = Exclude<SortField, 'id' | 'quote_length'>;
export const PROFILE_KEYS: readonly ProfileKey[] = SORT_FIELDS.filter(
  (key): key is ProfileKey => key !== 'id' && key !== 'quote_length',
);

/**
 * Text dictionaries, stored as JSON arrays of strings: the distinct values of a sort key in rank
 * order; the distinct words of author names and work titles in code point order; and the
 * distinct display strings of author, work, category and genre (a JSON array), by code.
 */
export type TextDictionary =
  | 'author'
  | 'work'
  | 'category'
  | 'genre'
  | 'publish_date'
  | 'author_words'
  | 'work_words'
  | 'language'
  | DisplayField;
export type DisplayField = 'display_author' | 'display_work' | 'display_category' | 'display_genre';
export const DISPLAY_FIELDS: readonly DisplayField[] = [
  'display_author',
  'display_work',
  'display_category',
  'display_genre',
];
export const TEXT_DICTIONARIES: readonly TextDictionary[] = [
  'author',
  'work',
  'category',
  'genre',
  'publish_date',
  'author_words',
  'work_words',
  'language',
  ...DISPLAY_FIELDS,
];

/**
 * Typed-array columns and their element types. `rank_<key>` is, per profile, the rank of the
 * profile's value of that key (`genre`: of its first genre, the sort key). Per-ord columns have
 * n elements, per-profile ones P; `*_start` columns have one more, as CSR offsets.
 */
export const COLUMN_TYPES = {
  /** Per ord: the quote's id (ascending). */
  ids: Float64Array,
  /** Per ord: the quote's profile. */
  profile: Int32Array,
  /** Per ord: the rank of its quote_length in `lengths`. */
  length_rank: Int32Array,
  /** Ords ordered by (quote_length, id). */
  length_order: Int32Array,
  /** CSR: the ords of profile p are profile_ords[profile_start[p] .. profile_start[p + 1]), ascending. */
  profile_start: Int32Array,
  profile_ords: Int32Array,
  rank_author: Int32Array,
  rank_author_id: Int32Array,
  rank_work: Int32Array,
  rank_work_id: Int32Array,
  rank_category: Int32Array,
  rank_genre: Int32Array,
  rank_publish_date: Int32Array,
  /** Per profile: the code of its display strings in the `display_*` dictionaries. */
  display_author: Int32Array,
  display_work: Int32Array,
  display_category: Int32Array,
  display_genre: Int32Array,
  /** CSR: the distinct genre ranks of profile p (any-element genre filters). */
  genre_set_start: Int32Array,
  genre_set: Int32Array,
  /** CSR: the author_id ranks of the authors whose name has word w of `author_words`. */
  author_word_start: Int32Array,
  author_word_ranks: Int32Array,
  /** CSR: the work_id ranks of the works whose title has word w of `work_words`. */
  work_word_start: Int32Array,
  work_word_ranks: Int32Array,
  /** Distinct author ids, work ids and quote lengths, ascending: the dictionaries of their ranks. */
  author_ids: Float64Array,
  work_ids: Float64Array,
  lengths: Float64Array,
  /**
   * Per profile: the rank of its language code in the `language` dictionary (codes ascending).
   * A profile field, though no sort key: codes are their own folded and display form.
   */
  rank_language: Int32Array,
} as const;
export type ColumnName = keyof typeof COLUMN_TYPES;
export type Columns = {
  [K in ColumnName]: (typeof COLUMN_TYPES)[K] extends Float64ArrayConstructor ? Float64Array : Int32Array;
};
/** The per-profile rank column of each profile sort key. */
export type RankColumn = `rank_${ProfileKey}`;

/** Name, in `columns`, of a text dictionary's JSON array. */
export function dictionaryColumn(name: TextDictionary): string {
  return `dictionary_${name}`;
}

/** Name of the per-profile rank column of a profile sort key. */
export function rankColumn(key: ProfileKey): RankColumn {
  return `rank_${key}`;
}

/** Exclusive upper bound suffix of a word-prefix range (see the module comment). */
export const PREFIX_END = '\u{10FFFF}';

export const META_VERSION = 'version';
export const META_COUNT = 'count';
export const META_FORMAT = 'format';
/** `LE` or `BE`: the columns are native arrays, readable only on a machine of the same order. */
export const META_ENDIANNESS = 'endianness';

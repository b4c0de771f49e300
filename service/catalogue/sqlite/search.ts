/**
 * Full-text search (`q`) on the embedded catalogue; the rules themselves are in search.ts.
 *
 * Matches are bit sets over the ords, one pass per word of the query: the quotes whose text holds
 * the word (or, for the last word, a word beginning with it), from the word index in memory
 * (sqlite/text-index.ts), and those whose author or work has it, from the profiles and the word
 * indexes of `_like` (sqlite/query.ts). Intersected across the words they give the matches
 * (`all`) and the matches through the text alone (`text`), so a total is a count of bits and a
 * page of a relevance group a walk to its first bits: no request reads every match of a common
 * word from the file. The other filters are one more bit set.
 *
 * Only the first relevance group (the words side by side and in order in the text) needs the
 * words' positions: it is read from the FTS5 table of word pairs of the file (sqlite/schema.ts)
 * in id order, and only as far as the page needs (all of it only when the page lies beyond it).
 * Its query carries pair tokens in double quotes (ASCII letters: nothing to escape), the last
 * word expanded into the words of the index that begin with it.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { SortKey } from '../port.ts';
import { searchToken } from '../search.ts';
import { type CatalogueColumns, type Selection, type Strategies, selectionOf } from './query.ts';
import { pairsText, pairToken, SEARCH_TABLE } from './schema.ts';
import {
  appendRange,
  BITMAP_SHARE,
  bitmapWords,
  hasBit,
  ordsOf,
  popcount,
  popcountUpTo,
  type TextIndex,
} from './text-index.ts';

/**
 * A phrase's last word is expanded into at most this many words of the index (an OR of
 * phrases, which FTS5 reads lazily in id order); a shorter prefix is left to FTS5's own prefix
 * query, which reads every word beginning with it.
 */
const MAX_EXPANDED_WORDS = 64;

/**
 * An author or work word of at least one quote in {@link BITMAP_SHARE} has its quotes as a bit
 * set, made when the file is opened: otherwise each search of a word of many titles ("the")
 * sets one bit per quote of every profile having it (half of them at a million quotes). At most
 * this many, the commonest first: n / 8 bytes each.
 */
const MAX_PROFILE_WORD_BITMAPS = 64;
const PROFILE_WORD_KINDS = ['author', 'work'] as const;

/** Searches one catalogue file. */
export class SqliteSearch {
  readonly #columns: CatalogueColumns;
  readonly #index: TextIndex;
  readonly #phrase: StatementSync;
  /** Scratch bit sets over the ords: calls are synchronous, so one set of them serves every search. */
  readonly #all: Int32Array;
  readonly #text: Int32Array;
  readonly #word: Int32Array;
  readonly #meta: Int32Array;
  /** The bit sets of the commonest author and work words, by position of the word. */
  readonly #profileWordBits: Record<'author' | 'work', Map<number, Int32Array>>;

  constructor(db: DatabaseSync, columns: CatalogueColumns, index: TextIndex) {
    if (index.count !== columns.count) {
      throw new Error(`the text index holds ${index.count} quotes, the columns ${columns.count}`);
    }
    this.#columns = columns;
    this.#index = index;
    this.#phrase = db.prepare(
      `SELECT rowid FROM ${SEARCH_TABLE} WHERE ${SEARCH_TABLE} MATCH ? ORDER BY rowid`,
    );
    this.#phrase.setReturnArrays(true);
    this.#phrase.setReadBigInts(false);
    const size = bitmapWords(columns.count);
    this.#all = new Int32Array(size);
    this.#text = new Int32Array(size);
    this.#word = new Int32Array(size);
    this.#meta = new Int32Array(size);
    this.#profileWordBits = commonProfileWords(columns);
  }

  /** Ords (ascending) of the quotes of `selection` that match `words`. */
  matches(words: readonly string[], selection: Selection): Int32Array {
    this.#compute(words, selection);
    return ordsOf(this.#all);
  }

  /** One page of the matches in `sort` order (ending with the id key), and their number. */
  page(
    words: readonly string[],
    selection: Selection,
    sort: readonly SortKey[],
    offset: number,
    limit: number,
    strategies: Strategies,
  ): { ords: number[]; total: number } {
    const all = this.matches(words, selection);
    return { ords: this.#columns.page(selectionOf(all), sort, offset, limit, strategies), total: all.length };
  }

  /**
   * One page of the matches in relevance order (search.ts): the phrase group, the rest of the
   * text group, then the matches through author or work alone, each by id; and their number.
   */
  rankedPage(
    words: readonly string[],
    selection: Selection,
    offset: number,
    limit: number,
  ): { ords: number[]; total: number } {
    this.#compute(words, selection);
    const all = this.#all;
    const text = this.#text;
    const total = popcount(all);
    const ords: number[] = [];
    if (offset >= total) return { ords, total };
    // Exact only when the page reaches past the text group; a first page stops counting early.
    const inText = popcountUpTo(text, offset + limit);
    if (offset + limit > inText) {
      // The page reaches the third group: the matches whose text lacks a word.
      for (let i = 0; i < all.length; i++) all[i] = (all[i] as number) & ~(text[i] as number);
    }
    if (offset >= inText) {
      appendRange(all, offset - inText, limit, ords);
      return { ords, total };
    }
    let skip = offset;
    if (words.length > 1) {
      const phrase = this.#phraseOrds(words, offset + limit);
      for (let i = skip; i < phrase.length && ords.length < limit; i++) ords.push(phrase[i] as number);
      if (ords.length === limit) return { ords, total };
      // The whole phrase group was read: the rest of the text group follows it.
      skip = Math.max(0, skip - phrase.length);
      for (const ord of phrase) text[ord >>> 5] = (text[ord >>> 5] as number) & ~(1 << (ord & 31));
    }
    appendRange(text, skip, limit - ords.length, ords);
    if (ords.length < limit) appendRange(all, 0, limit - ords.length, ords);
    return { ords, total };
  }

  /**
   * Leaves in `#all` the matches of `words` among the selection and in `#text` those whose text
   * holds every word.
   */
  #compute(words: readonly string[], selection: Selection): void {
    const all = this.#all;
    const text = this.#text;
    const n = all.length;
    const last = words.length - 1;
    for (const [i, w] of words.entries()) {
      const prefix = i === last;
      const bits = this.#textBits(w, prefix);
      const meta = this.#profileBits(w, prefix);
      if (i === 0) {
        if (bits === null) text.fill(0);
        else text.set(bits);
        if (meta === null) all.set(text);
        else if (bits === null) all.set(meta);
        else for (let j = 0; j < n; j++) all[j] = (bits[j] as number) | (meta[j] as number);
      } else if (bits === null) {
        text.fill(0);
        if (meta === null) all.fill(0);
        else for (let j = 0; j < n; j++) all[j] = (all[j] as number) & (meta[j] as number);
      } else if (meta === null) {
        for (let j = 0; j < n; j++) {
          const b = bits[j] as number;
          text[j] = (text[j] as number) & b;
          all[j] = (all[j] as number) & b;
        }
      } else {
        for (let j = 0; j < n; j++) {
          const b = bits[j] as number;
          text[j] = (text[j] as number) & b;
          all[j] = (all[j] as number) & (b | (meta[j] as number));
        }
      }
    }
    if (selection.ords === undefined && selection.profiles === null) return;
    // The other filters, as one more bit set.
    const word = this.#word;
    const { start, ords } = this.#columns.profileRuns();
    word.fill(0);
    if (selection.lengths !== undefined) {
      this.#columns.forEachInLengths(selection, (ord) => {
        word[ord >>> 5] = (word[ord >>> 5] as number) | (1 << (ord & 31));
      });
    } else if (selection.ords !== undefined) {
      for (const ord of selection.ords) word[ord >>> 5] = (word[ord >>> 5] as number) | (1 << (ord & 31));
    } else {
      for (const profile of selection.profiles as Int32Array) setProfile(word, start, ords, profile);
    }
    for (let j = 0; j < n; j++) {
      const bits = word[j] as number;
      text[j] = (text[j] as number) & bits;
      all[j] = (all[j] as number) & bits;
    }
  }

  /**
   * The quotes whose text holds `word` (with `prefix`, a word beginning with it): a bit set of
   * the index itself when one word of it is, else `#word`; null when none does. Read only.
   */
  #textBits(word: string, prefix: boolean): Int32Array | null {
    const index = this.#index;
    const [from, to] = index.wordRange(word, prefix);
    if (from >= to) return null;
    const own = index.bitmap(from);
    if (to - from === 1 && own !== null) return own;
    const bits = this.#word;
    if (own === null) bits.fill(0);
    else bits.set(own);
    for (let at = own === null ? from : from + 1; at < to; at++) index.orInto(bits, at);
    return bits;
  }

  /**
   * The quotes whose author name or work title has `word` (with `prefix`, a word beginning with
   * it): a bit set of {@link #profileWordBits} when one word of it is, else `#meta`; null when
   * no author or work has it. Read only.
   */
  #profileBits(word: string, prefix: boolean): Int32Array | null {
    const columns = this.#columns;
    const meta = this.#meta;
    const { start, ords } = columns.profileRuns();
    let out: Int32Array | null = null;
    for (const kind of PROFILE_WORD_KINDS) {
      const [from, to] = columns.profileWordRange(kind, word, prefix);
      const held = this.#profileWordBits[kind];
      for (let at = from; at < to; at++) {
        const bits = held.get(at);
        if (out === null && bits !== undefined) {
          out = bits;
          continue;
        }
        if (out !== meta) {
          if (out === null) meta.fill(0);
          else meta.set(out);
          out = meta;
        }
        if (bits !== undefined) {
          for (let j = 0; j < meta.length; j++) meta[j] = (meta[j] as number) | (bits[j] as number);
        } else {
          columns.forEachProfileOfWord(kind, at, (profile) => setProfile(meta, start, ords, profile));
        }
      }
    }
    return out;
  }

  /**
   * The ords of the phrase group (in `#text`, so among the selection), ascending, read from FTS5
   * until `wanted` are found or the group ends.
   */
  #phraseOrds(words: readonly string[], wanted: number): number[] {
    const out: number[] = [];
    const match = this.#phraseExpression(words);
    if (match === null) return out;
    const text = this.#text;
    for (const row of this.#phrase.iterate(match) as Iterable<unknown[]>) {
      const ord = this.#columns.ordOf(row[0] as number);
      if (ord < 0 || !hasBit(text, ord)) continue;
      out.push(ord);
      if (out.length >= wanted) break;
    }
    return out;
  }

  /**
   * The FTS5 query of the words side by side and in order in the text, or null when none can be:
   * their pairs side by side and in order (schema.ts), the last pair's second word expanded.
   */
  #phraseExpression(words: readonly string[]): string | null {
    const tokens = words.map(searchToken);
    const last = tokens.length - 1;
    const [from, to] = this.#index.wordRange(words[last] as string, true);
    if (from >= to) return null;
    const pairs = pairsText(tokens.slice(0, last));
    const head = pairs === '' ? '' : `${pairs} `;
    const before = tokens[last - 1] as string;
    if (to - from > MAX_EXPANDED_WORDS)
      return `pairs : "${head}${pairToken(before, tokens[last] as string)}"*`;
    const phrases: string[] = [];
    for (let at = from; at < to; at++) {
      phrases.push(`"${head}${pairToken(before, searchToken(this.#index.word(at)))}"`);
    }
    return `pairs : (${phrases.join(' OR ')})`;
  }
}

/** Bit sets of the quotes of the commonest author and work words (see {@link MAX_PROFILE_WORD_BITMAPS}). */
function commonProfileWords(columns: CatalogueColumns): Record<'author' | 'work', Map<number, Int32Array>> {
  const common: { kind: 'author' | 'work'; at: number; quotes: number }[] = [];
  for (const kind of PROFILE_WORD_KINDS) {
    for (let at = 0; at < columns.profileWordCount(kind); at++) {
      const quotes = columns.quotesOfProfileWord(kind, at);
      if (quotes > 0 && quotes * BITMAP_SHARE >= columns.count) common.push({ kind, at, quotes });
    }
  }
  common.sort((a, b) => b.quotes - a.quotes);
  const { start, ords } = columns.profileRuns();
  const out = { author: new Map<number, Int32Array>(), work: new Map<number, Int32Array>() };
  for (const { kind, at } of common.slice(0, MAX_PROFILE_WORD_BITMAPS)) {
    const bits = new Int32Array(bitmapWords(columns.count));
    columns.forEachProfileOfWord(kind, at, (profile) => setProfile(bits, start, ords, profile));
    out[kind].set(at, bits);
  }
  return out;
}

/** Sets the bits of a profile's quotes. */
function setProfile(bits: Int32Array, start: Int32Array, ords: Int32Array, profile: number): void {
  for (let i = start[profile] as number; i < (start[profile + 1] as number); i++) {
    const ord = ords[i] as number;
    bits[ord >>> 5] = (bits[ord >>> 5] as number) | (1 << (ord & 31));
  }
}

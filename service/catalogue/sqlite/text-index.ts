/**
 * The word index of the quotes' texts, held in memory: for each distinct word of the texts (the
 * contract's words, port.ts `words()`), the quotes whose text holds it. Full-text search (`q`,
 * sqlite/search.ts) answers its matches, totals and relevance groups from it with a few passes
 * over bit sets, instead of reading every matching row of the FTS5 table for each request (a
 * common word is in most quotes).
 *
 * A word held by at least one quote in {@link BITMAP_SHARE} is a bit set over the ords (n / 8
 * bytes); a rarer one, the ascending list of its ords (4 bytes each): whichever is smaller. For
 * the generated million quotes (682 distinct words, 27 per quote) that is about 40 MB.
 *
 * Written by the builder (sqlite/builder.ts) as rows of the `columns` table:
 * `dictionary_text_words` (the words in code point order, so that the words beginning with a
 * prefix are one run), `text_word_start` / `text_word_ords` (CSR lists of ords, empty for a
 * word held as a bit set), `text_word_bitmap` (per word, the number of its bit set, or -1) and
 * one row `text_bitmap_<k>` per bit set.
 */
import { findFirst } from './arrays.ts';
import { PREFIX_END } from './schema.ts';

/** A word held by at least one quote in this many is held as a bit set (4 bytes per ord vs n / 8). */
export const BITMAP_SHARE = 32;

export const TEXT_WORDS_COLUMN = 'dictionary_text_words';
export const TEXT_WORD_START = 'text_word_start';
export const TEXT_WORD_ORDS = 'text_word_ords';
export const TEXT_WORD_BITMAP = 'text_word_bitmap';
export const textBitmapColumn = (k: number): string => `text_bitmap_${k}`;

/** Number of 32-bit words of a bit set over n quotes. */
export const bitmapWords = (n: number): number => (n + 31) >>> 5;

/** The index as the builder hands it to the file. */
export interface TextIndexColumns {
  words: string[];
  start: Int32Array;
  ords: Int32Array;
  bitmapOf: Int32Array;
  bitmaps: Int32Array[];
}

export class TextIndex {
  readonly #words: string[];
  readonly #start: Int32Array;
  readonly #ords: Int32Array;
  readonly #bitmapOf: Int32Array;
  readonly #bitmaps: Int32Array[];
  readonly #n: number;

  /** Checks that the columns fit together and n quotes; throws on an inconsistent file. */
  constructor(columns: TextIndexColumns, n: number) {
    const { words, start, ords, bitmapOf, bitmaps } = columns;
    const expect = (ok: boolean, what: string) => {
      if (!ok) throw new Error(`inconsistent catalogue columns: ${what}`);
    };
    const w = words.length;
    expect(
      start.length === w + 1 && start[0] === 0 && start[w] === ords.length,
      'text_word_start is malformed',
    );
    for (let i = 0; i < w; i++) {
      expect((start[i] as number) <= (start[i + 1] as number), 'text_word_start is not ascending');
    }
    for (const ord of ords) expect(ord >= 0 && ord < n, 'text_word_ords is out of range');
    expect(bitmapOf.length === w, 'text_word_bitmap does not match the words');
    for (const k of bitmapOf) expect(k >= -1 && k < bitmaps.length, 'text_word_bitmap is out of range');
    for (const bitmap of bitmaps)
      expect(bitmap.length === bitmapWords(n), 'a text bit set has the wrong size');
    this.#words = words;
    this.#start = start;
    this.#ords = ords;
    this.#bitmapOf = bitmapOf;
    this.#bitmaps = bitmaps;
    this.#n = n;
  }

  /** Number of quotes the index covers. */
  get count(): number {
    return this.#n;
  }

  /**
   * The run of words equal to `word`, or, with `prefix`, beginning with it: [from, to) in code
   * point order (empty when none).
   */
  wordRange(word: string, prefix: boolean): [number, number] {
    const from = findFirst(this.#words, word);
    if (prefix) return [from, findFirst(this.#words, word + PREFIX_END)];
    return [from, this.#words[from] === word ? from + 1 : from];
  }

  /** The word at a position of the code point order. */
  word(at: number): string {
    return this.#words[at] as string;
  }

  /** The bit set of the quotes whose text holds the word at position `at`, if it is held as one. */
  bitmap(at: number): Int32Array | null {
    const k = this.#bitmapOf[at] as number;
    return k >= 0 ? (this.#bitmaps[k] as Int32Array) : null;
  }

  /** Sets in `bits` the quotes whose text holds the word at position `at`. */
  orInto(bits: Int32Array, at: number): void {
    const k = this.#bitmapOf[at] as number;
    if (k >= 0) {
      const set = this.#bitmaps[k] as Int32Array;
      for (let i = 0; i < bits.length; i++) bits[i] = (bits[i] as number) | (set[i] as number);
      return;
    }
    const ords = this.#ords;
    for (let i = this.#start[at] as number; i < (this.#start[at + 1] as number); i++) {
      const ord = ords[i] as number;
      bits[ord >>> 5] = (bits[ord >>> 5] as number) | (1 << (ord & 31));
    }
  }
}

/** Reads the index from the `columns` rows of a file, or throws when they are missing or malformed. */
export function loadTextIndex(arrays: ReadonlyMap<string, Uint8Array | string>, n: number): TextIndex {
  const int32 = (name: string): Int32Array => {
    const bytes = arrays.get(name);
    if (!(bytes instanceof Uint8Array) || bytes.byteLength % 4 !== 0) {
      throw new Error(`the column ${name} is missing or malformed`);
    }
    const own = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
    return new Int32Array(own.buffer as ArrayBuffer, own.byteOffset, own.byteLength / 4);
  };
  const json = arrays.get(TEXT_WORDS_COLUMN);
  const words: unknown = typeof json === 'string' ? JSON.parse(json) : undefined;
  if (!Array.isArray(words) || !words.every((v) => typeof v === 'string')) {
    throw new Error('the dictionary text_words is missing or malformed');
  }
  const bitmapOf = int32(TEXT_WORD_BITMAP);
  let count = 0;
  for (const k of bitmapOf) count = Math.max(count, k + 1);
  const bitmaps: Int32Array[] = [];
  for (let k = 0; k < count; k++) bitmaps.push(int32(textBitmapColumn(k)));
  return new TextIndex(
    { words, start: int32(TEXT_WORD_START), ords: int32(TEXT_WORD_ORDS), bitmapOf, bitmaps },
    n,
  );
}

/**
 * Number of set bits of a bit set. Without a test for empty words: where they come and go at
 * random (a search's matches), the mispredicted branch cost three times the count it spared.
 */
export function popcount(bits: Int32Array): number {
  let total = 0;
  for (let i = 0; i < bits.length; i++) total += bitCount(bits[i] as number);
  return total;
}

/** Number of set bits of a bit set, or `limit` if there are at least that many (counted from the start). */
export function popcountUpTo(bits: Int32Array, limit: number): number {
  let total = 0;
  for (let i = 0; i < bits.length && total < limit; i++) total += bitCount(bits[i] as number);
  return Math.min(total, limit);
}

/** Number of set bits of one 32-bit word. */
function bitCount(word: number): number {
  let x = word;
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** The set bits of `bits` in ascending order, as ords. */
export function ordsOf(bits: Int32Array, count: number = popcount(bits)): Int32Array {
  const out = new Int32Array(count);
  let found = 0;
  for (let i = 0; i < bits.length; i++) {
    let x = bits[i] as number;
    while (x !== 0) {
      const low = x & -x;
      out[found++] = (i << 5) | (31 - Math.clz32(low));
      x ^= low;
    }
  }
  return out;
}

/**
 * Appends to `out` the set bits at positions [skip, skip + take) of `bits` in ascending order,
 * skipping whole words by their counts. Returns how many were appended.
 */
export function appendRange(bits: Int32Array, skip: number, take: number, out: number[]): number {
  let left = skip;
  let added = 0;
  for (let i = 0; i < bits.length && added < take; i++) {
    let x = bits[i] as number;
    if (x === 0) continue;
    if (left > 0) {
      const c = bitCount(x);
      if (c <= left) {
        left -= c;
        continue;
      }
    }
    while (x !== 0 && added < take) {
      const low = x & -x;
      x ^= low;
      if (left > 0) {
        left--;
        continue;
      }
      out.push((i << 5) | (31 - Math.clz32(low)));
      added++;
    }
  }
  return added;
}

/** Whether the bit of `ord` is set. */
export function hasBit(bits: Int32Array, ord: number): boolean {
  return ((bits[ord >>> 5] as number) & (1 << (ord & 31))) !== 0;
}

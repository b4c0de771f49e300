/**
 * Full-text search (`q`), the part every backend shares: what a query is, which quotes it
 * matches, how they rank, and the encodings the backends store so that their engines keep the
 * contract's words exactly.
 *
 * Matching, in the contract's folded words (port.ts {@link words}): every word of `q` equals a
 * word of the quote's text, its author or its work; the last word may instead be the beginning
 * of such a word (search as you type). No typo tolerance. It ANDs with every other filter.
 *
 * Relevance (with `q` and no `sort` or `order`): the matches come in three groups, each complete
 * before the next begins.
 *   1. Quotes whose text holds the words of `q` side by side and in the order given (the last one
 *      possibly as the beginning of a word).
 *   2. The other quotes whose text holds every word of `q`.
 *   3. The quotes that match only with words of their author or work.
 * Groups 1 and 2 together come before group 3 on both engines, exactly. The embedded engine
 * orders each group by id; Meilisearch orders groups 1 and 2 by its own proximity ranking (words
 * closer together and in order first), which puts every quote of group 1 first except where a
 * text holds each pair of consecutive words side by side in separate places, and group 3 by the
 * same ranking over author, work and text.
 *
 * Why encoded words: an engine's tokenizer defines words its own way (it splits CJK runs with a
 * dictionary, folds `ø`, `æ`, `ß`, keeps or drops apostrophes), so the indexes are fed the
 * contract's words written with 16 ASCII letters ({@link searchToken}): each engine keeps such a
 * token whole and unchanged, equal words give equal tokens, and a word begins with a prefix
 * exactly when its token begins with the prefix's token.
 */
import { createHash } from 'node:crypto';
import { codePointLength, QueryError, words } from './port.ts';

/** Most words a query may hold (Meilisearch reads only the first ten words of a query). */
export const MAX_QUERY_WORDS = 10;
/** Longest word of a query, in characters (code points); see {@link searchKey}. */
export const MAX_QUERY_WORD_LENGTH = 64;

/**
 * The words of `q`, folded as the contract folds them. Throws {@link QueryError} for a value
 * with no letter or digit, more than {@link MAX_QUERY_WORDS} words, or a word longer than
 * {@link MAX_QUERY_WORD_LENGTH} characters. (Empty and over-long values are refused before, as
 * for every parameter.)
 */
export function parseSearch(value: string): string[] {
  const found = words(value);
  if (found.length === 0) {
    throw new QueryError(
      'q',
      `q must contain at least one letter or digit, got '${value.length <= 40 ? value : `${value.slice(0, 40)}…`}'`,
    );
  }
  if (found.length > MAX_QUERY_WORDS) {
    throw new QueryError('q', `q accepts at most ${MAX_QUERY_WORDS} words, got ${found.length}`);
  }
  for (const word of found) {
    const length = codePointLength(word);
    if (length > MAX_QUERY_WORD_LENGTH) {
      throw new QueryError(
        'q',
        `each word of q must be at most ${MAX_QUERY_WORD_LENGTH} characters, got one of ${length}`,
      );
    }
  }
  return found;
}

const LETTERS = 'abcdefghijklmnop';

/**
 * A word written with the letters a to p, two per UTF-8 byte (high nibble first). Injective, and
 * prefix-preserving both ways: a word starts with `p` exactly when its token starts with p's
 * token (UTF-8 bytes of whole characters, two letters per byte).
 */
export function searchToken(word: string): string {
  const bytes = Buffer.from(word, 'utf8');
  let out = '';
  for (const byte of bytes) out += LETTERS[byte >> 4] + (LETTERS[byte & 15] as string);
  return out;
}

/**
 * Meilisearch skips a word of over 255 bytes at indexing and at search time: a longer token is
 * replaced by `q` (never one of the sixteen letters) and a digest written with the same letters,
 * so that equal long words still give equal tokens.
 */
const MAX_ENGINE_TOKEN = 250;
export function engineToken(word: string): string {
  const token = searchToken(word);
  if (token.length <= MAX_ENGINE_TOKEN) return token;
  let digest = '';
  for (const byte of createHash('sha256').update(word).digest()) {
    digest += LETTERS[byte >> 4] + (LETTERS[byte & 15] as string);
  }
  return `q${digest}`;
}

/**
 * The facet value Meilisearch filters a word by. A word of up to {@link MAX_QUERY_WORD_LENGTH}
 * characters is itself (letters and digits only, at most 256 bytes); a longer one is its first
 * {@link MAX_QUERY_WORD_LENGTH} characters, `~` and a digest. So `=` with a query word (never
 * longer, never holding `~`) matches exactly the equal word, and `STARTS WITH` a query word
 * matches exactly the words that begin with it, while every value stays far under the engine's
 * 468-byte facet limit.
 */
export function searchKey(word: string): string {
  if (word.length <= MAX_QUERY_WORD_LENGTH || codePointLength(word) <= MAX_QUERY_WORD_LENGTH) return word;
  const head = Array.from(word).slice(0, MAX_QUERY_WORD_LENGTH).join('');
  return `${head}~${createHash('sha256').update(word).digest('hex')}`;
}
